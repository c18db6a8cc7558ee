"""A host made ready for the conversations a command is about to run."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._host import Host


async def ready_for_runs(host: Host) -> None:
    """Do now, before the first request, what the first conversation's first rounds would
    otherwise pay for: make the host's adapter (its imports and the transport take a few hundred
    milliseconds), and when the host has tools, load the schema compiler and RE2 and start the
    worker thread sync tools run in (the thread pool's import and the thread's start, a few
    milliseconds in the round of the first call). A provider that cannot be made is left for the
    run to report.

    The tools' validators are not compiled here: a tool's is compiled at its first call, as a
    host with many tools would otherwise pay for every one of them at each start (what only a
    process's first compilation costs is paid by ``load_compiler``).
    """
    from ..tools._validation import load_compiler
    from ._host import HostError

    with contextlib.suppress(HostError):
        await host.get_adapter()
    if host.tools:
        load_compiler()
        await asyncio.get_running_loop().run_in_executor(None, _nothing)


def _nothing() -> None:
    return None
