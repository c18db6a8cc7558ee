"""Strict projection: the form of a canonical schema that hosts binding output to schemas accept.

Strict mode (OpenAI ``strict: true``) needs every property required, ``additionalProperties: false``
on every object, and a subset of JSON Schema. The projection makes optional properties required but
nullable (``["string", "null"]``, ``null`` added to enums, ``{"type": "null"}`` added to ``anyOf``);
the host reads a ``null`` for an optional argument as "left out", so the call means the same. A
schema whose meaning strict mode cannot keep (open dicts, untyped arrays, keywords outside the
subset) is not projected: the problems are reported and the adapter sends that tool non-strict.

Annotations are handled without changing what validates: ``default`` moves into the description,
``examples``, ``$comment``, ``$schema``, ``deprecated``, ``readOnly`` and ``writeOnly`` are dropped,
and so is the informational ``path`` format.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from ._validation import json_type_of

# Keywords strict mode accepts, by OpenAI's published "supported schemas" list.
_COMMON = frozenset({"type", "description", "title", "enum", "const", "anyOf", "$ref"})
_BY_TYPE = {
    "string": frozenset({"pattern", "format"}),
    "number": frozenset(
        {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
    ),
    "integer": frozenset(
        {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
    ),
    "array": frozenset({"items", "minItems", "maxItems"}),
    "object": frozenset({"properties", "required", "additionalProperties"}),
    "boolean": frozenset(),
    "null": frozenset(),
}
_ROOT_ONLY = frozenset({"$defs", "definitions"})
_ANNOTATIONS = frozenset(
    {"default", "examples", "$comment", "$schema", "$id", "deprecated", "readOnly", "writeOnly"}
)
STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_INFORMATIONAL_FORMATS = frozenset({"path"})
_SCALARS = ("string", "number", "integer", "boolean", "null")

MAX_NESTING = 10
MAX_PROPERTIES = 5000
MAX_ENUM_VALUES = 1000


@attrs.frozen
class StrictProjection:
    """The strict form of a schema, or None with the reasons strict mode cannot express it."""

    schema: Mapping[str, Any] | None
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when the schema can be sent strict."""
        return self.schema is not None


def accepts_null(node: Any) -> bool:
    """True when ``node`` (a projected schema) lets ``null`` through."""
    if not isinstance(node, Mapping):
        return node is True
    if "const" in node:
        return node["const"] is None
    if isinstance(node.get("enum"), list):
        return None in node["enum"]
    kinds = node.get("type")
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
        return True
    members = node.get("anyOf")
    return isinstance(members, list) and any(accepts_null(m) for m in members)


def make_nullable(node: Mapping[str, Any]) -> dict[str, Any]:
    """``node`` widened to also accept ``null`` (unchanged when it already does)."""
    out = dict(node)
    if accepts_null(out):
        return out
    kinds = out.get("type")
    if isinstance(out.get("anyOf"), list) and "type" not in out:
        out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        return out
    if "const" in out:
        out["enum"] = [out.pop("const")]
    if isinstance(out.get("enum"), list):
        out["enum"] = [*out["enum"], None]
    if isinstance(kinds, str) and kinds in _SCALARS:
        out["type"] = [kinds, "null"]
        return out
    if isinstance(kinds, list) and all(k in _SCALARS for k in kinds):
        out["type"] = [*kinds, "null"]
        return out
    # Objects, arrays and references: a union with null keeps their own keywords apart.
    description = out.pop("description", None)
    wrapped: dict[str, Any] = {"anyOf": [out, {"type": "null"}]}
    if description is not None:
        wrapped["description"] = description
    return wrapped


