"""Validators for the plainest parameter schemas, made without generating code.

Most tools take a few named strings, numbers and flags: an object of typed properties, some
required, perhaps a pattern or a length. fastjsonschema writes and compiles a Python function
for every schema (a millisecond or two, paid at a tool's first call, in the middle of a
conversation); a schema made only of the keywords below is checked instead by a closure built
from it directly, in microseconds, accepting exactly what fastjsonschema's validator accepts:

- ``type``: one of ``object``, ``string``, ``integer``, ``number``, ``boolean``, ``null``, or a
  list of them (``integer`` admits an integral float, neither number kind admits a bool);
- for ``object``: ``properties`` (each a plain schema), ``required`` (names),
  ``additionalProperties`` (``true`` or ``false``);
- for ``string``: ``pattern`` (run by RE2, as every pattern is), ``minLength``, ``maxLength``,
  ``enum`` (strings);
- annotations only: ``description``, ``title``, ``default`` (never written into the
  arguments), ``examples``, ``$comment``; a schema of annotations alone admits anything.

Anything else (arrays, ``anyOf``, ``format``, numeric bounds, ``$ref`` …) is compiled by
fastjsonschema, as are the validators that report every error: a call that fails here is
judged again by them, so refusals read the same whichever validator said no.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, Final, NoReturn

from ._patterns import linear_pattern

Check = Callable[[Any], Any]
"""Checks a value against one schema node: returns it, or raises ``JsonSchemaValueException``."""

_ANNOTATIONS: Final = frozenset({"description", "title", "default", "examples", "$comment"})
_OBJECT_KEYS: Final = frozenset({"properties", "required", "additionalProperties"})
_STRING_KEYS: Final = frozenset({"pattern", "minLength", "maxLength", "enum"})


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    if isinstance(value, (int, float)):
        return not isinstance(value, bool)
    # fastjsonschema admits a Decimal too; without the module imported there is none to admit.
    decimal = sys.modules.get("decimal")
    return decimal is not None and isinstance(value, decimal.Decimal)


_TYPES: Final[dict[str, Callable[[Any], bool]]] = {
    "object": lambda value: isinstance(value, dict),
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
}


def _fail(message: str, value: Any, rule: str) -> NoReturn:
    from fastjsonschema import JsonSchemaValueException

    raise JsonSchemaValueException(message, value=value, rule=rule)


def plain_validator(schema: Mapping[str, Any]) -> Callable[[Any], Any] | None:
    """A validator of ``schema`` (already in the form fastjsonschema is given) when it is made
    only of the keywords this module knows, else None. The validator returns the value it was
    given, or raises ``JsonSchemaValueException`` (a ``ValueError``).

    :raises PatternError: for a ``pattern`` RE2 cannot compile, ``re.error`` for one Python's
        cannot (as the compiled path does).
    """
    return _check(schema)  # each check returns the value it was given


def _types(node: Mapping[str, Any]) -> tuple[str, ...] | None:
    kind = node.get("type")
    names = [kind] if isinstance(kind, str) else kind
    if not isinstance(names, list) or not names:
        return None
    if any(not isinstance(name, str) or name not in _TYPES for name in names):
        return None
    if len(set(names)) != len(names):
        return None
    return tuple(names)


def _check(node: Any) -> Check | None:
    """The check of one schema node, or None when the node is not plain."""
    if not isinstance(node, Mapping):
        return None
    keys = node.keys() - _ANNOTATIONS
    if not keys:
        return _anything
    types = _types(node)
    if types is None:
        return None
    keys = keys - {"type"}
    if keys & _OBJECT_KEYS:
        if types != ("object",) or not keys <= _OBJECT_KEYS:
            return None
        return _object_check(node)
    if keys:
        if types != ("string",) or not keys <= _STRING_KEYS:
            return None
        return _string_check(node)
    tests = tuple(_TYPES[name] for name in types)
    if len(tests) == 1:
        test = tests[0]

        def check_type(value: Any) -> Any:
            if not test(value):
                _fail(f"data must be {types[0]}", value, "type")
            return value

        return check_type

    def check_types(value: Any) -> Any:
        if not any(test(value) for test in tests):
            _fail(f"data must be {' or '.join(types)}", value, "type")
        return value

    return check_types


def _anything(value: Any) -> Any:
    return value


def _object_check(node: Mapping[str, Any]) -> Check | None:
    properties = node.get("properties", {})
    required = node.get("required", [])
    extra = node.get("additionalProperties", True)
    if not isinstance(properties, Mapping) or not isinstance(extra, bool):
        return None
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        return None
    checks: dict[str, Check] = {}
    for name, sub in properties.items():
        check = _check(sub)
        if check is None:
            return None
        if check is not _anything:
            checks[name] = check
    needed = frozenset(required)
    known = frozenset(properties)

    def check_object(value: Any) -> Any:
        if not isinstance(value, dict):
            _fail("data must be object", value, "type")
        if needed and not value.keys() >= needed:
            _fail("data must contain the required properties", value, "required")
        if not extra and not value.keys() <= known:
            _fail("data must not contain other properties", value, "additionalProperties")
        for name, check in checks.items():
            if name in value:
                check(value[name])
        return value

    return check_object


def _count(node: Mapping[str, Any], key: str) -> tuple[bool, int | None]:
    """A length bound: whether it is plain (absent, or a count), and its value."""
    if key not in node:
        return True, None
    bound = node[key]
    if isinstance(bound, bool) or not isinstance(bound, int) or bound < 0:
        return False, None
    return True, bound


def _string_check(node: Mapping[str, Any]) -> Check | None:
    plain_min, shortest = _count(node, "minLength")
    plain_max, longest = _count(node, "maxLength")
    if not (plain_min and plain_max):
        return None
    pattern = node.get("pattern")
    if "pattern" in node and not isinstance(pattern, str):
        return None
    choices: frozenset[str] | None = None
    if "enum" in node:
        listed = node["enum"]
        if not isinstance(listed, list) or not listed:
            return None
        if not all(isinstance(choice, str) for choice in listed):
            return None
        choices = frozenset(listed)
    search = None
    if pattern is not None:
        # fastjsonschema's compiler has Python's re compile the pattern (an unescaped $ read as
        # \Z) and refuses the schema when it cannot: so is it refused here.
        re.compile(re.sub(r"(?<!\\)\$", r"\\Z", pattern))
        search = linear_pattern(pattern).search

    def check_string(value: Any) -> Any:
        if not isinstance(value, str):
            _fail("data must be string", value, "type")
        if choices is not None and value not in choices:
            _fail("data must be one of the values listed", value, "enum")
        if shortest is not None and len(value) < shortest:
            _fail("data is too short", value, "minLength")
        if longest is not None and len(value) > longest:
            _fail("data is too long", value, "maxLength")
        if search is not None and not search(value):
            _fail("data must match the pattern", value, "pattern")
        return value

    return check_string
