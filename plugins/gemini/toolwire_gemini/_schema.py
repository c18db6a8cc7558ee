"""Gemini's schema subset: the form of a canonical parameter schema that ``parameters`` takes.

A function declaration's ``parameters`` is a ``Schema`` object: a select subset of OpenAPI 3.0,
with upper-case type names, ``nullable`` instead of a ``"null"`` type, string-only ``enum``s and
no ``$ref``, ``allOf``, ``oneOf``, ``not`` or open objects (``additionalProperties`` only on
models that accept it). :func:`project_schema` translates a canonical JSON Schema into it, per
tool, with one of three verdicts:

- ``lossless``: every constraint is expressed in the subset. Local ``$ref``s are inlined,
  ``allOf`` members merged, ``anyOf: [X, {"type": "null"}]`` and ``["T", "null"]`` become
  ``nullable``, a ``default`` moves into the description, and annotations (``examples``,
  ``$comment`` …) are dropped: none of it changes which arguments are valid.
- ``degraded``: the tool is sent, but some constraints have no place in the subset, so they are
  written into the description for the model to read (``format: email``, ``exclusiveMinimum:
  0``, a non-string ``enum``, ``oneOf`` sent as ``anyOf``). The host still validates every
  argument against the canonical schema, so nothing invalid reaches the tool.
- ``refused``: the schema cannot be expressed without changing what it means (a recursive
  ``$ref``, an open dict, a value of any type, a tuple, ``not``/``if``): ``problems`` says why,
  naming the place in the schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

import attrs

from toolwire.tools import json_type_of

__all__ = ["GEMINI_TYPES", "SchemaVerdict", "GeminiSchema", "project_schema"]

SchemaVerdict = Literal["lossless", "degraded", "refused"]

GEMINI_TYPES: Final[Mapping[str, str]] = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
    "null": "NULL",
}
"""JSON Schema's type names and Gemini's (the ``Type`` enum of the API reference)."""

# The keywords of Gemini's Schema object, by the type they apply to.
_KIND_KEYWORDS: Final[Mapping[str, frozenset[str]]] = {
    "string": frozenset({"minLength", "maxLength", "pattern"}),
    "number": frozenset({"minimum", "maximum"}),
    "integer": frozenset({"minimum", "maximum"}),
    "array": frozenset({"minItems", "maxItems"}),
    "object": frozenset({"minProperties", "maxProperties"}),
    "boolean": frozenset(),
    "null": frozenset(),
}
# Formats the subset names per type; other formats go into the description.
_FORMATS: Final[Mapping[str, frozenset[str]]] = {
    "string": frozenset({"date-time"}),
    "number": frozenset({"float", "double"}),
    "integer": frozenset({"int32", "int64"}),
}
_INFORMATIONAL_FORMATS: Final = frozenset({"path"})
# Annotations: no effect on which values are valid, and no place in the subset.
_DROPPED: Final = frozenset(
    {
        "examples",
        "$comment",
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$vocabulary",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
        "$defs",
        "definitions",
    }
)
# Constraints of a scalar value the subset lacks: written into the description.
_DESCRIBED: Final = frozenset(
    {
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "uniqueItems",
        "minContains",
        "maxContains",
        "dependentRequired",
    }
)
# Keywords holding subschemas the subset cannot express: the tool is refused.
_REFUSED: Final = frozenset(
    {
        "not",
        "if",
        "then",
        "else",
        "contains",
        "patternProperties",
        "propertyNames",
        "dependentSchemas",
        "unevaluatedProperties",
        "unevaluatedItems",
        "prefixItems",
        "additionalItems",
        "$dynamicRef",
    }
)
# Keywords whose values two merged subschemas ($ref siblings, allOf members) may differ in: the
# one written beside the reference wins.
_OVERRIDABLE: Final = frozenset({"description", "title", "default", *_DROPPED})
_HANDLED: Final = frozenset(
    {"type", "anyOf", "oneOf", "description", "title", "default", "enum", "const", "format"}
)
_NAMED_STRUCTURE: Final = frozenset(
    {"properties", "required", "additionalProperties", "items", *_DROPPED}
)

PARAMETER_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
"""The names Gemini accepts for a function's parameters (the root properties)."""

