"""Reading canonical JSON Schemas: references, allowed types, and compact type notations."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias

from ..tools._validation import json_type_of

TypeStyle: TypeAlias = Literal["py", "ts", "typescript"]

JSON_TYPES: Final = frozenset({"string", "integer", "number", "boolean", "null", "array", "object"})

_EMPTY: Final[Mapping[str, Any]] = {}
_MAX_REF_HOPS: Final = 16
_PY_NAMES: Final = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "array": "list",
    "object": "dict",
}


def resolve(schema: Any, root: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` with local ``$ref`` pointers (``#/$defs/…``) followed; ``{}`` when unusable."""
    if type(schema) is dict and "$ref" not in schema:
        return schema
    hops = 0
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        hops += 1
        target = _pointer(root, schema["$ref"])
        if target is None or hops > _MAX_REF_HOPS:
            return _EMPTY
        schema = target
    return schema if isinstance(schema, Mapping) else _EMPTY


def _pointer(root: Mapping[str, Any], ref: str) -> Any:
    if not ref.startswith("#"):
        return None
    node: Any = root
    for token in ref[1:].split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def allowed_types(schema: Any, root: Mapping[str, Any]) -> frozenset[str] | None:
    """The JSON types a value of ``schema`` may have, or None when any type may do."""
    return _allowed(schema, root, 0)


def _allowed(schema: Any, root: Mapping[str, Any], depth: int) -> frozenset[str] | None:
    node = resolve(schema, root)
    if depth > _MAX_REF_HOPS:
        return None
    declared = node.get("type")
    if isinstance(declared, str):
        return frozenset({declared}) & JSON_TYPES or None
    if isinstance(declared, list):
        return frozenset(t for t in declared if t in JSON_TYPES) or None
    if "enum" in node and isinstance(node["enum"], list):
        return frozenset(json_type_of(v) for v in node["enum"])
    if "const" in node:
        return frozenset({json_type_of(node["const"])})
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches:
            found: set[str] = set()
            for branch in branches:
                types = _allowed(branch, root, depth + 1)
                if types is None:
                    return None
                found |= types
            return frozenset(found)
    branches = node.get("allOf")
    if isinstance(branches, list):
        for branch in branches:
            types = _allowed(branch, root, depth + 1)
            if types is not None:
                return types
    if "properties" in node or "additionalProperties" in node:
        return frozenset({"object"})
    if "items" in node or "prefixItems" in node:
        return frozenset({"array"})
    return None


