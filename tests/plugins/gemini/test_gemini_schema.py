"""Gemini's schema subset: each tool projected losslessly, degraded with the rest described, or
refused by name; and what each ``schemas`` setting sends."""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal, TypedDict

import attrs
import fastjsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolwire
from toolwire import FunctionSpec, Tool
from toolwire.adapters import ProviderError
from toolwire.config import ProviderConfig
from toolwire_gemini import GeminiAdapter, GeminiSettings, declaration, project_schema


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def projected(schema: dict[str, Any], **options: Any) -> Any:
    result = project_schema(schema, **options)
    assert result.verdict == "lossless", (result.notes, result.problems)
    return result.schema


# -- lossless ----------------------------------------------------------------------------------


def test_types_are_gemini_types_and_null_is_nullable() -> None:
    schema = obj(
        a={"type": "integer", "minimum": 1, "maximum": 9},
        b={"type": ["string", "null"], "maxLength": 5},
        c={"anyOf": [{"type": "array", "items": {"type": "number"}}, {"type": "null"}]},
        d={"enum": ["x", "y", None]},
    )
    assert projected(schema) == {
        "type": "OBJECT",
        "properties": {
            "a": {"type": "INTEGER", "minimum": 1, "maximum": 9},
            "b": {"type": "STRING", "maxLength": 5, "nullable": True},
            "c": {"type": "ARRAY", "items": {"type": "NUMBER"}, "nullable": True},
            "d": {"type": "STRING", "enum": ["x", "y"], "nullable": True},
        },
    }


def test_references_are_written_out_and_all_of_merged() -> None:
    schema = {
        "type": "object",
        "properties": {
            "home": {"$ref": "#/$defs/Place", "description": "Where you live."},
            "work": {"allOf": [{"$ref": "#/$defs/Place"}], "title": "Office"},
        },
        "required": ["home"],
        "$defs": {
            "Place": {
                "type": "object",
                "description": "A place.",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            }
        },
    }
    place = {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}
    assert projected(schema) == {
        "type": "OBJECT",
        "properties": {
            "home": {**place, "description": "Where you live."},
            "work": {**place, "title": "Office", "description": "A place."},
        },
        "required": ["home"],
    }


def test_defaults_move_into_the_description_and_annotations_go() -> None:
    schema = obj(
        n={
            "type": "integer",
            "description": "How many.",
            "default": 3,
            "examples": [1, 2],
            "deprecated": False,
            "$comment": "for people",
        },
        p={"type": "string", "format": "path", "default": "."},
    )
    assert projected(schema)["properties"] == {
        "n": {"type": "INTEGER", "description": "How many. (default: 3)"},
        "p": {"type": "STRING", "description": 'default: "."'},
    }


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


@attrs.frozen
class Place:
    city: str
    country: str | None = None


class Window(TypedDict):
    start: str
    hours: int


def test_a_tool_from_typed_python_is_lossless() -> None:
    @toolwire.tool
    def forecast(
        place: Place,
        unit: Unit = Unit.C,
        days: Annotated[int, "How many days.", {"minimum": 1, "maximum": 14}] = 3,
        detail: Literal["brief", "full"] = "brief",
        windows: list[Window] | None = None,
    ) -> str:
        """A forecast.

        Args:
            place: Where.
            unit: Degrees in.
            detail: How much.
            windows: Only these hours.
        """
        return ""

    schema = projected(forecast.parameters)
    assert schema["properties"]["place"]["properties"]["country"] == {"type": "STRING"}
    assert schema["properties"]["place"]["required"] == ["city"]
    assert schema["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert schema["properties"]["windows"]["items"]["required"] == ["start", "hours"]
    assert schema["required"] == ["place"]


def test_a_function_without_parameters_has_none() -> None:
    assert project_schema({"type": "object", "properties": {}}).schema == {}
    assert project_schema({"type": "object"}).schema == {}
    body = declaration(FunctionSpec(name="now", description="Now.", parameters={"type": "object"}))
    assert body == {"name": "now", "description": "Now."}


def test_open_objects_are_projected_for_models_that_take_them() -> None:
    schema = obj(tags={"type": "object", "additionalProperties": {"type": "string"}})
    assert projected(schema, open_objects=True)["properties"]["tags"] == {
        "type": "OBJECT",
        "additionalProperties": {"type": "STRING"},
    }


# -- degraded ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "described"),
    [
        ({"type": "string", "format": "email"}, "format: email"),
        ({"type": "integer", "enum": [1, 2, 3]}, "one of: 1, 2, 3"),
        ({"type": "number", "exclusiveMinimum": 0}, "exclusiveMinimum: 0"),
        ({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, "uniqueItems: true"),
        ({"const": 7}, "must be 7"),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "additionalProperties": {"type": "integer"},
            },
            'other keys may be given too, each {"type": "integer"}',
        ),
    ],
)
def test_what_the_subset_lacks_is_written_into_the_description(
    schema: dict[str, Any], described: str
) -> None:
    result = project_schema(obj(x={**schema, "description": "The x."}))
    assert result.verdict == "degraded"
    assert result.schema is not None
    assert result.schema["properties"]["x"]["description"] == f"The x. ({described})"
    assert result.notes[0].startswith("x: ")