MAX_DEPTH: Final = 32
"""How deep a projected schema may nest (inlined references included)."""
MAX_NODES: Final = 5000
"""How many subschemas a projected schema may hold (inlined references included)."""


@attrs.frozen
class GeminiSchema:
    """One tool's parameter schema in Gemini's subset, or why it has none.

    :ivar schema: the ``parameters`` value; ``None`` when refused, ``{}`` for a function without
        parameters (the declaration then carries no ``parameters``).
    :ivar notes: the constraints that only the description carries now (empty when lossless).
    :ivar problems: why the schema cannot be expressed (empty unless refused).
    """

    schema: Mapping[str, Any] | None
    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def verdict(self) -> SchemaVerdict:
        """``lossless``, ``degraded`` or ``refused`` (see the module documentation)."""
        if self.schema is None:
            return "refused"
        return "degraded" if self.notes else "lossless"


class _Refused(Exception):
    """A subschema that cannot be projected (already recorded as a problem)."""


def _where(path: str) -> str:
    return path or "the root schema"


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _kinds(node: Mapping[str, Any]) -> list[str]:
    """The JSON types ``node`` allows, by its ``type``, else inferred from its keywords."""
    kinds = node.get("type")
    if isinstance(kinds, str):
        return [kinds]
    if isinstance(kinds, list):
        return [k for k in kinds if isinstance(k, str)]
    values: list[Any] | None = None
    if isinstance(node.get("enum"), list):
        values = node["enum"]
    elif "const" in node:
        values = [node["const"]]
    if values is not None:
        inferred: list[str] = []
        for value in values:
            kind = json_type_of(value)
            if kind == "integer" and "number" in inferred:
                continue
            if kind == "number" and "integer" in inferred:
                inferred.remove("integer")
            if kind not in inferred:
                inferred.append(kind)
        return inferred
    if "properties" in node or "additionalProperties" in node:
        return ["object"]
    if "items" in node:
        return ["array"]
    return []


def _is_null_schema(node: Any) -> bool:
    """True for ``{"type": "null"}`` (annotations beside it allowed)."""
    if not isinstance(node, Mapping) or node.get("type") != "null":
        return False
    return all(key in _OVERRIDABLE or key == "type" for key in node)


