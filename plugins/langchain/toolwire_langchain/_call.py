"""Running one LangChain tool for the host, and reading the ``ToolMessage`` it answers with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from langchain_core.messages import ToolMessage

from toolwire.tools import ToolResult

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from toolwire.tools import ToolContext

TEXT_SEPARATOR = "\n\n"


@attrs.frozen
class Injected:
    """An argument of a LangChain tool that the host supplies, never the model."""

    name: str
    required: bool


@attrs.frozen
class LangchainCall:
    """The handler of one LangChain tool: ``ainvoke`` with a tool call (so the tool answers
    with a ``ToolMessage``), its injected arguments taken from the call's context."""

    tool: BaseTool
    injected: tuple[Injected, ...]

    async def __call__(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        names = {i.name for i in self.injected}
        args = {k: v for k, v in arguments.items() if k not in names}
        missing: list[str] = []
        for argument in self.injected:
            if argument.name in context.values:
                args[argument.name] = context.values[argument.name]
            elif argument.name in context.services:
                args[argument.name] = context.services[argument.name]
            elif argument.required:
                missing.append(argument.name)
        if missing:
            first = missing[0]
            return ToolResult.error(
                f"Tool {context.tool_name} was not run: it needs {', '.join(missing)} from the "
                f"application, which did not give it (host.run(prompt, context={{{first!r}: …}}) "
                "or a host service of that name)",
                retryable=False,
            )
        call = {"type": "tool_call", "id": context.call_id, "name": self.tool.name, "args": args}
        return to_result(await self.tool.ainvoke(call))


def to_result(output: Any) -> ToolResult:
    """The toolwire result of a LangChain tool's answer.

    The message's text is the content (text blocks joined); other content blocks (images …)
    and the message's ``artifact`` become artifacts, kept for the caller and never sent to the
    model; ``status="error"`` (a ``ToolException`` the tool handles) makes an error result.
    """
    if not isinstance(output, ToolMessage):
        return ToolResult.error(
            f"Tool execution failed: the LangChain tool answered with a {type(output).__name__}, "
            "not a ToolMessage; outside a LangGraph graph only a message can be used",
            retryable=False,
        )
    texts: list[str] = []
    artifacts: dict[str, Any] = {}
    content = output.content
    for index, block in enumerate([content] if isinstance(content, str) else content, start=1):
        if isinstance(block, str):
            texts.append(block)
        elif block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        else:
            key = f"content-{index}"
            artifacts[key] = block
            texts.append(f"[{block.get('type', 'content')} kept for the user as artifact {key!r}]")
    if output.artifact is not None:
        artifacts["artifact"] = output.artifact
    text = TEXT_SEPARATOR.join(t for t in texts if t)
    if output.status == "error":
        return ToolResult.error(
            text or f"The LangChain tool {output.name!r} failed without a message.",
            artifacts=artifacts,
        )
    return ToolResult.ok(text or None, artifacts=artifacts)