def test_one_of_is_sent_as_any_of_and_said_so() -> None:
    result = project_schema(obj(x={"oneOf": [{"type": "string"}, {"type": "integer"}]}))
    assert result.verdict == "degraded"
    assert result.schema is not None
    assert result.schema["properties"]["x"] == {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}
    assert "oneOf is sent as anyOf" in result.notes[0]


# -- refused -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        (
            {
                "type": "object",
                "properties": {"node": {"$ref": "#/$defs/Node"}},
                "$defs": {
                    "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}
                },
            },
            "node.next: $ref '#/$defs/Node' is recursive",
        ),
        (
            obj(d={"type": "object", "additionalProperties": {"type": "integer"}}),
            "d: an object without declared properties",
        ),
        (obj(d={"type": "object"}), "d: an object without declared properties"),
        (obj(x={}), 'x: a value of any type (no "type")'),
        (obj(x={"type": "array"}), "x: a list whose items have no schema"),
        (
            obj(x={"type": "array", "prefixItems": [{"type": "string"}], "items": False}),
            "keyword 'prefixItems'",
        ),
        (obj(x={"type": "string", "not": {"const": "x"}}), "x: keyword 'not'"),
        (obj(**{"user-id": {"type": "string"}}), "parameter name 'user-id' is refused by Gemini"),
        (
            {"anyOf": [obj(a={"type": "string"}), obj(b={"type": "string"})]},
            "the root schema must be an object",
        ),
        (
            {"type": "object", "additionalProperties": {"type": "string"}},
            "the root schema: an object without declared properties",
        ),
        (obj(x={"$ref": "https://example.com/x.json"}), "is not a reference inside the schema"),
        (obj(x={"allOf": [{"type": "string"}, {"type": "integer"}]}), "no value can be both"),
    ],
)
def test_what_cannot_be_expressed_is_refused_naming_the_place(
    schema: dict[str, Any], problem: str
) -> None:
    result = project_schema(schema)
    assert result.verdict == "refused"
    assert result.schema is None
    assert problem in " ".join(result.problems), result.problems


def test_the_depth_and_size_of_written_out_references_are_bounded() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(40):
        deep = obj(inner=deep)
    assert "nests deeper than 32" in project_schema(deep).problems[0]
    # A reference used twice at each of 14 levels writes out 2**14 subschemas.
    defs = {
        f"L{i}": obj(a={"$ref": f"#/$defs/L{i + 1}"}, b={"$ref": f"#/$defs/L{i + 1}"})
        for i in range(14)
    }
    defs["L14"] = {"type": "string"}
    wide = {"type": "object", "properties": {"root": {"$ref": "#/$defs/L0"}}, "$defs": defs}
    assert "more than 5000 subschemas" in project_schema(wide).problems[0]


# -- what each setting sends -------------------------------------------------------------------

DICT_TOOL = Tool.from_schema(
    "tag",
    "Tag a file.",
    obj(
        path={"type": "string"}, tags={"type": "object", "additionalProperties": {"type": "string"}}
    ),
    lambda arguments: "ok",
)
EMAIL_TOOL = Tool.from_schema(
    "mail", "Mail someone.", obj(to={"type": "string", "format": "email"}), lambda arguments: "ok"
)


def adapter(**settings: Any) -> GeminiAdapter:
    return GeminiAdapter.configured(GeminiSettings(**settings))(ProviderConfig(model="m"))


def test_auto_sends_as_json_schema_what_the_subset_would_change() -> None:
    gemini = adapter()
    specs = (DICT_TOOL.function_spec(), EMAIL_TOOL.function_spec())
    [tool] = gemini.render_tools(specs)
    tag, mail = tool["functionDeclarations"]
    assert tag["parametersJsonSchema"] == DICT_TOOL.parameters
    assert mail["parametersJsonSchema"] == EMAIL_TOOL.parameters
    notes = gemini.render_notes(specs)
    assert notes[0].startswith("tag: sent as written in parametersJsonSchema")
    assert "open dict" in notes[0]
    assert "format 'email'" in notes[1]


