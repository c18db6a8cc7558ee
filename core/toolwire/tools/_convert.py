"""cattrs converters of the tool model: validated JSON arguments in, return values out.

Imported on the first call of a tool, not when tools are defined, so declaring tools stays cheap.
"""

from __future__ import annotations

import collections.abc as cabc
import datetime as dt
import enum
import typing
import uuid
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any, Literal, get_args, get_origin

import cattrs
from cattrs.errors import BaseValidationError

from ._typeschema import SchemaBuilder, is_union, strip_annotated
from ._validation import compiled_validator

Structure = Callable[[Any], Any]

_PASSTHROUGH_SCALARS: frozenset[Any] = frozenset({str, bool, Any, object, type(None), None})


def _is_passthrough(tp: Any) -> bool:
    """True when a validated JSON value already is a value of ``tp`` (no structuring needed)."""
    tp, _ = strip_annotated(tp)
    if tp in _PASSTHROUGH_SCALARS:
        return True
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is Literal:
        return all(not isinstance(v, enum.Enum) for v in args)
    if is_union(tp):
        return all(_is_passthrough(arg) for arg in args)
    if tp in (list, dict) or origin in (list, cabc.Sequence):
        return all(_is_passthrough(arg) for arg in args)
    if origin in (dict, cabc.Mapping):
        return len(args) == 2 and _is_passthrough(args[1])
    return False


def _to_int(value: Any) -> Any:
    # JSON Schema's "integer" accepts 1.0; the function gets the int it declared.
    return int(value) if type(value) is not int else value


def _to_float(value: Any) -> Any:
    # A JSON number without a fraction arrives as int; the function declared float.
    return float(value) if type(value) is int else value


def _none_or(structure: Structure) -> Structure:
    def optional(value: Any) -> Any:
        return None if value is None else structure(value)

    return optional


def _enum_lookup(kind: type[enum.Enum]) -> Structure:
    members = {member.value: member for member in kind}

    def structure(value: Any) -> Any:
        try:
            return members[value]
        except (KeyError, TypeError):
            return kind(value)

    return structure


def _two_arguments(structure: Structure) -> Callable[[Any, Any], Any]:
    def hook(value: Any, _: Any) -> Any:
        return structure(value)

    return hook


def _structure_string_type(kind: Callable[[str], Any]) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError(f"expected a string, got {type(value).__name__}")
        return kind(value)

    return structure


def _structure_datetime(value: Any, _: Any) -> dt.datetime:
    if not isinstance(value, str):
        raise ValueError(f"expected a date-time string, got {type(value).__name__}")
    return dt.datetime.fromisoformat(value)


def _make_argument_converter() -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(int, lambda value, _: _to_int(value))
    converter.register_structure_hook(float, lambda value, _: _to_float(value))
    converter.register_structure_hook(dt.datetime, _structure_datetime)
    converter.register_structure_hook(dt.date, _structure_string_type(dt.date.fromisoformat))
    converter.register_structure_hook(dt.time, _structure_string_type(dt.time.fromisoformat))
    converter.register_structure_hook(uuid.UUID, _structure_string_type(uuid.UUID))
    converter.register_structure_hook_func(
        lambda tp: isinstance(tp, type) and issubclass(tp, PurePath),
        lambda value, tp: tp(value),
    )
    converter.register_structure_hook_factory(
        lambda tp: isinstance(tp, type) and issubclass(tp, enum.Enum),
        lambda tp: _two_arguments(_enum_lookup(tp)),
    )
    converter.register_structure_hook_factory(is_union, lambda tp: _UnionHook(tp, converter))
    converter.register_structure_hook_func(
        lambda tp: strip_annotated(tp)[0] is not tp,
        lambda value, tp: converter.structure(value, strip_annotated(tp)[0]),
    )
    return converter


class _UnionHook:
    """Structures a union member by member: the first whose schema accepts the value wins."""

    def __init__(self, tp: Any, converter: cattrs.Converter) -> None:
        self.members = get_args(tp)
        self.passthrough = all(_is_passthrough(m) for m in self.members)
        self.others = [m for m in self.members if m is not type(None)]
        self.converter = converter
        self._schemas: list[Any] | None = None

    def __call__(self, value: Any, _: Any) -> Any:
        if value is None and type(None) in self.members:
            return None
        if self.passthrough:
            return value
        if len(self.others) == 1:
            return self.converter.structure(value, self.others[0])
        if self._schemas is None:
            builder = SchemaBuilder("union member")
            self._schemas = [builder.schema(m, "member") for m in self.members]
        for member, schema in zip(self.members, self._schemas, strict=True):
            try:
                compiled_validator(schema)(value)
            except ValueError:
                continue
            return self.converter.structure(value, member)
        names = ", ".join(getattr(m, "__name__", str(m)) for m in self.members)
        raise ValueError(f"the value matches none of {names}")


def _make_result_converter() -> cattrs.Converter:
    converter = cattrs.Converter(
        unstruct_collection_overrides={
            typing.AbstractSet: list,
            frozenset: list,
            set: list,
            tuple: list,
        }
    )
    converter.register_unstructure_hook(dt.datetime, lambda value: value.isoformat())
    converter.register_unstructure_hook(dt.date, lambda value: value.isoformat())
    converter.register_unstructure_hook(dt.time, lambda value: value.isoformat())
    converter.register_unstructure_hook(uuid.UUID, str)
    converter.register_unstructure_hook_func(
        lambda tp: isinstance(tp, type) and issubclass(tp, PurePath), str
    )
    return converter


_argument_converter: cattrs.Converter | None = None
_result_converter: cattrs.Converter | None = None


def argument_converter() -> cattrs.Converter:
    """The converter that structures validated JSON arguments into parameter types."""
    global _argument_converter
    if _argument_converter is None:
        _argument_converter = _make_argument_converter()
    return _argument_converter


def structure_function(tp: Any) -> Structure | None:
    """A one-argument function turning a validated JSON value into a ``tp``; None for as-is."""
    if _is_passthrough(tp):
        return None
    base, _ = strip_annotated(tp)
    if base is int:
        return _to_int
    if base is float:
        return _to_float
    if is_union(base):
        members = [m for m in get_args(base) if m is not type(None)]
        if len(members) == 1:
            inner = structure_function(members[0])
            if inner is None:
                return None
            return _none_or(inner)
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return _enum_lookup(base)
    converter = argument_converter()
    hook = converter.get_structure_hook(base)

    def structure(value: Any) -> Any:
        return hook(value, base)

    return structure


def structure_error_text(exc: BaseException) -> str:
    """What went wrong structuring a value, with cattrs' paths where it has them."""
    if isinstance(exc, BaseValidationError):
        return "; ".join(cattrs.transform_error(exc, path=""))
    return f"{type(exc).__name__}: {exc}"


def unstructure_result(value: Any) -> Any:
    """A return value as JSON-ready data (attrs instances, enums, dates, sets …)."""
    global _result_converter
    if _result_converter is None:
        _result_converter = _make_result_converter()
    data = _result_converter.unstructure(value)
    if isinstance(data, Mapping) and not isinstance(data, dict):
        data = dict(data)
    return data
