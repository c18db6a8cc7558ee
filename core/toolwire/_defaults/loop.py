"""The built-in loop as the default implementation of ``toolwire_loop``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._markers import hookimpl

if TYPE_CHECKING:
    from .. import Host
    from ..loop import ToolCallingLoop


@hookimpl(trylast=True)
def toolwire_loop(host: Host) -> ToolCallingLoop:
    """The built-in :class:`~toolwire.loop.ToolCallingLoop`."""
    from ..loop import ToolCallingLoop

    return ToolCallingLoop(host)