def test_openapi_refuses_a_tool_by_name_and_describes_the_rest() -> None:
    gemini = adapter(schemas="openapi")
    with pytest.raises(
        ProviderError,
        match=r"the tool 'tag' cannot be sent in Gemini's schema subset: tags: an object",
    ):
        gemini.render_tools((DICT_TOOL.function_spec(),))
    [tool] = gemini.render_tools((EMAIL_TOOL.function_spec(),))
    [mail] = tool["functionDeclarations"]
    assert mail["parameters"]["properties"]["to"] == {
        "type": "STRING",
        "description": "format: email",
    }
    assert gemini.render_notes((EMAIL_TOOL.function_spec(),)) == [
        "mail: to: format 'email' is written into the description"
    ]


def test_json_schema_sends_every_schema_as_written() -> None:
    [tool] = adapter(schemas="json-schema").render_tools((DICT_TOOL.function_spec(),))
    assert tool["functionDeclarations"][0]["parametersJsonSchema"] == DICT_TOOL.parameters


def test_a_name_gemini_refuses_goes_under_an_alias_and_is_said_so() -> None:
    spec = Tool.from_schema("3d.render", "Render.", obj(), lambda arguments: "ok").function_spec()
    gemini = adapter()
    [tool] = gemini.render_tools((spec,))
    assert tool["functionDeclarations"][0]["name"] == "_3d.render"
    assert "sent as '_3d.render'" in gemini.render_notes((spec,))[0]
    dotted = Tool.from_schema("math.factorial", "F.", obj(), lambda arguments: "ok").function_spec()
    [tool] = gemini.render_tools((dotted,))
    assert tool["functionDeclarations"][0]["name"] == "math.factorial"  # Gemini takes dots
    assert gemini.render_notes((dotted,)) == []


# -- soundness: a lossless projection accepts exactly what the schema accepts ------------------

NAMES = st.sampled_from(["a", "b", "c"])


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    string = st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={"minLength": st.integers(0, 3), "maxLength": st.integers(3, 6)},
    )
    number = st.fixed_dictionaries(
        {"type": st.sampled_from(["integer", "number"])},
        optional={"minimum": st.integers(-5, 0), "maximum": st.integers(0, 5)},
    )
    choice = st.lists(st.sampled_from(["x", "y", "z"]), min_size=1, unique=True).map(
        lambda values: {"enum": values}
    )
    return st.one_of(string, number, choice, st.just({"type": "boolean"}))


def _nullable(node: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    wrapped = {"anyOf": [node, {"type": "null"}]}
    if isinstance(node.get("type"), str):
        return st.sampled_from([node, wrapped, {**node, "type": [node["type"], "null"]}])
    return st.sampled_from([node, wrapped])


def _schema(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    array = st.builds(
        lambda items, low: {"type": "array", "items": items, "minItems": low},
        children,
        st.integers(0, 2),
    )
    return st.one_of(array, _object(children)).flatmap(_nullable)


def _object(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(NAMES, children, min_size=1).flatmap(
        lambda properties: st.lists(st.sampled_from(sorted(properties)), unique=True).map(
            lambda required: {"type": "object", "properties": properties, "required": required}
        )
    )


SCHEMAS = _object(st.recursive(_leaf().flatmap(_nullable), _schema, max_leaves=6))
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-6, 6) | st.sampled_from(["", "x", "yy", "zzzzzzz"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=8,
)


def back(node: Any) -> Any:
    """Gemini's schema read back as the JSON Schema it means."""
    out: dict[str, Any] = {}
    if "anyOf" in node:
        out["anyOf"] = [back(member) for member in node["anyOf"]]
    if "type" in node:
        out["type"] = node["type"].lower()
    for key in (
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "enum",
        "required",
    ):
        if key in node:
            out[key] = node[key]
    if "properties" in node:
        out["properties"] = {name: back(sub) for name, sub in node["properties"].items()}
    if "items" in node:
        out["items"] = back(node["items"])
    if node.get("nullable"):
        out = {"anyOf": [out, {"type": "null"}]}
    return out


@settings(max_examples=150, deadline=None)
@given(SCHEMAS, st.lists(VALUES, min_size=1, max_size=8))
def test_a_lossless_projection_accepts_exactly_what_the_schema_accepts(
    schema: dict[str, Any], values: list[Any]
) -> None:
    result = project_schema(schema)
    assert result.verdict == "lossless", (result.notes, result.problems)
    assert result.schema is not None
    original = fastjsonschema.compile(schema)
    sent = fastjsonschema.compile(back(result.schema) if result.schema else {"type": "object"})
    for value in [*values, {"a": values[0]}]:
        assert _valid(original, value) == _valid(sent, value), value


def _valid(validate: Any, value: Any) -> bool:
    try:
        validate(value)
    except fastjsonschema.JsonSchemaException:
        return False
    return True
