"""Containing what a plugin's hook raises: whether it is the task's real cancellation, and which
plugin raised it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pluggy


def is_cancellation(exc: BaseException) -> bool:
    """True when ``exc`` is the cancellation of the running task (a real Ctrl-C under
    ``asyncio.run`` arrives so): the one exception a hook's failure must let through.

    A ``CancelledError`` a plugin raises itself, without its task being cancelled, is that
    plugin's failure like any other.
    """
    if not isinstance(exc, asyncio.CancelledError):
        return False
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop: nothing to cancel
        return False
    return task is not None and task.cancelling() > 0


def raised_by(exc: BaseException, impls: Iterable[pluggy.HookImpl]) -> str | None:
    """The name of the plugin whose implementation raised ``exc``: the innermost frame of its
    traceback that belongs to one of ``impls`` (None when none does)."""
    owners = {}
    for impl in impls:
        code = getattr(impl.function, "__code__", None)
        if code is not None:
            owners[code] = impl.plugin_name
    found = None
    tb = exc.__traceback__
    while tb is not None:
        found = owners.get(tb.tb_frame.f_code, found)
        tb = tb.tb_next
    return found
