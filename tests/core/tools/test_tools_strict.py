"""Strict projection: examples, refusals, and property-based checks over generated schemas."""

from __future__ import annotations

import datetime as dt
import json
import string
from collections.abc import Mapping
from typing import Any

import fastjsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire.tools import Tool, strict_projection, tool
from toolwire.tools._strict import STRICT_FORMATS, accepts_null
from toolwire.tools._validation import compiled_validator, null_plan


def obj(
    properties: Mapping[str, Any], required: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties), **extra}
    if required is not None:
        schema["required"] = required
    return schema


def test_optional_properties_become_required_and_nullable():
    schema = obj(
        {
            "q": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "default": 10, "description": "How many."},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "point": obj({"x": {"type": "number"}}, ["x"]),
            "tags": {"type": "array", "items": {"type": "string"}},
            "fixed": {"const": "v"},
        },
        ["q"],
    )
    projection = strict_projection(schema)
    assert projection.ok
    assert projection.problems == ()
    out = projection.schema
    assert out is not None
    assert out["required"] == ["q", "limit", "mode", "either", "point", "tags", "fixed"]
    assert out["additionalProperties"] is False
    p = out["properties"]
    assert p["q"] == {"type": "string"}
    assert p["limit"] == {
        "type": ["integer", "null"],
        "minimum": 1,
        "description": "How many. (default: 10)",
    }
    assert p["mode"] == {"type": ["string", "null"], "enum": ["a", "b", None]}
    assert p["either"] == {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}
    assert p["point"] == {
        "anyOf": [
            {
                "type": "object",
                "properties": {"x": {"type": "number"}},
                "required": ["x"],
                "additionalProperties": False,
            },
            {"type": "null"},
        ]
    }
    assert p["tags"] == {
        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]
    }
    assert p["fixed"] == {"type": ["string", "null"], "enum": ["v", None]}
    # The canonical schema is never changed.
    assert schema["required"] == ["q"]


def test_nested_objects_get_additional_properties_false_and_all_required():
    schema = obj(
        {"outer": obj({"a": {"type": "string"}, "b": {"type": "integer"}}, ["a"])}, ["outer"]
    )
    out = strict_projection(schema).schema
    assert out is not None
    inner = out["properties"]["outer"]
    assert inner["required"] == ["a", "b"]
    assert inner["additionalProperties"] is False
    assert inner["properties"]["b"] == {"type": ["integer", "null"]}


def test_annotations_are_moved_or_dropped_without_changing_validation():
    schema = obj(
        {
            "p": {"type": "string", "format": "path", "examples": ["a.txt"], "deprecated": True},
            "d": {"type": "string", "format": "date"},
        },
        ["p", "d"],
        **{"$schema": "https://json-schema.org/draft/2020-12/schema", "$comment": "x"},
    )
    out = strict_projection(schema).schema
    assert out is not None
    assert out["properties"]["p"] == {"type": "string"}
    assert out["properties"]["d"] == {"type": "string", "format": "date"}
    assert "$schema" not in out
    assert "$comment" not in out


