"""Running one llm tool for the host, and reading what it returns."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from toolwire.tools import CallDeferred, ToolResult, run_in_thread

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from toolwire.tools import ToolContext

TOOL_CALL_PARAMETER = "llm_tool_call"
"""The parameter llm fills with the ``llm.ToolCall`` being run; never offered to a model."""


@attrs.frozen
class LlmCall:
    """The handler of one llm tool: runs its implementation (a sync one on ``thread``, the
    toolbox's own thread, or a worker thread of the host) and maps the outcome."""

    name: str
    implementation: Callable[..., Any]
    thread: Executor | None
    error_prefix: str
    is_async: bool
    passes_tool_call: bool

    @classmethod
    def of(
        cls,
        name: str,
        implementation: Callable[..., Any],
        thread: Executor | None,
        error_prefix: str,
    ) -> LlmCall:
        """The handler of the tool ``name`` running ``implementation``."""
        try:
            parameters = inspect.signature(implementation).parameters
        except (TypeError, ValueError):
            parameters = {}  # type: ignore[assignment]
        return cls(
            name=name,
            implementation=implementation,
            thread=thread,
            error_prefix=error_prefix,
            is_async=inspect.iscoroutinefunction(implementation),
            passes_tool_call=TOOL_CALL_PARAMETER in parameters,
        )

    async def __call__(self, arguments: dict[str, Any], context: ToolContext) -> Any:
        import llm  # loaded with the plugin that registered the tool

        kwargs = dict(arguments)
        kwargs.pop(TOOL_CALL_PARAMETER, None)  # the host's to give, never the model's
        if self.passes_tool_call:
            kwargs[TOOL_CALL_PARAMETER] = llm.ToolCall(
                name=self.name, arguments=dict(arguments), tool_call_id=context.call_id
            )
        try:
            if self.is_async:
                value = await self.implementation(**kwargs)
            else:
                call = functools.partial(self.implementation, **kwargs)
                value = await run_in_thread(call, executor=self.thread)
        except llm.PauseChain as exc:
            raise CallDeferred(str(exc) or f"{self.name} paused the conversation") from exc
        return to_result(value, self.error_prefix)


def to_result(value: Any, error_prefix: str) -> Any:
    """What the host makes of an llm tool's return value.

    Text is the content, and an error result when it starts with ``error_prefix`` (how llm's
    tools report a failure they caught); an ``llm.ToolOutput`` gives its output the same way
    and its attachments as artifacts (kept for the caller, never sent to the model); anything
    else is returned as it is, for the host to send as JSON data.
    """
    import llm

    artifacts: dict[str, Any] = {}
    if isinstance(value, llm.ToolOutput):
        artifacts = {
            f"attachment-{index}": _attachment(attachment)
            for index, attachment in enumerate(value.attachments, start=1)
        }
        value = value.output
    if isinstance(value, str):
        if error_prefix and value.startswith(error_prefix):
            return ToolResult.error(value, artifacts=artifacts)
        return ToolResult.ok(value, artifacts=artifacts)
    if artifacts:
        return ToolResult.ok(data=value, artifacts=artifacts)
    return value


def _attachment(attachment: Any) -> Any:
    """An ``llm.Attachment`` as an artifact: its bytes, else where it is (nothing is fetched)."""
    content = getattr(attachment, "content", None)
    if isinstance(content, bytes):
        return content
    fields = ("type", "path", "url")
    return {f: getattr(attachment, f) for f in fields if getattr(attachment, f, None) is not None}
