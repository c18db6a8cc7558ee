"""Strict tool use on the Messages API: which tools go out with ``"strict": true``.

The API constrains a strict tool's input to its schema with a grammar compiled from every strict
tool of the request. It accepts a subset of JSON Schema (no numeric or length bounds, no
recursion, ``additionalProperties: false`` on every object), and it refuses a whole request
whose compiled grammar grows too large. So strict is opt-in per tool: a tool declared
``strict=True`` whose schema fits the subset is sent strict; any other is sent as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal
from urllib.parse import urlsplit

StrictMode = Literal["explicit", "all", "off"]
"""``explicit``: tools declared strict; ``all``: every tool not declared non-strict; ``off``."""

_UNSUPPORTED: Final = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
    "contains",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "propertyNames",
    "if",
    "not",
)
_MAX_DEPTH: Final = 32


def strict_mode(config: Any, default_host: str) -> StrictMode:
    """The mode ``[provider] enforces_strict_tool_schemas`` asks for: ``true`` every tool,
    ``false`` none, unset the tools declared strict, on Anthropic's own API only (a compatible
    host may not know the field)."""
    flag = config.enforces_strict_tool_schemas
    if flag is False:
        return "off"
    if flag is True:
        return "all"
    host = urlsplit(config.base_url or default_host).hostname or ""
    return "explicit" if host == "api.anthropic.com" else "off"


def wants_strict(declared: bool | None, mode: StrictMode) -> bool:
    """Whether a tool whose ``strict`` is ``declared`` should go out strict under ``mode``."""
    if mode == "all":
        return declared is not False
    return mode == "explicit" and declared is True


def strict_problems(schema: Mapping[str, Any]) -> list[str]:
    """What keeps ``schema`` out of the strict subset (empty when it fits)."""
    problems: list[str] = []
    definitions = {
        **_mapping(schema.get("$defs")),
        **_mapping(schema.get("definitions")),
    }
    _check(schema, "$", definitions, (), problems, 0)
    return problems


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _check(
    node: Any,
    path: str,
    definitions: Mapping[str, Any],
    refs: tuple[str, ...],
    problems: list[str],
    depth: int,
) -> None:
    if not isinstance(node, Mapping):
        return
    if depth > _MAX_DEPTH:
        problems.append(f"{path}: nested deeper than {_MAX_DEPTH} levels")
        return
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if not ref.startswith(("#/$defs/", "#/definitions/")) or name not in definitions:
            problems.append(f"{path}: $ref {ref!r} is not a local definition")
        elif name in refs:
            problems.append(f"{path}: recursive $ref {ref!r}")
        else:
            _check(definitions[name], path, definitions, (*refs, name), problems, depth + 1)
    for key in _UNSUPPORTED:
        if key in node:
            problems.append(f"{path}: {key!r} is not supported")
    if node.get("minItems", 0) not in (0, 1):
        problems.append(f"{path}: minItems other than 0 or 1 is not supported")
    enum = node.get("enum")
    if isinstance(enum, list) and any(isinstance(v, dict | list) for v in enum):
        problems.append(f"{path}: an enum of objects or arrays is not supported")
    if node.get("type") == "object" or "properties" in node:
        if node.get("additionalProperties") is not False:
            problems.append(f"{path}: an object without additionalProperties: false")
        for name, sub in _mapping(node.get("properties")).items():
            _check(sub, f"{path}.{name}", definitions, refs, problems, depth + 1)
    items = node.get("items")
    if isinstance(items, Mapping):
        _check(items, f"{path}[]", definitions, refs, problems, depth + 1)
    for key in ("anyOf", "allOf", "oneOf"):
        members = node.get(key)
        if isinstance(members, list):
            for i, member in enumerate(members):
                _check(member, f"{path}.{key}[{i}]", definitions, refs, problems, depth + 1)