@pytest.mark.parametrize(
    ("prop", "fragment"),
    [
        ({"type": "object", "additionalProperties": {"type": "integer"}}, "open keys"),
        ({"type": "object"}, "open dict"),
        ({"type": "array"}, "items have no schema"),
        ({}, "any type"),
        ({"type": "string", "minLength": 1}, "keyword 'minLength'"),
        ({"type": "object", "patternProperties": {"^x": {}}}, "keyword 'patternProperties'"),
        ({"type": "object", "properties": {}, "minProperties": 1}, "keyword 'minProperties'"),
        ({"type": "string", "if": {}, "then": {}}, "keyword 'if'"),
        ({"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, "uniqueItems"),
        (
            {"type": "array", "prefixItems": [{"type": "string"}], "items": False},
            "keyword 'prefixItems'",
        ),
        ({"type": "string", "format": "uri"}, "format 'uri'"),
        ({"oneOf": [{"type": "string"}]}, "keyword 'oneOf'"),
        ({"allOf": [{"type": "string"}]}, "keyword 'allOf'"),
        ({"not": {"type": "string"}}, "keyword 'not'"),
    ],
)
def test_schemas_strict_mode_cannot_express_are_reported(prop: dict[str, Any], fragment: str):
    projection = strict_projection(obj({"v": prop}, ["v"]))
    assert projection.schema is None
    assert not projection.ok
    assert any(
        fragment in problem and problem.startswith("v") for problem in projection.problems
    ), projection.problems


def test_root_must_be_an_object():
    assert strict_projection({"anyOf": [{"type": "object"}]}).problems == (
        "the root schema must be an object schema",
    )


def test_limits_are_reported():
    wide = obj(
        {f"p{i}": {"type": "string", "enum": [str(j) for j in range(3)]} for i in range(400)}
    )
    assert "enum values" in " ".join(strict_projection(wide).problems)
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(12):
        deep = obj({"d": deep}, ["d"])
    assert "nest deeper than 10 levels" in " ".join(strict_projection(deep).problems)


def test_refs_and_defs_are_projected():
    schema = {
        "type": "object",
        "$defs": {"P": obj({"x": {"type": "number"}, "y": {"type": "number"}}, ["x"])},
        "properties": {"a": {"$ref": "#/$defs/P"}, "b": {"$ref": "#/$defs/P", "description": "B."}},
        "required": ["a"],
    }
    out = strict_projection(schema).schema
    assert out is not None
    assert out["$defs"]["P"]["required"] == ["x", "y"]
    assert out["properties"]["a"] == {"$ref": "#/$defs/P"}
    assert out["properties"]["b"] == {
        "anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}],
        "description": "B.",
    }
    validate = fastjsonschema.compile(out)
    validate({"a": {"x": 1, "y": None}, "b": None})


def test_function_tools_project_and_round_trip():
    @tool
    def search(query: str, limit: int = 10, exact: bool | None = None) -> None:
        """Search."""

    projection = search.strict_projection()
    assert projection is search.strict_projection()  # computed once
    assert projection.schema is not None
    strict_args = {"query": "x", "limit": None, "exact": None}
    compiled_validator(projection.schema)(strict_args)
    assert search.validate(strict_args) == {"query": "x"}


def test_a_dict_parameter_makes_the_tool_non_strict():
    @tool
    def tag(labels: dict[str, str]) -> None:
        """Tag."""

    projection = tag.strict_projection()
    assert projection.schema is None
    assert projection.problems == (
        "labels: an object with open keys (additionalProperties, e.g. dict[str, T]) cannot be "
        "expressed in strict mode",
        "labels: an object without declared properties (an open dict) cannot be expressed in "
        "strict mode",
    )


# -- property-based ----------------------------------------------------------------------------

NAMES = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=8)


def scalar_schemas() -> st.SearchStrategy[dict[str, Any]]:
    strings = st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("string")},
            optional={
                "pattern": st.sampled_from(["^[a-z]*$", "^.*$", "x"]),
                "description": st.text(max_size=10),
            },
        ),
        st.fixed_dictionaries(
            {
                "type": st.just("string"),
                "format": st.sampled_from(["date", "date-time", "uuid", "path"]),
            }
        ),
    )
    integers = st.fixed_dictionaries(
        {"type": st.just("integer")},
        optional={
            "minimum": st.integers(-5, 0),
            "maximum": st.integers(1, 50),
            "multipleOf": st.sampled_from([1, 2]),
        },
    )
    numbers = st.fixed_dictionaries(
        {"type": st.just("number")},
        optional={"exclusiveMinimum": st.just(-1.5), "maximum": st.just(99.5)},
    )
    booleans = st.just({"type": "boolean"})
    enums = st.lists(
        st.one_of(st.text(max_size=4), st.integers(-3, 3)), min_size=1, max_size=4, unique=True
    ).map(lambda values: {"enum": values})
    typed_enums = st.lists(st.text(max_size=4), min_size=1, max_size=4, unique=True).map(
        lambda values: {"type": "string", "enum": values}
    )
    consts = st.sampled_from(["a", 1, True]).map(lambda v: {"const": v})
    unions = st.lists(st.one_of(strings, integers, booleans), min_size=2, max_size=3).map(
        lambda members: {"anyOf": members}
    )
    return st.one_of(strings, integers, numbers, booleans, enums, typed_enums, consts, unions)


def schemas(depth: int = 3) -> st.SearchStrategy[dict[str, Any]]:
    if depth == 0:
        return scalar_schemas()
    inner = schemas(depth - 1)
    arrays = st.builds(
        lambda items, bounds: {"type": "array", "items": items, **bounds},
        inner,
        st.sampled_from([{}, {"minItems": 1}, {"maxItems": 3}, {"minItems": 0, "maxItems": 2}]),
    )
    objects = object_schemas(inner)
    return st.one_of(scalar_schemas(), arrays, objects)


