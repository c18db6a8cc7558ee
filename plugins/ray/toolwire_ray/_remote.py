"""Remote tools: an execution middleware that runs the configured tools as Ray tasks."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import attrs

import toolwire
from toolwire import ToolResult
from toolwire.tools import ToolContext

from ._connect import RayUnavailable, connect, describe_ray_error
from ._settings import RaySettings


def run_tool_task(
    tool: toolwire.Tool, arguments: Mapping[str, Any], context: dict[str, Any]
) -> ToolResult:
    """The body of a remote tool's Ray task: the tool with its validated arguments, in a
    context rebuilt from the picklable parts of the caller's (no host services, no progress)."""
    rebuilt = ToolContext(tool=tool, **context)
    result = asyncio.run(tool.invoke_validated(arguments, rebuilt))
    if result.exception is not None:
        # The exception may not pickle; its text is in the result already.
        result = attrs.evolve(result, exception=None)
    return result


class RemoteTools:
    """The per-host middleware: a call of a tool named in ``[tools.ray] remote`` becomes a Ray
    task reserving that tool's resources; every other call passes through.

    It is the innermost middleware (``trylast``), so policy, approvals, ledger rows, timeouts
    and tracing wrap the remote call as they wrap a local one; the loop keeps results in call
    order however the tasks finish. Ray retries nothing (``max_retries = 0``): retrying is the
    tool policy's business, and a side effect must not run twice behind its back.
    """

    def __init__(self, settings: RaySettings) -> None:
        self._settings = settings
        self._task: Any = None
        self.toolwire_execute_tool = toolwire.middleware(trylast=True)(self.execute)

    async def execute(self, call: Any, context: ToolContext, call_next: Any) -> ToolResult:
        """Run the call as a Ray task when its tool is remote, else go on down the chain."""
        resources = self._settings.remote.get(context.tool.name)
        if resources is None:
            result: ToolResult = await call_next()
            return result
        import ray

        try:
            connect(self._settings.address, log_to_driver=self._settings.log_to_driver)
        except RayUnavailable as exc:
            return ToolResult.error(f"Tool {context.tool.name} runs on Ray: {exc}")
        if self._task is None:
            self._task = ray.remote(run_tool_task)
        picklable = {
            "call_id": context.call_id,
            "run_id": context.run_id,
            "round": context.round,
            "messages": context.messages,
            "settings": context.settings,
            "provider_trust": context.provider_trust,
        }
        ref = self._task.options(max_retries=0, **resources.options()).remote(
            context.tool, dict(call.arguments or {}), picklable
        )
        try:
            remote: ToolResult = await asyncio.wrap_future(ref.future())
        except asyncio.CancelledError:
            ray.cancel(ref, force=True)
            raise
        except ray.exceptions.RayError as exc:
            return ToolResult.error(
                f"Tool execution failed: the Ray task of {context.tool.name} failed: "
                f"{describe_ray_error(exc)}"
            )
        return remote
