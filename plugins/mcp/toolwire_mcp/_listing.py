"""A server's listed tools as toolwire tools, without the SDK.

A listed tool is a JSON object as the server sent it (kept so in the tool-list cache). Before it
becomes a :class:`~toolwire.Tool` it is held to the same rules as any content from outside:
its description and title are cut and run through the built-in untrusted-content filter (a
server's text reaches the model, on the prompted path inside the system prompt), its input
schema is bounded in size, depth and property count, and its annotations are hints that set
the tool's policy only where the config says nothing. Every MCP tool returns outside content:
a server's ``openWorldHint`` is its word, not a trust boundary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from toolwire import SideEffect, Tool
from toolwire.tools import ToolDefinitionError

if TYPE_CHECKING:
    from ._settings import ServerSettings, ToolOverride

PLUGIN_NAME = "mcp"
DESCRIPTION_CHARS = 4_000
"""The longest description of a server's tool that reaches the model, in characters."""
TITLE_CHARS = 200
"""The longest title of a server's tool, in characters."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_SNAKE = re.compile(r"[^a-z0-9_]+")
# Control characters (terminal escapes among them), but line breaks and tabs.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def toolwire_name(server_tool: str) -> str:
    """The snake_case spelling toolwire uses for a server's tool name (``getWeather`` →
    ``get_weather``, ``read-file`` → ``read_file``)."""
    name = _NOT_SNAKE.sub("_", _CAMEL.sub("_", server_tool).lower()).strip("_")
    if not name or not name[0].isalpha():
        name = f"t_{name}"
    return name


def outside_text(text: Any, limit: int) -> str:
    """A server's text for people and the model: control characters removed, cut to ``limit``
    characters, and run through the built-in untrusted-content filter (chat-template role
    tokens, tool-call envelopes and impersonated system lines neutralised)."""
    if not isinstance(text, str):
        return ""
    text = _CONTROL.sub("", text).strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    if not text:
        return ""
    from toolwire.untrusted import default_filter

    return default_filter([text])[0].text


def schema_problem(schema: Any, settings: ServerSettings) -> str | None:
    """Why a listed input schema is refused (over a bound of ``settings``), or None.

    Depth is measured first and without recursion, so a schema nested thousands deep costs
    nothing but the walk up to the bound.
    """
    depth_limit = settings.max_schema_depth
    property_limit = settings.max_schema_properties
    properties = 0
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > depth_limit:
            return f"its input schema nests deeper than {depth_limit} levels (max_schema_depth)"
        if isinstance(node, Mapping):
            found = node.get("properties")
            if isinstance(found, Mapping):
                properties += len(found)
                if properties > property_limit:
                    return (
                        f"its input schema has more than {property_limit} properties "
                        "(max_schema_properties)"
                    )
            stack.extend((value, depth + 1) for value in node.values())
        elif isinstance(node, list):
            stack.extend((value, depth + 1) for value in node)
    size = len(json.dumps(schema, ensure_ascii=False).encode("utf-8"))
    if size > settings.max_schema_bytes:
        return (
            f"its input schema is {size} bytes, over the limit of {settings.max_schema_bytes} "
            "(max_schema_bytes)"
        )
    return None


def _hint(annotations: Mapping[str, Any], key: str) -> bool | None:
    value = annotations.get(key)
    return value if isinstance(value, bool) else None


def policy_fields(
    annotations: Mapping[str, Any] | None, override: ToolOverride | None = None
) -> dict[str, Any]:
    """``Tool.from_schema`` keywords from a tool's annotations and the config's override.

    Absent hints take the protocol's defaults: not read-only, destructive, not idempotent,
    open world. What the config sets (``side_effects``, ``idempotent``) wins over the hints.
    Whatever the hints say, results are outside content and pass the host's filter.
    """
    hints = annotations if isinstance(annotations, Mapping) else {}
    read_only = _hint(hints, "readOnlyHint") is True
    destructive = _hint(hints, "destructiveHint") is not False
    open_world = _hint(hints, "openWorldHint") is not False
    idempotent = _hint(hints, "idempotentHint") is True
    effects: set[SideEffect] = set()
    if read_only:
        effects = {SideEffect.READ_ONLY}
    else:
        if destructive:
            effects.add(SideEffect.DESTRUCTIVE)
        if open_world:
            effects.add(SideEffect.NETWORK)
    declared: frozenset[SideEffect] | None = frozenset(effects) or None
    is_idempotent = read_only or idempotent
    if override is not None:
        if override.side_effects is not None:
            declared = override.side_effects or None
            if override.idempotent is None:
                is_idempotent = declared is not None and declared <= {
                    SideEffect.READ_ONLY,
                    SideEffect.READS_FILES,
                }
        if override.idempotent is not None:
            is_idempotent = override.idempotent
    return {
        "side_effects": declared,
        "idempotent": is_idempotent,
        "returns_untrusted_content": True,
    }


def listed_tool(
    entry: Mapping[str, Any],
    *,
    server: str,
    settings: ServerSettings,
    handler: Callable[..., Any],
    max_result_bytes: int | None,
) -> Tool:
    """The toolwire tool of one listed server tool (named in snake_case, not yet prefixed).

    :raises ToolDefinitionError: naming the server, the tool and what is wrong: a schema over
        a bound, a schema toolwire cannot use, a name that makes no tool name.
    """
    name = str(entry.get("name", ""))
    where = f"MCP server {server!r}, tool {name!r}"
    schema = entry.get("inputSchema")
    if schema is None:
        schema = {"type": "object"}
    problem = schema_problem(schema, settings)
    if problem is not None:
        raise ToolDefinitionError(f"{where}: {problem}; the tool is left out")
    annotations = entry.get("annotations")
    hints = annotations if isinstance(annotations, Mapping) else {}
    title = outside_text(entry.get("title") or hints.get("title") or name, TITLE_CHARS)
    try:
        return Tool.from_schema(
            toolwire_name(name),
            outside_text(entry.get("description"), DESCRIPTION_CHARS),
            dict(schema) if isinstance(schema, Mapping) else schema,
            handler,
            title=title or name,
            timeout=settings.timeout + 2.0,
            max_result_bytes=max_result_bytes,
            plugin=PLUGIN_NAME,
            normalize=True,
            **policy_fields(hints, settings.tools.get(name)),
        )
    except ToolDefinitionError as exc:
        raise ToolDefinitionError(f"{where}: {exc}") from None


def tool_names(names: list[str], server: str, prefix: str | None) -> dict[str, str]:
    """The host name of each of a server's tools (by its snake_case name).

    An explicit ``prefix`` goes in front of every name. The default prefix (``<server>_``) is
    left out of a name that already starts with it or is the server's own name
    (``git_log`` of server ``git`` stays ``git_log``; ``fetch`` of server ``fetch`` stays
    ``fetch``) unless that would take the name of another tool of the server.
    """
    if prefix is not None:
        return {name: f"{prefix}{name}" for name in names}
    stem = server.replace("-", "_").lower()
    default = f"{stem}_"
    kept = {name for name in names if name == stem or name.startswith(default)}
    others = {f"{default}{name}" for name in names if name not in kept}
    return {
        name: name if name in kept and name not in others else f"{default}{name}" for name in names
    }