class _Projector:
    def __init__(self, root: Mapping[str, Any], *, open_objects: bool) -> None:
        self.root = root
        self.open_objects = open_objects
        self.notes: list[str] = []
        self.problems: list[str] = []
        self.nodes = 0

    def refuse(self, path: str, text: str) -> _Refused:
        self.problems.append(f"{_where(path)}: {text}")
        return _Refused()

    def note(self, path: str, text: str) -> None:
        self.notes.append(f"{_where(path)}: {text}")

    # -- references and merging ---------------------------------------------------------------

    def target(self, ref: str, path: str) -> Any:
        if not ref.startswith("#"):
            raise self.refuse(path, f"$ref {ref!r} is not a reference inside the schema")
        node: Any = self.root
        for token in ref[1:].lstrip("/").split("/") if ref != "#" else []:
            key = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise self.refuse(path, f"$ref {ref!r} names nothing in the schema")
        return node

    def merge(self, base: Mapping[str, Any], extra: Mapping[str, Any], path: str) -> dict[str, Any]:
        """The subschema that both ``base`` and ``extra`` describe (``extra`` wins for
        annotations)."""
        out = dict(base)
        for key, value in extra.items():
            if key not in out or out[key] == value or key in _OVERRIDABLE:
                out[key] = value
            elif key == "properties" and isinstance(value, Mapping):
                merged = dict(out[key])
                for name, sub in value.items():
                    if name in merged and merged[name] != sub:
                        raise self.refuse(
                            path,
                            f"property {name!r} is given two different schemas (in allOf or "
                            "beside a $ref); Gemini's schema cannot express both at once",
                        )
                    merged[name] = sub
                out[key] = merged
            elif key == "required" and isinstance(value, list):
                out[key] = list(dict.fromkeys([*out[key], *value]))
            elif key == "type":
                first = [out[key]] if isinstance(out[key], str) else list(out[key])
                second = [value] if isinstance(value, str) else list(value)
                both = [k for k in first if k in second]
                if not both:
                    raise self.refuse(path, f"no value can be both {first} and {second}")
                out[key] = both[0] if len(both) == 1 else both
            else:
                raise self.refuse(
                    path,
                    f"keyword {key!r} is given two different values ({_shown(out[key])} and "
                    f"{_shown(value)}) in allOf or beside a $ref",
                )
        return out

    def flatten(
        self, node: Mapping[str, Any], path: str, refs: tuple[str, ...]
    ) -> tuple[Mapping[str, Any], tuple[str, ...]]:
        """``node`` with its ``$ref`` inlined and its ``allOf`` merged in, and the references
        followed to get there (a reference met again below is recursive)."""
        while True:
            ref = node.get("$ref")
            if isinstance(ref, str):
                if ref in refs:
                    raise self.refuse(
                        path,
                        f"$ref {ref!r} is recursive; Gemini's schema has no references and a "
                        "recursive one cannot be written out",
                    )
                target = self.target(ref, path)
                if not isinstance(target, Mapping):
                    raise self.refuse(path, f"$ref {ref!r} is a boolean schema")
                siblings = {k: v for k, v in node.items() if k != "$ref"}
                node, refs = self.merge(target, siblings, path), (*refs, ref)
                continue
            members = node.get("allOf")
            if isinstance(members, list):
                merged: Mapping[str, Any] = {}
                for member in members:
                    if not isinstance(member, Mapping):
                        raise self.refuse(path, "allOf holds a boolean schema")
                    flat, refs = self.flatten(member, path, refs)
                    merged = self.merge(merged, flat, path)
                # The node's own keywords last, so its own description and title win.
                node = self.merge(merged, {k: v for k, v in node.items() if k != "allOf"}, path)
                continue
            return node, refs

    # -- projection ---------------------------------------------------------------------------

    def project(
        self, node: Any, path: str, depth: int, refs: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self.refuse(
                path, f"the schema holds more than {MAX_NODES} subschemas once written out"
            )
        if depth > MAX_DEPTH:
            raise self.refuse(path, f"the schema nests deeper than {MAX_DEPTH} levels")
        if not isinstance(node, Mapping):
            raise self.refuse(
                path,
                f"the boolean schema {_shown(node)} (any value, or none) cannot be expressed in "
                "Gemini's schema",
            )
        node, refs = self.flatten(node, path, refs)
        members = node.get("anyOf")
        key = "anyOf"
        if members is None and isinstance(node.get("oneOf"), list):
            members, key = node["oneOf"], "oneOf"
        if isinstance(members, list):
            return self.union(node, members, key, path, depth, refs)
        kinds = _kinds(node)
        nullable = "null" in kinds and len(kinds) > 1
        kinds = [k for k in kinds if k != "null"] if nullable else kinds
        if not kinds:
            raise self.refuse(
                path,
                'a value of any type (no "type") cannot be expressed in Gemini\'s schema',
            )
        if len(kinds) > 1:
            if not path:
                raise self.refuse(path, "the root schema must be one object, not a union")
            # A union of types: one member per type, with the keywords of that type.
            split = [
                {
                    k: v
                    for k, v in node.items()
                    if k not in ("type", "description", "title", "default")
                }
                | {"type": kind}
                for kind in kinds
            ]
            out: dict[str, Any] = {
                "anyOf": [
                    self.project(member, f"{path}({kind})", depth + 1, refs)
                    for member, kind in zip(split, kinds, strict=True)
                ]
            }
            self.annotate(node, out, [], path)
            if nullable:
                out["nullable"] = True
            return out
        return self.single(node, kinds[0], nullable, path, depth, refs)

    def union(
        self,
        node: Mapping[str, Any],
        members: list[Any],
        key: str,
        path: str,
        depth: int,
        refs: tuple[str, ...],
    ) -> dict[str, Any]:
        if not path:
            raise self.refuse(path, f"the root schema must be one object, not an {key}")
        if "type" in node:
            raise self.refuse(path, f'"type" beside {key} cannot be expressed in Gemini\'s schema')
        rest = {k: v for k, v in node.items() if k != key}
        kept = [m for m in members if not _is_null_schema(m)]
        nullable = len(kept) < len(members)
        if key == "oneOf" and len(kept) > 1:
            self.note(
                path,
                "oneOf is sent as anyOf (Gemini's schema has no oneOf); a value matching more "
                "than one member is still refused by the host",
            )
        if not kept:
            return self.single(rest, "null", False, path, depth, refs)
        if len(kept) == 1:
            only = kept[0]
            if not isinstance(only, Mapping):
                raise self.refuse(path, f"{key} holds the boolean schema {_shown(only)}")
            flat, inner = self.flatten(only, path, refs)
            result = self.project(self.merge(flat, rest, path), path, depth, inner)
            if nullable:
                result["nullable"] = True
            return result
        extra = [k for k in rest if k not in _OVERRIDABLE]
        if extra:
            raise self.refuse(
                path,
                f"keywords {', '.join(sorted(extra))} beside {key} cannot be expressed in "
                "Gemini's schema",
            )
        out: dict[str, Any] = {
            "anyOf": [
                self.project(member, f"{path}({key} {i})", depth + 1, refs)
                for i, member in enumerate(kept)
            ]
        }
        self.annotate(rest, out, [], path)
        if nullable:
            out["nullable"] = True
        return out

    def annotate(
        self, node: Mapping[str, Any], out: dict[str, Any], extras: list[str], path: str
    ) -> None:
        """Copy ``title`` and ``description``; append ``default`` and ``extras`` to the
        description."""
        if isinstance(node.get("title"), str):
            out["title"] = node["title"]
        default = node.get("default")
        said = [*extras]
        if default is not None:
            said.append(f"default: {_shown(default)}")
        description = node.get("description")
        text = description if isinstance(description, str) else ""
        if said:
            suffix = "; ".join(said)
            text = f"{text} ({suffix})" if text else suffix
        if text:
            out["description"] = text

    def single(
        self,
        node: Mapping[str, Any],
        kind: str,
        nullable: bool,
        path: str,
        depth: int,
        refs: tuple[str, ...],
    ) -> dict[str, Any]:
        gemini = GEMINI_TYPES.get(kind)
        if gemini is None:
            raise self.refuse(
                path,
                f"type {_shown(kind)} is not a JSON Schema type (valid: {', '.join(GEMINI_TYPES)})",
            )
        out: dict[str, Any] = {"type": gemini}
        extras: list[str] = []
        nullable = self.values(node, kind, out, extras, path) or nullable
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt not in _INFORMATIONAL_FORMATS:
            if fmt in _FORMATS.get(kind, ()):
                out["format"] = fmt
            else:
                extras.append(f"format: {fmt}")
                self.note(path, f"format {fmt!r} is written into the description")
        own = _KIND_KEYWORDS[kind]
        for key, value in node.items():
            if key in _HANDLED or key in _NAMED_STRUCTURE:
                continue
            if key in own:
                out[key] = value
            elif key in _REFUSED:
                raise self.refuse(path, f"keyword {key!r} cannot be expressed in Gemini's schema")
            elif key in _DESCRIBED and _applies(key, kind):
                extras.append(f"{key}: {_shown(value)}")
                self.note(path, f"{key} is written into the description")
            # Anything else is an annotation, or a keyword of another type: it changes nothing.
        if kind == "object":
            self.object(node, out, extras, path, depth, refs)
        elif kind == "array":
            self.array(node, out, path, depth, refs)
        self.annotate(node, out, extras, path)
        if nullable:
            out["nullable"] = True
        return out

    def values(
        self,
        node: Mapping[str, Any],
        kind: str,
        out: dict[str, Any],
        extras: list[str],
        path: str,
    ) -> bool:
        """Project ``enum`` and ``const``; True when they allow ``null``."""
        values: list[Any] | None = None
        if isinstance(node.get("enum"), list):
            values = list(node["enum"])
        elif "const" in node:
            values = [node["const"]]
        if values is None:
            return False
        nullable = None in values
        values = [v for v in values if v is not None]
        if kind == "string" and all(isinstance(v, str) for v in values):
            out["enum"] = values
        elif values:
            shown = ", ".join(_shown(v) for v in values)
            extras.append(f"one of: {shown}" if len(values) > 1 else f"must be {shown}")
            self.note(
                path,
                "the allowed values are written into the description (Gemini's enum holds "
                "strings only)",
            )
        return nullable

    def object(
        self,
        node: Mapping[str, Any],
        out: dict[str, Any],
        extras: list[str],
        path: str,
        depth: int,
        refs: tuple[str, ...],
    ) -> None:
        properties = node.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping) and not extra:
            extra = True  # the empty schema: any value
        typed_extra = isinstance(extra, Mapping)
        # No declared properties and other keys allowed: an open dict. The root without
        # properties is a function without parameters, unless it opens its keys explicitly.
        open_dict = not properties and (
            extra is True or typed_extra or (extra is None and bool(path))
        )
        if not path:
            for name in properties:
                if not PARAMETER_NAME.fullmatch(name):
                    raise self.refuse(
                        path,
                        f"parameter name {name!r} is refused by Gemini (a letter or _ first, "
                        "then letters, digits and _, at most 64)",
                    )
        projected = {
            name: self.project(sub, f"{path}.{name}" if path else name, depth + 1, refs)
            for name, sub in properties.items()
        }
        if projected:
            out["properties"] = projected
        required = node.get("required")
        if isinstance(required, list) and required:
            missing = [name for name in required if name not in properties]
            if missing:
                raise self.refuse(
                    path,
                    f"required {', '.join(map(repr, missing))} has no schema in properties, so "
                    "Gemini's schema cannot ask for it",
                )
            out["required"] = list(required)
        if not (open_dict or typed_extra):
            return
        if self.open_objects:
            out["additionalProperties"] = (
                self.project(extra, f"{path}{{*}}", depth + 1, refs) if typed_extra else True
            )
        elif open_dict:
            raise self.refuse(
                path,
                "an object without declared properties (an open dict such as dict[str, T]) "
                "cannot be expressed in Gemini's schema on models without additionalProperties",
            )
        else:
            extras.append(f"other keys may be given too, each {_shown(extra)}")
            self.note(
                path,
                "the schema of other keys beside the declared properties (additionalProperties) "
                "is written into the description",
            )

    def array(
        self,
        node: Mapping[str, Any],
        out: dict[str, Any],
        path: str,
        depth: int,
        refs: tuple[str, ...],
    ) -> None:
        items = node.get("items")
        if isinstance(items, Sequence) and not isinstance(items, str | Mapping):
            raise self.refuse(path, "a tuple (items as a list) cannot be expressed")
        if not isinstance(items, Mapping) or not items:
            raise self.refuse(
                path,
                "a list whose items have no schema cannot be expressed in Gemini's schema "
                "(ARRAY needs items)",
            )
        out["items"] = self.project(items, f"{path}[]", depth + 1, refs)


