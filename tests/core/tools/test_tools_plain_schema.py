"""Plain schemas are checked without compiling code, and accept exactly what fastjsonschema's
compiled validator accepts."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire.tools import ArgumentsInvalid, Tool, ToolDefinitionError
from toolwire.tools._plain_schema import plain_validator
from toolwire.tools._validation import (
    _for_fastjsonschema,
    compiled_validator,
    fastjsonschema_validator,
)

PATTERNS = ["[0-9]", "^a", "b$", r"^[^0-9]*$", r"\bpi\b", "x|y"]

plain_leaf = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["string", "integer", "number", "boolean", "null", "object"])},
        optional={"description": st.just("A value."), "default": st.integers()},
    ),
    st.lists(
        st.sampled_from(["string", "integer", "number", "boolean", "null"]),
        min_size=1,
        max_size=3,
        unique=True,
    ).map(lambda names: {"type": names}),
    st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "pattern": st.sampled_from(PATTERNS),
            "minLength": st.integers(0, 3),
            "maxLength": st.integers(0, 4),
            "enum": st.lists(st.sampled_from(["a", "ab", "1", "b2", ""]), min_size=1, max_size=3),
        },
    ),
    st.just({}),
    st.just({"title": "Anything"}),
)


def _object(properties: dict[str, Any], required: list[str], extra: bool | None) -> Any:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if extra is not None:
        schema["additionalProperties"] = extra
    return schema


names = st.sampled_from(["a", "b", "c"])
plain_schema = st.recursive(
    plain_leaf,
    lambda inner: st.builds(
        _object,
        st.dictionaries(names, inner, max_size=3),
        st.lists(names, max_size=2, unique=True),
        st.sampled_from([None, True, False]),
    ),
    max_leaves=6,
)
leaf_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([2.0, 2.5, -0.0, float("inf"), Decimal("1.5"), Decimal(2)]),
    st.sampled_from(["", "a", "ab", "b", "1", "b2", "pi", "x 2", "abc", "\ud800"]),
)
values = st.recursive(
    leaf_values,
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(names, inner, max_size=4)),
    max_leaves=8,
)


def _accepts(validate: Any, value: Any) -> bool:
    try:
        validate(value)
    except ValueError:
        return False
    return True


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=plain_schema, value=values)
def test_a_plain_validator_accepts_what_fastjsonschema_accepts(schema: Any, value: Any) -> None:
    plain = plain_validator(_for_fastjsonschema(schema))
    assert plain is not None
    compiled = fastjsonschema_validator(schema)
    assert _accepts(plain, value) == _accepts(compiled, value)


LEAVES = [
    {"type": name} for name in ("string", "integer", "number", "boolean", "null", "object")
] + [
    {"type": ["integer", "null"]},
    {"type": ["number", "string"]},
    {"type": "string", "pattern": "[0-9]"},
    {"type": "string", "pattern": "^a$"},
    {"type": "string", "minLength": 1, "maxLength": 2},
    {"type": "string", "enum": ["a", "1"]},
    {"description": "Anything."},
]
LEAF_VALUES = [
    None,
    True,
    False,
    0,
    1,
    -2,
    2.0,
    2.5,
    -0.0,
    Decimal("1.5"),
    "",
    "a",
    "1",
    "a1",
    "ab",
    [],
    {},
    [1],
]


@pytest.mark.parametrize("schema", LEAVES)
def test_each_plain_keyword_accepts_what_fastjsonschema_accepts(schema: dict[str, Any]) -> None:
    for root in (schema, {"type": "object", "properties": {"v": schema}, "required": ["v"]}):
        plain = plain_validator(root)
        assert plain is not None
        compiled = fastjsonschema_validator(root)
        for value in LEAF_VALUES:
            arguments = value if root is schema else {"v": value}
            assert _accepts(plain, arguments) == _accepts(compiled, arguments), (root, value)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "string"}},
        {"type": "integer", "minimum": 1},
        {"type": "string", "format": "email"},
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        {"type": "string", "enum": ["a", 1]},
        {"type": "string", "maxLength": 2.5},
        {"type": ["object", "null"], "properties": {}},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}},
        {"type": "strnig"},
        {"pattern": "a"},
    ],
)
def test_other_schemas_are_compiled_by_fastjsonschema(schema: dict[str, Any]) -> None:
    assert plain_validator(schema) is None


def test_a_plain_tool_is_validated_without_compiling_code_and_refused_in_full() -> None:
    import fastjsonschema

    parameters = {
        "type": "object",
        "properties": {"expression": {"type": "string", "pattern": "[0-9]", "maxLength": 9}},
        "required": ["expression"],
        "additionalProperties": False,
    }
    t = Tool.from_schema("plain_probe", "Probe.", parameters, lambda arguments: None)
    assert t.validate({"expression": "1 + 1"}) == {"expression": "1 + 1"}
    validate = compiled_validator(parameters)
    assert validate.__module__ == "toolwire.tools._plain_schema"
    with pytest.raises(fastjsonschema.JsonSchemaValueException):
        validate({"expression": "one"})
    # A refusal is worked out by fastjsonschema's validator that reports every error.
    with pytest.raises(ArgumentsInvalid) as info:
        t.validate({"expression": "one plus one", "other": 1})
    assert info.value.problems == (
        'expression: got "one plus one"; expected a string of at most 9 characters matching the '
        "pattern [0-9].",
        "other: unknown argument (got 1); valid arguments: expression.",
    )


@pytest.mark.parametrize(
    ("pattern", "words"),
    [("(?=a)", "RE2 cannot run the pattern"), (r"\p{L}", "invalid JSON Schema")],
)
def test_a_plain_schema_with_a_pattern_the_compiler_refuses_is_refused(
    pattern: str, words: str
) -> None:
    # RE2 refuses lookarounds; Python's re (fastjsonschema's compiler) refuses \p classes.
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": pattern}}}
    with pytest.raises(ToolDefinitionError, match=words):
        compiled_validator(schema)
    with pytest.raises(ToolDefinitionError, match=words):
        compiled_validator(schema, all_errors=True)  # the validator that words refusals
