"""What the model reads of a tool: the schema, without what the copy grammar already holds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from toolwire.tools import FunctionSpec

# Keywords whose value is one subschema, a list of them, or a map of names to them.
_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def without_held_patterns(function: FunctionSpec) -> FunctionSpec:
    """``function`` with ``pattern`` left out of every string schema the copy grammar holds.

    Under the copy grammar (see ``copies`` of :func:`~toolwire_llamacpp.tool_grammar`), a string
    without ``format`` can only be a span of the user's words that matches its ``pattern``: the
    pattern is the grammar's to keep, and its text (a long regular expression is a hundred tokens
    of the system prompt) is no help to a small model. Every question is shown the same schema,
    so the system prompt of a set of tools stays the same and its evaluated state is reused; a
    question with no span that matches leaves the string free, and the host's refusal of what
    does not match points to the parameter's description.
    """
    parameters = _stripped(function.parameters)
    if parameters is function.parameters:
        return function
    return attrs.evolve(function, parameters=parameters)


def _stripped(schema: Any) -> Any:
    """``schema`` without held patterns; the same object when it has none."""
    if not isinstance(schema, Mapping):
        return schema
    changed: dict[str, Any] = {}
    if "format" not in schema and _is_string(schema) and isinstance(schema.get("pattern"), str):
        changed["pattern"] = None
    for key in _ONE:
        if key in schema:
            sub = _stripped(schema[key])
            if sub is not schema[key]:
                changed[key] = sub
    for key in _LIST:
        value = schema.get(key)
        if isinstance(value, list):
            subs = [_stripped(sub) for sub in value]
            if any(new is not old for new, old in zip(subs, value, strict=True)):
                changed[key] = subs
    for key in _MAP:
        value = schema.get(key)
        if isinstance(value, Mapping):
            named = {name: _stripped(sub) for name, sub in value.items()}
            if any(named[name] is not sub for name, sub in value.items()):
                changed[key] = named
    if not changed:
        return schema
    out = {**schema, **changed}
    if changed.get("pattern", True) is None:
        del out["pattern"]
    return out


def _is_string(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "string" or (isinstance(kind, list) and "string" in kind)
