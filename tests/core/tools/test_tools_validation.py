"""Validation: valid and invalid calls for each keyword, null as absent, and refusal texts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import attrs
import pytest

from toolwire.tools import ArgumentsInvalid, PageNumber, Tool, ToolContext, tool
from toolwire.tools._validation import compiled_validator


def schema_tool(properties: Mapping[str, Any], required: list[str] | None = None) -> Tool:
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": dict(properties),
        "additionalProperties": False,
    }
    if required:
        parameters["required"] = required
    return Tool.from_schema("probe", "Probe.", parameters, lambda arguments: dict(arguments))


def refusals(t: Tool, arguments: Any) -> tuple[str, ...]:
    with pytest.raises(ArgumentsInvalid) as info:
        t.validate(arguments)
    return info.value.problems


# keyword, schema of argument "v", a valid value, an invalid value, words the refusal must hold
KEYWORDS = [
    ("type string", {"type": "string"}, "x", 5, ["got 5 (integer)", "expected a string"]),
    ("type integer", {"type": "integer"}, 3, 2.5, ["got 2.5 (number)", "expected an integer"]),
    ("type number", {"type": "number"}, 2.5, "2.5", ['got "2.5" (string)', "expected a number"]),
    ("type boolean", {"type": "boolean"}, True, "true", ["expected true or false"]),
    ("type null", {"type": "null"}, None, 0, ["expected null"]),
    ("type array", {"type": "array"}, [1], {"a": 1}, ["(object)", "expected a list"]),
    ("type object", {"type": "object"}, {"a": 1}, [1], ["(array)", "expected an object"]),
    ("type list", {"type": ["string", "integer"]}, 1, 1.5, ["a string or an integer"]),
    ("enum", {"enum": ["a", "b"]}, "a", "c", ['got "c"', 'expected one of "a", "b"']),
    ("const", {"const": "fixed"}, "fixed", "other", ['expected exactly "fixed"']),
    ("minimum", {"type": "integer", "minimum": 1}, 1, 0, ["got 0", "an integer >= 1"]),
    ("maximum", {"type": "integer", "maximum": 10}, 10, 11, ["an integer <= 10"]),
    ("exclusiveMinimum", {"type": "number", "exclusiveMinimum": 0}, 0.1, 0, ["a number > 0"]),
    ("exclusiveMaximum", {"type": "number", "exclusiveMaximum": 1}, 0.9, 1, ["a number < 1"]),
    ("multipleOf", {"type": "integer", "multipleOf": 5}, 10, 12, ["a multiple of 5"]),
    ("minLength", {"type": "string", "minLength": 2}, "ab", "a", ["at least 2 characters"]),
    ("maxLength", {"type": "string", "maxLength": 2}, "ab", "abc", ["at most 2 characters"]),
    ("pattern", {"type": "string", "pattern": "^[a-z]+$"}, "abc", "ABC", ["pattern ^[a-z]+$"]),
    (
        "format date-time",
        {"type": "string", "format": "date-time"},
        "2024-05-01T10:00:00Z",
        "yesterday",
        ['got "yesterday"', "a date-time string (RFC 3339"],
    ),
    (
        "format date",
        {"type": "string", "format": "date"},
        "2024-05-01",
        "2024-13-01",
        ["a date string (YYYY-MM-DD"],
    ),
    (
        "format uuid",
        {"type": "string", "format": "uuid"},
        "123e4567-e89b-12d3-a456-426614174000",
        "not-a-uuid",
        ["a UUID string"],
    ),
    ("minItems", {"type": "array", "minItems": 1}, [1], [], ["at least 1 item"]),
    ("maxItems", {"type": "array", "maxItems": 1}, [1], [1, 2], ["at most 1 item"]),
    ("uniqueItems", {"type": "array", "uniqueItems": True}, [1, 2], [1, 1], ["no duplicates"]),
    (
        "items",
        {"type": "array", "items": {"type": "integer"}},
        [1, 2],
        [1, "x"],
        ['v[1]: got "x" (string); expected an integer'],
    ),
    (
        "prefixItems",
        {
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "integer"}],
            "items": False,
        },
        ["a", 1],
        ["a", "b"],
        ['v[1]: got "b" (string); expected an integer'],
    ),
    (
        "prefixItems extra item",
        {"type": "array", "prefixItems": [{"type": "string"}], "items": False},
        ["a"],
        ["a", 1],
        ["v: got"],
    ),
    (
        "anyOf",
        {"anyOf": [{"type": "integer"}, {"type": "string", "format": "date"}]},
        "2024-01-01",
        [1],
        ["got [1] (array)", "expected an integer or a date string"],
    ),
    (
        "additionalProperties schema",
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {"a": 1},
        {"a": "x"},
        ['v.a: got "x" (string); expected an integer'],
    ),
    (
        "nested required",
        {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]},
        {"k": "x"},
        {},
        ["v.k: missing; it is required (a string)"],
    ),
    (
        "nested additionalProperties false",
        {"type": "object", "properties": {"k": {"type": "string"}}, "additionalProperties": False},
        {"k": "x"},
        {"k": "x", "q": 1},
        ["v.q: unknown key (got 1); valid keys: k"],
    ),
]


@pytest.mark.parametrize(
    ("schema", "valid", "invalid", "words"),
    [case[1:] for case in KEYWORDS],
    ids=[case[0] for case in KEYWORDS],
)
def test_each_keyword_accepts_valid_and_refuses_invalid(
    schema: dict[str, Any], valid: Any, invalid: Any, words: list[str]
):
    t = schema_tool({"v": schema}, required=["v"])
    assert t.validate({"v": valid}) == {"v": valid}
    problems = refusals(t, {"v": invalid})
    assert len(problems) == 1
    for word in words:
        assert word in problems[0], problems[0]
    assert problems[0].startswith("v")


def test_missing_required_and_unknown_arguments():
    t = schema_tool({"city": {"type": "string"}, "days": {"type": "integer"}}, required=["city"])
    problems = refusals(t, {"town": "Lyon"})
    assert problems == (
        "city: missing; it is required (a string).",
        'town: unknown argument (got "Lyon"); valid arguments: city, days.',
    )


@attrs.frozen
class Filter:
    field: str
    op: Literal["eq", "ne"] = "eq"


@attrs.frozen
class Options:
    depth: int = 1
    label: str | None = None


def test_one_refusal_per_problem_with_paths():
    @tool
    def search(
        query: str,
        filters: list[Filter] = [],  # noqa: B006
        limit: Annotated[int, {"minimum": 1, "maximum": 50}] = 10,
    ) -> None:
        """Search."""

    problems = refusals(
        search,
        {"query": 7, "filters": [{"field": "a"}, {"field": "b", "op": "like"}, {}], "limit": 0},
    )
    assert problems == (
        "query: got 7 (integer); expected a string.",
        'filters[1].op: got "like"; expected one of "eq", "ne". filters[1].op is optional: '
        'leave it out to use the default ("eq").',
        "filters[2].field: missing; it is required (a string).",
        "limit: got 0; expected an integer >= 1 and <= 50. limit is optional: leave it out to use "
        "the default (10).",
    )


def test_str_of_the_exception_names_the_tool_and_joins_the_problems():
    t = schema_tool({"a": {"type": "integer"}, "b": {"type": "integer"}})
    with pytest.raises(ArgumentsInvalid) as info:
        t.validate({"a": "x", "b": "y"})
    text = str(info.value)
    assert text.startswith("Invalid arguments for tool probe (2 problems):\n- a: got")
    assert "\n- b: got" in text
    with pytest.raises(ArgumentsInvalid, match=r"^Invalid arguments for tool probe: a: got"):
        t.validate({"a": "x"})


def test_page_zero_is_refused_not_read_as_no_page():
    @tool
    def listing(page: PageNumber = 1) -> None:
        """List."""

    assert listing.validate({}) == {}
    assert listing.validate({"page": 2}) == {"page": 2}
    (problem,) = refusals(listing, {"page": 0})
    assert problem == (
        "page: got 0; expected an integer >= 1. page is optional: leave it out to use the "
        "default (1)."
    )


def test_optional_without_default_says_it_may_be_left_out():
    t = schema_tool({"q": {"type": "string"}})
    (problem,) = refusals(t, {"q": 3})
    assert problem.endswith("q is optional: leave it out if it is not needed.")


def test_null_for_an_optional_argument_is_exactly_absent():
    @tool
    def f(q: str, limit: int = 5, options: Options | None = None, nullable: int | None = 3) -> None:
        """F."""

    assert f.validate({"q": "x", "limit": None}) == {"q": "x"}
    assert f.validate({"q": "x", "options": {"depth": None, "label": None}}) == {
        "q": "x",
        "options": {},
    }
    assert f.validate({"q": "x", "nullable": None}) == {"q": "x"}
    # A required argument's null is a value, and refused when the type has no null.
    (problem,) = refusals(f, {"q": None})
    assert problem == "q: got null (null); expected a string."


def test_null_stripping_does_not_touch_the_input():
    t = schema_tool({"a": {"type": "integer"}, "b": {"type": "integer"}})
    arguments = {"a": None, "b": 1}
    assert t.validate(arguments) == {"b": 1}
    assert arguments == {"a": None, "b": 1}


def test_values_sent_for_hidden_parameters_are_discarded():
    @tool
    def f(q: str, ctx: ToolContext) -> str:
        """F."""
        return q

    assert f.validate({"q": "x", "ctx": {"call_id": "forged"}}) == {"q": "x"}


def test_sensitive_values_are_never_repeated():
    @tool(sensitive_arguments=["token"])
    def login(user: str, token: Annotated[str, {"minLength": 20}]) -> None:
        """Log in."""

    (problem,) = refusals(login, {"user": "ann", "token": "hunter2-secret"})
    assert "hunter2" not in problem
    assert problem.startswith("token: got a value (not repeated: the argument is sensitive)")
    (problem,) = refusals(login, {"user": "ann", "token": "x" * 20, "tokne": "hunter2"})
    assert "hunter2" in problem  # an unknown argument is not the sensitive one


def test_long_values_are_shortened():
    t = schema_tool({"n": {"type": "integer"}})
    (problem,) = refusals(t, {"n": "x" * 500})
    assert "… (502 characters)" in problem
    assert len(problem) < 200


def test_a_long_pattern_is_not_repeated_in_the_refusal():
    # A refusal is read again at each retry; a long pattern is no help to read there.
    pattern = r"[0-9]\S*\s+(?:[^\s0-9AaPp]|[AaPp][^\s.Mm])|[^\s0-9]\s+[0-9]|(?:[Nn]oon)\s+\S"
    t = schema_tool({"time": {"type": "string", "pattern": pattern}}, required=["time"])
    (problem,) = refusals(t, {"time": "2026-12-02"})
    assert problem.startswith('time: got "2026-12-02"; expected a string matching its schema')
    assert "see its description" in problem
    assert pattern not in problem
    assert len(problem) < 140


def test_arguments_that_are_not_an_object():
    t = schema_tool({"n": {"type": "integer"}})
    (problem,) = refusals(t, ["n", 1])
    assert problem.startswith("the arguments must be a JSON object (an object with the keys n")
    assert 'got ["n", 1] (array)' in problem


def test_mappings_other_than_dict_are_accepted():
    from types import MappingProxyType

    t = schema_tool({"n": {"type": "integer"}})
    assert t.validate(MappingProxyType({"n": 1})) == {"n": 1}


def test_validators_are_compiled_lazily_and_cached_by_canonical_text():
    a = {"type": "object", "properties": {"zz_lazy": {"type": "integer"}}}
    b = {"properties": {"zz_lazy": {"type": "integer"}}, "type": "object"}
    from toolwire.tools import _validation

    t = Tool.from_schema("lazy", "Lazy.", a, lambda arguments: None)
    key = (_validation.canonical_text(a), False)
    assert key not in _validation._compiled
    t.validate({"zz_lazy": 1})
    assert key in _validation._compiled
    assert compiled_validator(a) is compiled_validator(b)


def test_schema_defaults_are_never_written_into_the_arguments():
    t = schema_tool({"n": {"type": "integer", "default": 3}})
    assert t.validate({}) == {}


def test_integer_accepts_integral_floats_as_json_schema_does():
    t = schema_tool({"n": {"type": "integer"}})
    assert t.validate({"n": 2.0}) == {"n": 2.0}


def test_one_refusal_per_value_even_when_several_keywords_fail():
    t = schema_tool({"v": {"type": "string", "enum": ["abc"], "minLength": 3}})
    assert refusals(t, {"v": 5}) == (
        'v: got 5 (integer); expected one of "abc". '
        "v is optional: leave it out if it is not needed.",
    )


@pytest.mark.parametrize(
    "schema",
    [{"type": ["string", "null"]}, {}, {"anyOf": [{"type": "integer"}, {"type": "null"}]}],
)
def test_null_is_dropped_even_where_the_schema_accepts_it(schema: dict[str, Any]):
    t = schema_tool({"v": schema, "nested": {"type": "object", "properties": {"w": schema}}})
    assert t.validate({"v": None, "nested": {"w": None}}) == {"nested": {}}


def test_loading_the_compiler_compiles_a_small_schema_through_re2(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A command about to run conversations pays the compiler's first compilation at start-up,
    # though the small schema is plain: the compiler's, not the plain validators'.
    import fastjsonschema

    from toolwire.tools import _validation

    compiled: list[Any] = []
    compile_schema = fastjsonschema.compile

    def counting(definition: Any, **options: Any) -> Any:
        compiled.append(definition)
        return compile_schema(definition, **options)

    monkeypatch.setattr(_validation, "_compiled", {})
    monkeypatch.setattr(fastjsonschema, "compile", counting)
    _validation.load_compiler()
    assert compiled == [_validation._WARM_SCHEMA]
    assert _validation._compiled == {}
    validate = _validation.fastjsonschema_validator(_validation._WARM_SCHEMA)
    validate({"a": "ab"})
    with pytest.raises(ValueError, match="must match pattern"):
        validate({"a": "ba"})
