"""What the tools Anthropic runs itself came to, read from their ``*_tool_result`` blocks.

A ``server_tool_use`` block (web search, web fetch, code execution) is answered in the same turn
by a result block naming it with ``tool_use_id``. The block goes back to the API as it came; what
is read here is only for people and observers (a card's result, a trace), never for a model.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from toolwire.messages import AssistantMessage, OpaquePart, ToolCall
from toolwire.tools import Source, ToolResult

_TEXT_LIMIT: Final = 4000


def is_result_block(block: Mapping[str, Any]) -> bool:
    """True for a block that answers a provider-run call (``web_search_tool_result`` …)."""
    kind = block.get("type")
    return (
        isinstance(kind, str)
        and kind.endswith("_tool_result")
        and isinstance(block.get("tool_use_id"), str)
    )


def result_of_block(block: Mapping[str, Any], name: str) -> ToolResult:
    """The result a provider-run call ``name`` came to, as its result block says."""
    content = block.get("content")
    if isinstance(content, Mapping):
        error = content.get("error_code")
        kind = str(content.get("type") or "")
        if error is not None or kind.endswith("_error"):
            return ToolResult.error(f"the provider's {name} failed: {error or kind}")
        return ToolResult.ok(_clip(_output_text(content)))
    if block.get("is_error") is True:
        return ToolResult.error(f"the provider's {name} failed: {_clip(_texts(content))}")
    if isinstance(content, list):
        sources = tuple(_sources(content))
        lines = [f"{s.title or s.url} — {s.url}" if s.title else s.url for s in sources]
        text = "\n".join(lines) if lines else _texts(content)
        return ToolResult.ok(_clip(text) or None, sources=sources)
    return ToolResult.ok(_clip(str(content)) if isinstance(content, str) else None)


def message_results(message: AssistantMessage) -> dict[str, ToolResult]:
    """The result its block gives each provider-run call of a whole (non-streamed) turn, by
    the call's id."""
    calls: dict[str, ToolCall] = {}
    for part in message.parts:
        if isinstance(part, ToolCall) and part.provider_executed:
            calls[_wire_id(part)] = part
    results: dict[str, ToolResult] = {}
    for part in message.parts:
        if isinstance(part, OpaquePart) and is_result_block(part.data):
            call = calls.get(str(part.data["tool_use_id"]))
            if call is not None:
                results[call.id] = result_of_block(part.data, call.name)
    return results


def _wire_id(call: ToolCall) -> str:
    block = (call.provider_data or {}).get("block")
    if isinstance(block, Mapping) and isinstance(block.get("id"), str):
        return str(block["id"])
    return call.id


def _sources(content: list[Any]) -> Iterator[Source]:
    for item in content:
        if isinstance(item, Mapping) and isinstance(item.get("url"), str):
            title = item.get("title")
            yield Source(url=item["url"], title=title if isinstance(title, str) else None)


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(item["text"])
        for item in content
        if isinstance(item, Mapping) and isinstance(item.get("text"), str)
    )


def _output_text(content: Mapping[str, Any]) -> str:
    """Code execution: its output streams and exit code; a fetch: the document's title."""
    parts: list[str] = []
    for field in ("stdout", "stderr"):
        value = content.get(field)
        if isinstance(value, str) and value:
            parts.append(f"{field}:\n{value}")
    code = content.get("return_code")
    if isinstance(code, int):
        parts.append(f"exit code {code}")
    if not parts and isinstance(content.get("url"), str):
        parts.append(str(content["url"]))
    return "\n".join(parts) or str(content.get("type") or "")


def _clip(text: str) -> str:
    if len(text) <= _TEXT_LIMIT:
        return text
    return text[:_TEXT_LIMIT] + f"… ({len(text) - _TEXT_LIMIT} more characters)"