class _Projector:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.problems: list[str] = []
        self.properties = 0
        self.enum_values = 0

    def problem(self, path: str, text: str) -> None:
        self.problems.append(f"{path or 'the root schema'}: {text}")

    def project(self, node: Any, path: str, depth: int) -> dict[str, Any]:
        if not isinstance(node, Mapping):
            self.problem(path, f"boolean schema {json.dumps(node)} is not supported in strict mode")
            return {}
        out: dict[str, Any] = {}
        default = node.get("default", _NO_DEFAULT)
        kinds = node.get("type")
        if kinds is None and isinstance(node.get("enum"), list):
            inferred = sorted({json_type_of(v) for v in node["enum"]})
            if "integer" in inferred and "number" in inferred:
                inferred.remove("integer")
            kinds = inferred[0] if len(inferred) == 1 else inferred
        if kinds is None and "const" in node:
            kinds = json_type_of(node["const"])
        kind_list = [kinds] if isinstance(kinds, str) else list(kinds or [])
        if kinds is None and not any(k in node for k in ("anyOf", "$ref")):
            if "properties" in node:
                kind_list = ["object"]
            elif "items" in node:
                kind_list = ["array"]
            else:
                self.problem(
                    path, 'a value of any type (no "type") cannot be expressed in strict mode'
                )
        unknown = [kind for kind in kind_list if not isinstance(kind, str) or kind not in _BY_TYPE]
        if unknown:
            # A type word the provider does not know: name it, never send it.
            shown = ", ".join(json.dumps(kind, ensure_ascii=False) for kind in unknown)
            self.problem(
                path,
                f"type {shown} is not a JSON Schema type, so strict mode cannot send it (valid "
                f"types: {', '.join(sorted(_BY_TYPE))})",
            )
            return {}
        allowed = set(_COMMON)
        for kind in kind_list:
            allowed |= _BY_TYPE.get(kind, frozenset())
        if not path:
            allowed |= _ROOT_ONLY
        for key, value in node.items():
            if key in _ANNOTATIONS:
                continue
            if key not in allowed:
                self.problem(path, f"keyword {key!r} is not supported in strict mode")
                continue
            if key in ("properties", "required", "additionalProperties", "items", "anyOf"):
                continue
            if key in _ROOT_ONLY:
                out[key] = {
                    name: self.project(sub, f"#/{key}/{name}", depth) for name, sub in value.items()
                }
                continue
            if key == "format":
                if value in _INFORMATIONAL_FORMATS:
                    continue
                if value not in STRICT_FORMATS:
                    self.problem(path, f"format {value!r} is not supported in strict mode")
                    continue
            if key == "enum":
                self.enum_values += len(value)
            if key == "type" and kinds is not None:
                value = kinds
            out[key] = value
        if kinds is not None and "type" not in out:
            out["type"] = kinds
        if default is not _NO_DEFAULT and default is not None:
            shown = json.dumps(default, ensure_ascii=False)
            text = out.get("description")
            out["description"] = f"{text} (default: {shown})" if text else f"Default: {shown}."
        if "$ref" in out and len(out) > 1:
            # Siblings of $ref are not allowed next to it in strict mode.
            ref = out.pop("$ref")
            out = {"anyOf": [{"$ref": ref}], **out}
        if isinstance(node.get("anyOf"), list):
            if not path:
                self.problem(path, "the root schema cannot be an anyOf in strict mode")
            out["anyOf"] = [
                self.project(sub, f"{path}(anyOf {i})", depth)
                for i, sub in enumerate(node["anyOf"])
            ]
        if "object" in kind_list:
            self._object(node, out, path, depth)
        if "array" in kind_list:
            self._array(node, out, path, depth)
        return out

    def _object(self, node: Mapping[str, Any], out: dict[str, Any], path: str, depth: int) -> None:
        if depth >= MAX_NESTING:
            self.problem(path, f"objects nest deeper than {MAX_NESTING} levels")
        properties = node.get("properties")
        extra = node.get("additionalProperties", None)
        if extra not in (None, False):
            self.problem(
                path,
                "an object with open keys (additionalProperties, e.g. dict[str, T]) cannot be "
                "expressed in strict mode",
            )
        if not isinstance(properties, Mapping):
            if extra is not False:
                self.problem(
                    path,
                    "an object without declared properties (an open dict) cannot be expressed in "
                    "strict mode",
                )
            properties = {}
        required = node.get("required") or []
        projected: dict[str, Any] = {}
        for key, sub in properties.items():
            self.properties += 1
            child = self.project(sub, f"{path}.{key}" if path else key, depth + 1)
            projected[key] = child if key in required else make_nullable(child)
        out["properties"] = projected
        out["required"] = list(projected)
        out["additionalProperties"] = False

    def _array(self, node: Mapping[str, Any], out: dict[str, Any], path: str, depth: int) -> None:
        items = node.get("items")
        if "prefixItems" in node or isinstance(items, list):
            return  # reported as an unsupported keyword, or below
        if not isinstance(items, Mapping) or not items:
            self.problem(
                path, "a list whose items have no schema cannot be expressed in strict mode"
            )
            return
        out["items"] = self.project(items, f"{path}[]", depth + 1)


class _NoDefault:
    pass


_NO_DEFAULT: Any = _NoDefault()


def strict_projection(schema: Mapping[str, Any]) -> StrictProjection:
    """Project a canonical parameter schema to strict form, or report why it cannot be.

    Never changes what the host accepts: arguments produced under the projection, with ``null``
    read as "left out" for optional properties, validate against the canonical schema.
    """
    projector = _Projector(schema)
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return StrictProjection(None, ("the root schema must be an object schema",))
    projected = projector.project(schema, "", 0)
    if projector.properties > MAX_PROPERTIES:
        projector.problems.append(
            f"the schema has {projector.properties} properties; strict mode allows {MAX_PROPERTIES}"
        )
    if projector.enum_values > MAX_ENUM_VALUES:
        projector.problems.append(
            f"the schema has {projector.enum_values} enum values; strict mode allows "
            f"{MAX_ENUM_VALUES}"
        )
    if projector.problems:
        return StrictProjection(None, tuple(dict.fromkeys(projector.problems)))
    return StrictProjection(projected)
