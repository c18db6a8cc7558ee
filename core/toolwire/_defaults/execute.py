"""Default plugin: execute a tool call by invoking the tool with its validated arguments."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from .._markers import hookimpl

if TYPE_CHECKING:
    from .._messages import ToolCall
    from ..tools import ToolContext, ToolResult


@hookimpl(trylast=True)
def toolwire_execute_tool(call: ToolCall, context: ToolContext) -> Awaitable[ToolResult]:
    """``context.tool.invoke(call.arguments, context)``: sync tools run in a worker thread and
    exceptions become error results (see :meth:`toolwire.Tool.invoke`)."""
    return context.tool.invoke(call.arguments or {}, context)
