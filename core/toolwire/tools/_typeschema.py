"""Python types to JSON Schema: the parameter schemas of function tools.

The schemas are inline (no ``$ref``), so every provider reads them the same way; a recursive type
is refused. An optional value (``X | None`` with a default) is written as ``X``: a ``null`` from the
model means "left out", so the default applies (see ``_validation``).
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import datetime as dt
import enum
import math
import sys
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any, Literal, NewType, Union, get_args, get_origin

import attrs

from ._docstrings import parse_docstring
from ._errors import ToolDefinitionError

JSONSchema = dict[str, Any]

SUPPORTED_TYPES = (
    "str, int, float, bool, None, Literal, Enum, list/tuple/set, dict[str, T], unions, "
    "attrs classes, dataclasses, TypedDict, datetime/date/time, UUID, Path, Any"
)

_SEQUENCES: frozenset[Any] = frozenset(
    {list, cabc.Sequence, cabc.MutableSequence, cabc.Iterable, cabc.Collection}
    | {list, typing.Sequence, typing.MutableSequence, typing.Iterable, typing.Collection}
)
_SETS: frozenset[Any] = frozenset(
    {set, frozenset, cabc.Set, cabc.MutableSet}
    | {set, frozenset, typing.AbstractSet, typing.MutableSet}
)
_MAPPINGS: frozenset[Any] = frozenset(
    {dict, cabc.Mapping, cabc.MutableMapping} | {dict, typing.Mapping, typing.MutableMapping}
)
_STRING_FORMATS: tuple[tuple[type, str], ...] = (
    (dt.datetime, "date-time"),
    (dt.date, "date"),
    (dt.time, "time"),
)


def _uuid_class() -> type | None:
    """``uuid.UUID`` once something imported ``uuid``, else None: until then no type or value
    can be one, and building a tool need not pay for the import."""
    module = sys.modules.get("uuid")
    return None if module is None else module.UUID


def _string_formats() -> tuple[tuple[type, str], ...]:
    """The types a schema writes as strings with a ``format``, most specific first."""
    uuid = _uuid_class()
    special = ((uuid, "uuid"),) if uuid is not None else ()
    return (*_STRING_FORMATS, *special, (PurePath, "path"))


_JSON_TYPE = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}


def is_union(tp: Any) -> bool:
    """True for ``X | Y`` and ``typing.Union[X, Y]`` (``Optional`` included)."""
    origin = get_origin(tp)
    return origin is Union or origin is types.UnionType


def strip_annotated(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    """The type under ``Annotated`` (nested ones flattened) and its metadata, outermost first."""
    metadata: list[Any] = []
    while get_origin(tp) is typing.Annotated:
        metadata.extend(tp.__metadata__)
        tp = get_args(tp)[0]
    return tp, tuple(metadata)


_TYPEDDICT_MARKERS = (typing.Required, typing.NotRequired)


def _unwrap_typeddict_marker(tp: Any) -> Any:
    while get_origin(tp) in _TYPEDDICT_MARKERS:
        tp = get_args(tp)[0]
    return tp


def json_default(value: Any) -> tuple[bool, Any]:
    """``(True, json)`` when ``value`` can be a schema's default, else ``(False, None)``."""
    if value is None or isinstance(value, bool | str):
        return True, value
    if isinstance(value, enum.Enum):
        return json_default(value.value)
    if isinstance(value, int):
        return True, value
    if isinstance(value, float):
        return (True, value) if math.isfinite(value) else (False, None)
    if isinstance(value, dt.date | dt.time):
        return True, value.isoformat()
    uuid = _uuid_class()
    if isinstance(value, PurePath) or (uuid is not None and isinstance(value, uuid)):
        return True, str(value)
    if isinstance(value, list | tuple | set | frozenset):
        items = [json_default(item) for item in value]
        if all(ok for ok, _ in items):
            converted = [item for _, item in items]
            if isinstance(value, set | frozenset):
                try:
                    converted.sort()
                except TypeError:
                    return False, None
            return True, converted
        return False, None
    if isinstance(value, Mapping):
        pairs = {key: json_default(item) for key, item in value.items()}
        if all(isinstance(key, str) and ok for key, (ok, _) in pairs.items()):
            return True, {key: item for key, (_, item) in pairs.items()}
        return False, None
    if attrs.has(type(value)):
        return json_default(attrs.asdict(value, recurse=False))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json_default({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    return False, None


def annotated_description(tp: Any) -> str | None:
    """The description written in ``Annotated[T, "…"]`` (None when there is none)."""
    _, metadata = strip_annotated(tp)
    texts = [item.strip() for item in metadata if isinstance(item, str) and item.strip()]
    return " ".join(texts) or None


def apply_metadata(schema: JSONSchema, metadata: tuple[Any, ...], where: str) -> JSONSchema:
    """Merge ``Annotated`` metadata into a schema: text is the description, a mapping adds keywords.

    Other metadata (markers of other libraries) is ignored; ``Inject`` markers are handled by the
    caller, which knows whether the parameter may be hidden.
    """
    texts: list[str] = []
    for item in metadata:
        if isinstance(item, str):
            if item.strip():
                texts.append(item.strip())
        elif isinstance(item, Mapping):
            for key in item:
                if not isinstance(key, str):
                    raise ToolDefinitionError(
                        f"{where}: schema keywords in Annotated must be strings; got {key!r}"
                    )
            schema = {**schema, **item}
    if texts:
        schema = {**schema, "description": " ".join(texts)}
    return schema


class SchemaBuilder:
    """Turns the types of one tool's parameters into inline JSON Schemas."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self._building: list[type] = []

    def fail(self, where: str, message: str) -> ToolDefinitionError:
        """An error naming the tool's function and the parameter (and nested field) at fault."""
        return ToolDefinitionError(f"{self.owner}, {where}: {message}")

    def schema(self, tp: Any, where: str) -> JSONSchema:
        """The JSON Schema of values of type ``tp``; ``where`` names the parameter for errors."""
        base, metadata = strip_annotated(tp)
        return apply_metadata(self._schema(base, where), metadata, f"{self.owner}, {where}")

    def optional_schema(self, tp: Any, where: str) -> JSONSchema:
        """The schema of a parameter with a default: ``None`` is left out of its union."""
        base, metadata = strip_annotated(tp)
        if is_union(base):
            members = [m for m in get_args(base) if m is not type(None)]
            if members and len(members) < len(get_args(base)):
                inner = members[0] if len(members) == 1 else Union[tuple(members)]  # noqa: UP007
                return apply_metadata(self.schema(inner, where), metadata, f"{self.owner}, {where}")
        return self.schema(tp, where)

    def _schema(self, tp: Any, where: str) -> JSONSchema:
        if tp is Any or tp is object:
            return {}
        if tp is None or tp is type(None):
            return {"type": "null"}
        if tp in _JSON_TYPE:
            return {"type": _JSON_TYPE[tp]}
        if isinstance(tp, NewType):
            return self.schema(tp.__supertype__, where)
        if isinstance(tp, typing.TypeVar):
            raise self.fail(where, f"type variable {tp} has no JSON Schema; use a concrete type")
        origin = get_origin(tp)
        args = get_args(tp)
        if origin is Literal:
            return self._literal(args, where)
        if is_union(tp):
            return self._union(args, where)
        if isinstance(tp, type):
            if issubclass(tp, enum.Enum):
                return self._enum(tp, where)
            for kind, fmt in _string_formats():
                if issubclass(tp, kind):
                    return {"type": "string", "format": fmt}
            if attrs.has(tp) or dataclasses.is_dataclass(tp):
                return self._record(tp, where)
            if typing.is_typeddict(tp):
                return self._typeddict(tp, where)
            for py, name in _JSON_TYPE.items():
                if py is not type(None) and issubclass(tp, py):
                    return {"type": name}
        if tp in _SEQUENCES or origin in _SEQUENCES:
            return self._array(args, where)
        if tp is tuple or origin is tuple:
            return self._tuple(args, where)
        if tp in _SETS or origin in _SETS:
            schema = self._array(args, where)
            schema["uniqueItems"] = True
            return schema
        if tp in _MAPPINGS or origin in _MAPPINGS:
            return self._mapping(args, where)
        raise self.fail(
            where,
            f"type {_type_name(tp)} cannot be expressed as JSON Schema; "
            f"supported: {SUPPORTED_TYPES}",
        )

    def _literal(self, values: tuple[Any, ...], where: str) -> JSONSchema:
        flat: list[Any] = []
        for value in values:
            if isinstance(value, enum.Enum):
                value = value.value
            if value is not None and not isinstance(value, str | int | float | bool):
                raise self.fail(where, f"Literal value {value!r} is not a JSON scalar")
            flat.append(value)
        schema: JSONSchema = {"enum": flat}
        kinds = sorted({_JSON_TYPE[type(v)] for v in flat if type(v) in _JSON_TYPE})
        if kinds == ["integer", "number"]:
            kinds = ["number"]
        if len(kinds) == 1:
            schema = {"type": kinds[0], "enum": flat}
        elif kinds:
            schema = {"type": kinds, "enum": flat}
        return schema

    def _enum(self, tp: type[enum.Enum], where: str) -> JSONSchema:
        values = [member.value for member in tp]
        for value in values:
            if not isinstance(value, str | int) or isinstance(value, bool):
                raise self.fail(
                    where,
                    f"enum {tp.__name__} has value {value!r}; only str and int values are "
                    "expressible in JSON Schema",
                )
        schema = self._literal(tuple(values), where)
        doc = parse_docstring(_own_doc(tp)).description
        if doc:
            schema["description"] = doc
        return schema

    def _union(self, members: tuple[Any, ...], where: str) -> JSONSchema:
        schemas: list[JSONSchema] = []
        for member in members:
            sub = self.schema(member, where)
            for item in sub.get("anyOf", [sub]) if set(sub) == {"anyOf"} else [sub]:
                if item not in schemas:
                    schemas.append(item)
        if {} in schemas:
            return {}
        return {"anyOf": schemas}

    def _array(self, args: tuple[Any, ...], where: str) -> JSONSchema:
        if not args or args[0] is Any:
            return {"type": "array"}
        return {"type": "array", "items": self.schema(args[0], f"{where} (items)")}

    def _tuple(self, args: tuple[Any, ...], where: str) -> JSONSchema:
        if not args:
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:
            return self._array(args[:1], where)
        if args == ((),):
            return {"type": "array", "maxItems": 0}
        items = [self.schema(arg, f"{where} (item {i})") for i, arg in enumerate(args)]
        size = len(items)
        if all(item == items[0] for item in items):
            return {"type": "array", "items": items[0], "minItems": size, "maxItems": size}
        return {
            "type": "array",
            "prefixItems": items,
            "items": False,
            "minItems": size,
            "maxItems": size,
        }

    def _mapping(self, args: tuple[Any, ...], where: str) -> JSONSchema:
        if not args:
            return {"type": "object"}
        key, value = args
        key_base, _ = strip_annotated(key)
        if key_base is not str:
            raise self.fail(
                where,
                f"mapping keys of type {_type_name(key)} cannot be expressed; JSON object keys "
                "are strings (use dict[str, T])",
            )
        if value is Any or value is object:
            return {"type": "object"}
        return {
            "type": "object",
            "additionalProperties": self.schema(value, f"{where} (values)"),
        }

    def _enter(self, tp: type, where: str) -> None:
        if tp in self._building:
            chain = " -> ".join(t.__name__ for t in [*self._building, tp])
            raise self.fail(
                where, f"recursive type {chain} cannot be expressed as an inline JSON Schema"
            )
        self._building.append(tp)

    def _record(self, tp: type, where: str) -> JSONSchema:
        self._enter(tp, where)
        try:
            hints = _hints(tp, self, where)
            doc = parse_docstring(_own_doc(tp))
            properties: JSONSchema = {}
            required: list[str] = []
            if attrs.has(tp):
                for field in attrs.fields(tp):
                    if not field.init:
                        continue
                    key = field.alias or field.name
                    field_where = f"{where} (field {tp.__name__}.{field.name})"
                    annotation = hints.get(field.name, field.type)
                    if annotation is None:
                        raise self.fail(field_where, "the field has no type annotation")
                    has_default = field.default is not attrs.NOTHING
                    default: Any = _attrs_default(field.default)
                    text = field.metadata.get("description") or doc.attributes.get(field.name)
                    properties[key] = self._property(
                        annotation, field_where, has_default, default, text
                    )
                    if not has_default:
                        required.append(key)
            else:
                for dfield in dataclasses.fields(tp):
                    if not dfield.init:
                        continue
                    field_where = f"{where} (field {tp.__name__}.{dfield.name})"
                    annotation = hints.get(dfield.name, dfield.type)
                    has_default = (
                        dfield.default is not dataclasses.MISSING
                        or dfield.default_factory is not dataclasses.MISSING
                    )
                    default = _MISSING
                    if dfield.default is not dataclasses.MISSING:
                        default = dfield.default
                    elif dfield.default_factory in (list, dict, set, tuple, frozenset):
                        default = dfield.default_factory()
                    text = dfield.metadata.get("description") or doc.attributes.get(dfield.name)
                    properties[dfield.name] = self._property(
                        annotation, field_where, has_default, default, text
                    )
                    if not has_default:
                        required.append(dfield.name)
            return _object(properties, required, doc.description)
        finally:
            self._building.pop()

    def _typeddict(self, tp: type, where: str) -> JSONSchema:
        self._enter(tp, where)
        try:
            hints = _hints(tp, self, where)
            doc = parse_docstring(_own_doc(tp))
            required_keys: frozenset[str] = getattr(tp, "__required_keys__", frozenset(hints))
            properties: JSONSchema = {}
            required: list[str] = []
            for key, annotation in hints.items():
                field_where = f"{where} (key {tp.__name__}.{key})"
                # With postponed annotations TypedDict cannot see NotRequired itself (3.11).
                marker = get_origin(annotation)
                if marker is typing.NotRequired:
                    optional = True
                elif marker is typing.Required:
                    optional = False
                else:
                    optional = key not in required_keys
                properties[key] = self._property(
                    _unwrap_typeddict_marker(annotation),
                    field_where,
                    optional,
                    _MISSING,
                    doc.attributes.get(key),
                )
                if not optional:
                    required.append(key)
            return _object(properties, required, doc.description)
        finally:
            self._building.pop()

    def _property(
        self, annotation: Any, where: str, optional: bool, default: Any, text: str | None
    ) -> JSONSchema:
        if optional:
            schema = self.optional_schema(annotation, where)
        else:
            schema = self.schema(annotation, where)
        text = annotated_description(annotation) or text
        if text:
            schema["description"] = text
        if optional and default is not _MISSING:
            ok, value = json_default(default)
            if ok and value is not None:
                schema["default"] = value
        return schema


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


def _attrs_default(default: Any) -> Any:
    if default is attrs.NOTHING:
        return _MISSING
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        if not default.takes_self and default.factory in (list, dict, set, tuple, frozenset):
            return default.factory()
        return _MISSING
    return default


def _object(properties: JSONSchema, required: list[str], description: str) -> JSONSchema:
    schema: JSONSchema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    if description:
        schema["description"] = description
    return schema


def _own_doc(tp: type) -> str | None:
    """The docstring written on ``tp`` itself: not inherited, not generated by dataclasses."""
    doc = vars(tp).get("__doc__")
    if not isinstance(doc, str):
        return None
    if dataclasses.is_dataclass(tp) and doc.startswith(f"{tp.__name__}("):
        return None
    return doc


def _hints(tp: Any, builder: SchemaBuilder, where: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(tp, include_extras=True)
    except Exception as exc:  # NameError, TypeError: annotations that do not resolve
        raise builder.fail(
            where, f"the annotations of {_type_name(tp)} cannot be resolved ({exc})"
        ) from exc


def _type_name(tp: Any) -> str:
    if isinstance(tp, type):
        return tp.__qualname__
    return str(tp).replace("typing.", "")


def function_hints(function: Callable[..., Any], owner: str) -> dict[str, Any]:
    """The resolved annotations of a function (``Annotated`` kept), or a definition error."""
    try:
        return typing.get_type_hints(function, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(
            f"{owner}: the annotations cannot be resolved ({type(exc).__name__}: {exc}); "
            "define the types they name before the function"
        ) from exc
