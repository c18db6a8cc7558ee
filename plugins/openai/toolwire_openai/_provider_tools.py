"""What the tools OpenAI runs itself came to, read from their Responses output items.

A ``web_search_call``, ``file_search_call``, ``code_interpreter_call``, ``image_generation_call``
or ``mcp_call`` item is both the call and its outcome. The item goes back to the API as it came;
what is read here is only for people and observers (a card's result, a trace), never a model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from toolwire.tools import Source, ToolResult

_TEXT_LIMIT: Final = 4000
PROGRESS_EVENT: Final = re.compile(
    r"response\.(web_search_call|file_search_call|code_interpreter_call|image_generation_call"
    r"|mcp_call)\.(in_progress|searching|interpreting|generating|partial_image|completed|failed)"
)
"""Stream events that report how a provider-run call is going."""
_PHASES: Final = {
    "in_progress": "started",
    "searching": "searching",
    "interpreting": "running code",
    "generating": "generating",
    "partial_image": "drawing",
    "completed": "done",
    "failed": "failed",
}


def progress_message(phase: str) -> str:
    """How a phase of a provider-run call reads to people."""
    return _PHASES.get(phase, phase.replace("_", " "))


def result_of_item(item: Mapping[str, Any], name: str) -> ToolResult:
    """The result a provider-run call ``name`` came to, as its output item says."""
    status = item.get("status")
    error = item.get("error")
    if status in ("failed", "incomplete") or error:
        why = _text(error) if error else str(status)
        return ToolResult.error(f"the provider's {name} failed: {_clip(why)}")
    kind = item.get("type")
    if kind == "web_search_call":
        action = item.get("action")
        action = action if isinstance(action, Mapping) else {}
        sources = tuple(_sources(action.get("sources")))
        head = action.get("query") or action.get("url") or action.get("pattern")
        lines = [f"searched: {head}"] if isinstance(head, str) else []
        lines += [s.url for s in sources]
        return ToolResult.ok(_clip("\n".join(lines)) or None, sources=sources)
    if kind == "file_search_call":
        lines = [
            f"{r.get('filename') or r.get('file_id') or 'file'}: {_text(r.get('text'))[:200]}"
            for r in item.get("results") or ()
            if isinstance(r, Mapping)
        ]
        return ToolResult.ok(_clip("\n".join(lines)) or None)
    if kind == "code_interpreter_call":
        logs = [
            str(o.get("logs"))
            for o in item.get("outputs") or ()
            if isinstance(o, Mapping) and o.get("type") == "logs"
        ]
        return ToolResult.ok(_clip("\n".join(logs)) or None)
    if kind == "image_generation_call":
        image = item.get("result")
        size = f" ({len(image) * 3 // 4 // 1024} KB)" if isinstance(image, str) else ""
        return ToolResult.ok(f"an image{size}")
    output = item.get("output")
    return ToolResult.ok(_clip(_text(output)) if output is not None else None)


def _sources(value: Any) -> Iterator[Source]:
    for item in value if isinstance(value, list) else ():
        if isinstance(item, Mapping) and isinstance(item.get("url"), str):
            title = item.get("title")
            yield Source(url=item["url"], title=title if isinstance(title, str) else None)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return str(value.get("message") or value.get("code") or value.get("type") or value)
    return "" if value is None else str(value)


def _clip(text: str) -> str:
    if len(text) <= _TEXT_LIMIT:
        return text
    return text[:_TEXT_LIMIT] + f"… ({len(text) - _TEXT_LIMIT} more characters)"