def _applies(key: str, kind: str) -> bool:
    if key in ("exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
        return kind in ("number", "integer")
    if key in ("uniqueItems", "minContains", "maxContains"):
        return kind == "array"
    return kind == "object"


def project_schema(schema: Mapping[str, Any], *, open_objects: bool = False) -> GeminiSchema:
    """Project a canonical parameter schema into Gemini's ``Schema`` subset.

    :param schema: the tool's canonical (JSON Schema) parameters; the root is an object.
    :param open_objects: the model takes ``additionalProperties`` (``[providers.gemini]
        additional_properties``), so open dicts are sent as such.
    :returns: the projection with its verdict, notes and problems (see the module
        documentation). A root without properties is a function without parameters (``{}``).
    """
    projector = _Projector(schema, open_objects=open_objects)
    if not isinstance(schema, Mapping) or ("object" not in _kinds(schema) and "$ref" not in schema):
        return GeminiSchema(None, problems=("the root schema must be an object schema",))
    try:
        projected = projector.project(schema, "", 0)
    except _Refused:
        return GeminiSchema(None, problems=tuple(dict.fromkeys(projector.problems)))
    notes = tuple(dict.fromkeys(projector.notes))
    if not projected.get("properties") and "additionalProperties" not in projected:
        return GeminiSchema({}, notes)  # a function without parameters
    return GeminiSchema(projected, notes)
