"""Default plugin: execute a tool call by invoking the tool with its validated arguments."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from .._markers import hookimpl

if TYPE_CHECKING:
    from ..messages import ToolCall
    from ..tools import ToolContext, ToolResult


@hookimpl(trylast=True)
def toolwire_execute_tool(call: ToolCall, context: ToolContext) -> Awaitable[ToolResult]:
    """``context.tool.invoke_validated(call.arguments, context)``: the loop admitted the call, so
    its arguments are validated already; sync tools run in a worker thread and exceptions become
    error results (see :meth:`toolwire.Tool.invoke`)."""
    return context.tool.invoke_validated(call.arguments or {}, context)