def properties(schema: Any, root: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``properties`` of an object schema (merged over ``anyOf``/``allOf`` object branches)."""
    node = resolve(schema, root)
    found = node.get("properties")
    if not ("allOf" in node or "anyOf" in node or "oneOf" in node):
        return found if isinstance(found, Mapping) else _EMPTY
    merged: dict[str, Any] = dict(found) if isinstance(found, Mapping) else {}
    for key in ("allOf", "anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list):
            for branch in branches:
                for name, sub in properties(branch, root).items():
                    merged.setdefault(name, sub)
    return merged


def required(schema: Any, root: Mapping[str, Any]) -> frozenset[str]:
    """The required property names of an object schema."""
    node = resolve(schema, root)
    names = node.get("required")
    if not isinstance(names, list):
        return frozenset()
    return frozenset(n for n in names if isinstance(n, str))


def property_schema(schema: Any, name: str, root: Mapping[str, Any]) -> Any:
    """The schema of property ``name`` of an object schema (``additionalProperties`` as fallback).

    Returns None when the schema says nothing about that property.
    """
    props = properties(schema, root)
    if name in props:
        return props[name]
    extra = resolve(schema, root).get("additionalProperties")
    return extra if isinstance(extra, Mapping) else None


def item_schema(schema: Any, index: int, root: Mapping[str, Any]) -> Any:
    """The schema of item ``index`` of an array schema (``prefixItems`` first), or None."""
    node = resolve(schema, root)
    prefix = node.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    items = node.get("items")
    if isinstance(items, list):  # draft 4 tuple form
        return items[index] if index < len(items) else None
    if isinstance(items, Mapping):
        return items
    for key in ("anyOf", "oneOf"):
        for branch in node.get(key) or ():
            if allowed_types(branch, root) == frozenset({"array"}):
                return item_schema(branch, index, root)
    return None


def parameter_names(parameters: Mapping[str, Any], order: tuple[str, ...]) -> tuple[str, ...]:
    """The parameters of a function in the order of ``order``, then any the order leaves out."""
    names = list(properties(parameters, parameters))
    ordered = [n for n in order if n in names]
    return tuple(ordered + [n for n in names if n not in ordered])


def literal_text(value: Any, style: TypeStyle) -> str:
    """``value`` as a Python (``True``, ``None``) or JSON (``true``, ``null``) literal."""
    if style == "py":
        if value is True:
            return "True"
        if value is False:
            return "False"
        if value is None:
            return "None"
    return json.dumps(value, ensure_ascii=False)


def type_text(schema: Any, root: Mapping[str, Any], style: TypeStyle, depth: int = 0) -> str:
    """A compact notation of the type of ``schema``.

    ``py``: ``str``, ``int``, ``list[str]``, ``{a: int, b?: str}``, ``"x" | "y"``, ``str | None``.
    ``ts``: ``string``, ``integer``, ``string[]``, ``{a: integer, b?: string}``, ``"x" | "y"``.
    ``typescript``: as ``ts``, with TypeScript's ``number`` for integers too.
    """
    node = resolve(schema, root)
    if depth > 4:
        return "dict" if style == "py" else "object"
    if "const" in node:
        return literal_text(node["const"], style)
    if isinstance(node.get("enum"), list):
        return " | ".join(literal_text(v, style) for v in node["enum"])
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches:
            return " | ".join(_unique(type_text(b, root, style, depth + 1) for b in branches))
    declared = node.get("type")
    types = [declared] if isinstance(declared, str) else declared
    if not isinstance(types, list):
        inferred = allowed_types(node, root)
        types = sorted(inferred) if inferred else []
    if not types:
        return "Any" if style == "py" else "any"
    return " | ".join(_unique(_single_type(node, t, root, style, depth) for t in types))


def _unique(items: Any) -> list[str]:
    return list(dict.fromkeys(items))


def _single_type(
    node: Mapping[str, Any], kind: str, root: Mapping[str, Any], style: TypeStyle, depth: int
) -> str:
    if kind == "array":
        item = item_schema(node, 0, root)
        if isinstance(node.get("prefixItems"), list):
            inner = ", ".join(type_text(s, root, style, depth + 1) for s in node["prefixItems"])
            return f"tuple[{inner}]" if style == "py" else f"[{inner}]"
        if item is None:
            return "list" if style == "py" else "any[]"
        inner = type_text(item, root, style, depth + 1)
        if style == "py":
            return f"list[{inner}]"
        return f"({inner})[]" if " | " in inner else f"{inner}[]"
    if kind == "object":
        props = properties(node, root)
        extra = node.get("additionalProperties")
        if props:
            needed = required(node, root)
            fields = [
                f"{name}{'' if name in needed else '?'}: {type_text(sub, root, style, depth + 1)}"
                for name, sub in props.items()
            ]
            return "{" + ", ".join(fields) + "}"
        if isinstance(extra, Mapping) and extra:
            value = type_text(extra, root, style, depth + 1)
            return f"dict[str, {value}]" if style == "py" else f"{{[key: string]: {value}}}"
        return "dict" if style == "py" else "object"
    if style == "py":
        return _PY_NAMES.get(kind, kind)
    if style == "typescript" and kind == "integer":
        return "number"
    return kind


def constraints_text(schema: Any, root: Mapping[str, Any], style: TypeStyle) -> str:
    """The constraints of a schema in a few words (``1..20``, ``format uri``), or ``""``."""
    node = resolve(schema, root)
    words: list[str] = []
    kinds = (allowed_types(node, root) or frozenset()) if style == "typescript" else frozenset()
    if "integer" in kinds and "number" not in kinds:
        # TypeScript has one number type: say where only whole numbers are valid.
        words.append("integer")
    low, high = node.get("minimum"), node.get("maximum")
    xlow, xhigh = node.get("exclusiveMinimum"), node.get("exclusiveMaximum")
    if _is_number(low) and _is_number(high):
        words.append(f"{low}..{high}")
    else:
        if _is_number(low):
            words.append(f">={low}")
        if _is_number(high):
            words.append(f"<={high}")
    if _is_number(xlow):
        words.append(f">{xlow}")
    if _is_number(xhigh):
        words.append(f"<{xhigh}")
    for low_key, high_key, label in (
        ("minLength", "maxLength", "length"),
        ("minItems", "maxItems", "items"),
        ("minProperties", "maxProperties", "keys"),
    ):
        lo, hi = node.get(low_key), node.get(high_key)
        if _is_number(lo) and _is_number(hi):
            words.append(f"{label} {lo}..{hi}")
        elif _is_number(lo):
            words.append(f"{label} >={lo}")
        elif _is_number(hi):
            words.append(f"{label} <={hi}")
    if node.get("uniqueItems") is True:
        words.append("unique items")
    if isinstance(node.get("multipleOf"), int | float):
        words.append(f"multiple of {node['multipleOf']}")
    if isinstance(node.get("format"), str):
        words.append(f"format {node['format']}")
    if isinstance(node.get("pattern"), str):
        words.append(f"pattern {node['pattern']}")
    return ", ".join(words)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