def object_schemas(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        properties = draw(st.dictionaries(NAMES, inner, max_size=4))
        required = [k for k in properties if draw(st.booleans())]
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        if draw(st.booleans()):
            schema["additionalProperties"] = False
        return schema

    return build()


def values(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid for the generated schema grammar, optional properties sometimes left out."""
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return st.one_of([values(m) for m in schema["anyOf"]])
    kind = schema["type"]
    if kind == "string":
        fmt = schema.get("format")
        if fmt == "date":
            return st.dates(min_value=dt.date(1000, 1, 1)).map(lambda d: d.isoformat())
        if fmt == "date-time":
            return st.datetimes(min_value=dt.datetime(1000, 1, 1)).map(
                lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")
            )
        if fmt == "uuid":
            return st.uuids().map(str)
        if schema.get("pattern") == "x":
            return st.just("x")
        return st.text(alphabet=string.ascii_lowercase, max_size=5)
    if kind == "integer":
        low = schema.get("minimum", -10)
        high = schema.get("maximum", 60)
        step = schema.get("multipleOf", 1)
        return st.integers(low, high).filter(lambda n: n % step == 0)
    if kind == "number":
        return st.floats(-1.0, 99.0, allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(
            values(schema["items"]),
            min_size=schema.get("minItems", 0),
            max_size=schema.get("maxItems", 3),
        )
    return object_values(schema)


def object_values(schema: Mapping[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        required = schema.get("required", [])
        out: dict[str, Any] = {}
        for key, sub in schema["properties"].items():
            if key in required or draw(st.booleans()):
                out[key] = draw(values(sub))
        return out

    return build()


def fill_nulls(schema: Mapping[str, Any], value: Any) -> Any:
    """The value as a strict-mode model sends it: every left-out optional property as null."""
    if "anyOf" in schema:
        return value  # the generated unions hold scalars only
    if schema.get("type") == "object" and isinstance(value, dict):
        return {
            key: fill_nulls(sub, value[key]) if key in value else None
            for key, sub in schema["properties"].items()
        }
    if schema.get("type") == "array" and isinstance(value, list):
        return [fill_nulls(schema["items"], item) for item in value]
    return value


def check_strict_rules(node: Any, path: str = "") -> None:
    assert isinstance(node, dict), path
    allowed = {
        "type", "description", "title", "enum", "const", "anyOf", "$ref", "$defs", "pattern",
        "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "items", "minItems", "maxItems", "properties", "required", "additionalProperties",
    }  # fmt: skip
    assert set(node) <= allowed, (path, set(node) - allowed)
    if "format" in node:
        assert node["format"] in STRICT_FORMATS
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds or []
    if "object" in kinds:
        assert node["additionalProperties"] is False, path
        assert node["required"] == list(node["properties"]), path
        for key, sub in node["properties"].items():
            check_strict_rules(sub, f"{path}.{key}")
    if "array" in kinds:
        check_strict_rules(node["items"], f"{path}[]")
    for member in node.get("anyOf", []):
        check_strict_rules(member, f"{path}|")


def check_optionals_nullable(canonical: Mapping[str, Any], projected: Mapping[str, Any]) -> None:
    """Every optional property of ``canonical`` accepts null in ``projected``, at every depth."""
    if "anyOf" in canonical:
        members = [m for m in projected["anyOf"] if m != {"type": "null"}]
        for original, member in zip(canonical["anyOf"], members, strict=True):
            check_optionals_nullable(original, member)
    if canonical.get("type") == "object":
        required = canonical.get("required", [])
        for key, sub in canonical["properties"].items():
            out = projected["properties"][key]
            if key not in required:
                assert accepts_null(out), key
                if "anyOf" in out and "anyOf" not in sub:
                    out = out["anyOf"][0]  # the wrapped original next to {"type": "null"}
            check_optionals_nullable(sub, out)
    if canonical.get("type") == "array":
        check_optionals_nullable(canonical["items"], projected["items"])


ROOT_SCHEMAS = object_schemas(schemas(2))


@st.composite
def schema_and_value(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    root = draw(ROOT_SCHEMAS)
    return root, draw(object_values(root))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_and_value())
def test_valid_arguments_with_nulls_for_omitted_optionals_validate_against_the_projection(
    case: tuple[dict[str, Any], Any],
):
    schema, value = case
    compiled_validator(schema)(value)  # the generator only makes valid arguments
    projection = strict_projection(schema)
    assert projection.ok, projection.problems
    assert projection.schema is not None
    strict_value = fill_nulls(schema, value)
    compiled_validator(projection.schema)(strict_value)
    # ...and the host reads those nulls as "left out": the same call as before.
    plan = null_plan(schema)
    stripped = plan.strip(strict_value) if plan is not None else strict_value
    compiled_validator(schema)(stripped)
    assert json.dumps(stripped, sort_keys=True) == json.dumps(value, sort_keys=True)


@settings(max_examples=100, deadline=None)
@given(ROOT_SCHEMAS)
def test_every_projection_obeys_the_strict_rules(schema: dict[str, Any]):
    projection = strict_projection(schema)
    assert projection.schema is not None
    check_strict_rules(projection.schema)
    check_optionals_nullable(schema, projection.schema)
    fastjsonschema.compile(dict(projection.schema))


UNSUPPORTED = st.sampled_from(
    [
        {"type": "object"},
        {"type": "array"},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "string", "maxLength": 3},
        {"type": "string", "format": "hostname-ish"},
        {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        {},
    ]
)


@settings(max_examples=60, deadline=None)
@given(ROOT_SCHEMAS, NAMES, UNSUPPORTED)
def test_unsupported_parts_anywhere_make_the_projection_refuse(
    schema: dict[str, Any], key: str, bad: dict[str, Any]
):
    schema = {
        **schema,
        "properties": {
            **schema["properties"],
            key: {"type": "object", "properties": {"inner": bad}},
        },
    }
    projection = strict_projection(schema)
    assert projection.schema is None
    assert projection.problems
    assert all(p.startswith(f"{key}.inner") for p in projection.problems), projection.problems


def test_tool_strict_false_is_kept_on_the_offer():
    t = Tool.from_schema("f", "F.", obj({}), lambda a: None, strict=False)
    assert t.function_spec().strict is False
