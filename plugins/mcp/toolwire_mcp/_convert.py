"""MCP to toolwire: a call's result."""

from __future__ import annotations

import base64
import json
from typing import Any

import mcp.types as mt

from toolwire import Source, ToolResult, TrustLevel

TEXT_SEPARATOR = "\n\n"


def to_tool_result(
    result: mt.CallToolResult,
    *,
    server: str,
    tool: str,
    trust: str | None,
    error_prefix: tuple[str, ...] = (),
) -> tuple[ToolResult, list[str]]:
    """The toolwire result of one call, and the texts that reach the model (for filtering).

    Text blocks become the content; ``structuredContent`` the JSON data (a text block that is
    only the same JSON is not repeated, and the SDK's ``{"result": value}`` around a plain value
    whose text is that value is left out); images, audio and binary resources become artifacts,
    named in the text so the model knows they exist; resource links become sources.
    ``isError`` makes an error result carrying the server's message, and so does a text that
    starts with one of ``error_prefix`` (a server that reports failures as plain text).
    """
    texts: list[str] = []
    artifacts: dict[str, Any] = {}
    sources: list[Source] = []
    for index, block in enumerate(result.content, start=1):
        if isinstance(block, mt.TextContent):
            texts.append(block.text)
        elif isinstance(block, mt.ImageContent | mt.AudioContent):
            kind = "image" if isinstance(block, mt.ImageContent) else "audio"
            key = f"{kind}-{index}"
            artifacts[key] = {"mime_type": block.mime_type, "data": _decode(block.data)}
            texts.append(f"[{kind} {block.mime_type} kept for the user as artifact {key!r}]")
        elif isinstance(block, mt.ResourceLink):
            title = block.title or block.name
            sources.append(Source(url=str(block.uri), title=title))
            texts.append(f"[resource {title}: {block.uri}]")
        elif isinstance(block, mt.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, mt.TextResourceContents):
                texts.append(resource.text)
            else:
                key = f"resource-{index}"
                artifacts[key] = {
                    "uri": str(resource.uri),
                    "mime_type": resource.mime_type,
                    "data": _decode(getattr(resource, "blob", "")),
                }
                texts.append(f"[resource {resource.uri} kept for the user as artifact {key!r}]")
    data = result.structured_content
    if data is not None and len(texts) == 1:
        if _wraps(texts[0], data):
            data = None  # {"result": value} around what the text already says: keep the text
        elif _same_json(texts[0], data):
            texts = []  # the text only repeats the structured content
    content = TEXT_SEPARATOR.join(texts) if texts else None
    fields: dict[str, Any] = {
        "artifacts": artifacts,
        "sources": tuple(sources),
        "metadata": {"mcp_server": server, "mcp_tool": tool},
    }
    if trust is not None:
        fields["required_trust"] = TrustLevel.parse(trust)
    failed = result.is_error or bool(
        error_prefix and texts and texts[0].lstrip().startswith(error_prefix)
    )
    if failed:
        message = content or (json.dumps(data, ensure_ascii=False) if data is not None else "")
        return (
            ToolResult.error(
                message or f"The MCP tool {tool!r} of server {server!r} failed without a message.",
                data=data if content else None,
                **fields,
            ),
            texts,
        )
    return ToolResult.ok(content, data=data, **fields), texts


def _same_json(text: str, data: Any) -> bool:
    try:
        return bool(json.loads(text) == data)
    except ValueError:
        return False


def _wraps(text: str, data: Any) -> bool:
    """True for the SDK's ``{"result": value}`` around a value that is not an object, whose text
    block is that value."""
    if not (isinstance(data, dict) and list(data) == ["result"]):
        return False
    value = data["result"]
    return bool(value == text or (not isinstance(value, str) and _same_json(text, value)))


def _decode(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except ValueError:
        return data.encode("utf-8", errors="replace")
