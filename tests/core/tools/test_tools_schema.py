"""Schema derivation: types, docstrings, defaults, hidden parameters and definition errors."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, NewType, NotRequired, Optional, TypedDict, Union

import attrs
import pytest

from toolwire.tools import (
    Injected,
    PageNumber,
    Tool,
    ToolContext,
    ToolDefinitionError,
    tool,
    tool_name_problems,
)
from toolwire.tools._names import validate_tool_name


def props(t: Tool) -> Mapping[str, Any]:
    return t.parameters["properties"]


class Color(enum.Enum):
    """A paint colour."""

    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@attrs.frozen
class Point:
    """A point on the map.

    Attributes:
        x: Longitude.
    """

    x: float
    y: Annotated[float, "Latitude."]
    label: str = attrs.field(default="", metadata={"description": "Shown next to the point."})
    tags: list[str] = attrs.field(factory=list)


@attrs.frozen
class Route:
    """A route between points."""

    start: Point
    stops: list[Point]
    name: str | None = None


class Address(TypedDict):
    """A postal address.

    Attributes:
        street: Street and number.
    """

    street: str
    city: str
    zip: NotRequired[str]


@dataclasses.dataclass
class Window:
    start: dt.date
    days: int = 7
    labels: list[str] = dataclasses.field(default_factory=list)


UserId = NewType("UserId", int)


def test_scalar_types():
    @tool
    def f(s: str, i: int, x: float, b: bool, n: None, a: Any, u: UserId) -> None:
        """Scalars."""

    p = props(f)
    assert p["s"] == {"type": "string"}
    assert p["i"] == {"type": "integer"}
    assert p["x"] == {"type": "number"}
    assert p["b"] == {"type": "boolean"}
    assert p["n"] == {"type": "null"}
    assert p["a"] == {}
    assert p["u"] == {"type": "integer"}
    assert f.parameters["required"] == ["s", "i", "x", "b", "n", "a", "u"]
    assert f.parameters["additionalProperties"] is False
    assert f.parameter_order == ("s", "i", "x", "b", "n", "a", "u")


def test_literal_and_enum_types():
    @tool
    def f(
        mode: Literal["fast", "slow"],
        n: Literal[1, 2, 3],
        mixed: Literal["a", 1],
        color: Color,
        level: Level = Level.LOW,
    ) -> None:
        """Enums."""

    p = props(f)
    assert p["mode"] == {"type": "string", "enum": ["fast", "slow"]}
    assert p["n"] == {"type": "integer", "enum": [1, 2, 3]}
    assert p["mixed"] == {"type": ["integer", "string"], "enum": ["a", 1]}
    assert p["color"] == {
        "type": "string",
        "enum": ["red", "green"],
        "description": "A paint colour.",
    }
    assert p["level"]["enum"] == [1, 2]
    assert p["level"]["default"] == 1


def test_string_formats():
    @tool
    def f(when: dt.datetime, day: dt.date, at: dt.time, id: uuid.UUID, path: Path) -> None:
        """Formats."""

    p = props(f)
    assert p["when"] == {"type": "string", "format": "date-time"}
    assert p["day"] == {"type": "string", "format": "date"}
    assert p["at"] == {"type": "string", "format": "time"}
    assert p["id"] == {"type": "string", "format": "uuid"}
    assert p["path"] == {"type": "string", "format": "path"}


def test_collections():
    @tool
    def f(
        names: list[str],
        seq: Sequence[int],
        pair: tuple[int, int],
        row: tuple[str, int, bool],
        many: tuple[float, ...],
        unique: set[str],
        frozen: frozenset[int],
        scores: dict[str, float],
        anything: dict[str, Any],
        bare: list,  # type: ignore[type-arg]
    ) -> None:
        """Collections."""

    p = props(f)
    assert p["names"] == {"type": "array", "items": {"type": "string"}}
    assert p["seq"] == {"type": "array", "items": {"type": "integer"}}
    assert p["pair"] == {
        "type": "array",
        "items": {"type": "integer"},
        "minItems": 2,
        "maxItems": 2,
    }
    assert p["row"] == {
        "type": "array",
        "prefixItems": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}],
        "items": False,
        "minItems": 3,
        "maxItems": 3,
    }
    assert p["many"] == {"type": "array", "items": {"type": "number"}}
    assert p["unique"] == {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    assert p["frozen"]["uniqueItems"] is True
    assert p["scores"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert p["anything"] == {"type": "object"}
    assert p["bare"] == {"type": "array"}


def test_optional_and_unions():
    @tool
    def f(
        required_nullable: int | None,
        either: int | str,
        old_style: Union[int, str],  # noqa: UP007
        maybe: Optional[str] = None,  # noqa: UP045
        maybe_new: str | None = None,
        several: int | str | None = None,
    ) -> None:
        """Unions."""

    p = props(f)
    assert p["required_nullable"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert p["either"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert p["old_style"] == p["either"]
    # An optional argument's null means "left out", so None is not part of its schema.
    assert p["maybe"] == {"type": "string"}
    assert p["maybe_new"] == {"type": "string"}
    assert p["several"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert f.parameters["required"] == ["required_nullable", "either", "old_style"]


def test_defaults_are_written_and_make_parameters_optional():
    @tool
    def f(
        q: str,
        limit: int = 10,
        ratio: float = 0.5,
        exact: bool = False,
        color: Color = Color.GREEN,
        tags: tuple[str, ...] = ("a", "b"),
        since: dt.date = dt.date(2024, 1, 31),
        nothing: str | None = None,
        sentinel: object = object(),
    ) -> None:
        """Defaults."""

    p = props(f)
    assert f.parameters["required"] == ["q"]
    assert p["limit"]["default"] == 10
    assert p["ratio"]["default"] == 0.5
    assert p["exact"]["default"] is False
    assert p["color"]["default"] == "green"
    assert p["tags"]["default"] == ["a", "b"]
    assert p["since"]["default"] == "2024-01-31"
    assert "default" not in p["nothing"]
    assert "default" not in p["sentinel"]  # not JSON: left out rather than guessed


def test_nested_attrs_classes():
    @tool
    def plan(route: Route) -> None:
        """Plan a route."""

    route = props(plan)["route"]
    assert route["type"] == "object"
    assert route["description"] == "A route between points."
    assert route["required"] == ["start", "stops"]
    assert route["additionalProperties"] is False
    point = route["properties"]["start"]
    assert point["properties"]["x"] == {"type": "number", "description": "Longitude."}
    assert point["properties"]["y"] == {"type": "number", "description": "Latitude."}
    assert point["properties"]["label"] == {
        "type": "string",
        "description": "Shown next to the point.",
        "default": "",
    }
    assert point["properties"]["tags"] == {
        "type": "array",
        "items": {"type": "string"},
        "default": [],
    }
    assert point["required"] == ["x", "y"]
    assert route["properties"]["stops"]["items"] == point
    assert route["properties"]["name"] == {"type": "string"}


def test_typeddict_and_dataclass():
    @tool
    def ship(to: Address, window: Window) -> None:
        """Ship a parcel."""

    to = props(ship)["to"]
    assert to["required"] == ["street", "city"]
    assert to["properties"]["street"]["description"] == "Street and number."
    assert to["properties"]["zip"] == {"type": "string"}
    assert to["additionalProperties"] is False
    window = props(ship)["window"]
    assert window["required"] == ["start"]
    assert window["properties"]["days"] == {"type": "integer", "default": 7}
    assert window["properties"]["labels"]["default"] == []


def test_annotated_descriptions_and_keywords():
    @tool
    def f(
        q: Annotated[str, "Search words."],
        page: PageNumber = 1,
        size: Annotated[int, {"minimum": 1, "maximum": 50}, "Results per page."] = 10,
    ) -> None:
        """Search."""

    p = props(f)
    assert p["q"] == {"type": "string", "description": "Search words."}
    assert p["page"] == {
        "type": "integer",
        "minimum": 1,
        "description": "Page of results, starting at 1.",
        "default": 1,
    }
    assert p["size"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 50,
        "description": "Results per page.",
        "default": 10,
    }


def test_description_precedence():
    @tool(parameter_descriptions={"c": "Given explicitly."})
    def f(a: Annotated[Color, "From Annotated."], b: Color, c: str, d: str) -> None:
        """Precedence.

        Args:
            a: From the docstring (loses to Annotated).
            b: From the docstring (beats the enum's own docstring).
            c: From the docstring (loses to parameter_descriptions).
        """

    p = props(f)
    assert p["a"]["description"] == "From Annotated."
    assert p["b"]["description"] == "From the docstring (beats the enum's own docstring)."
    assert p["c"]["description"] == "Given explicitly."
    assert "description" not in p["d"]


def test_docstring_styles_give_descriptions():
    def google(city: str, days: int = 3) -> str:
        """Weather forecast.

        Args:
            city: City name.
            days: Days ahead.

        Returns:
            The forecast.
        """
        return city

    def numpy(city: str, days: int = 3) -> str:
        """Weather forecast.

        Parameters
        ----------
        city : str
            City name.
        days : int
            Days ahead.

        Returns
        -------
        str
            The forecast.
        """
        return city

    def sphinx(city: str, days: int = 3) -> str:
        """Weather forecast.

        :param city: City name.
        :param days: Days ahead.
        :returns: The forecast.
        """
        return city

    for fn in (google, numpy, sphinx):
        t = Tool.from_function(fn, name="forecast")
        assert t.description == "Weather forecast."
        assert props(t)["city"]["description"] == "City name."
        assert props(t)["days"]["description"] == "Days ahead."
        assert "forecast" not in t.parameters["properties"]


def test_hidden_parameters_are_not_in_the_schema():
    @tool
    def f(
        q: str,
        ctx: ToolContext,
        http: Injected[object],
        maybe_ctx: ToolContext | None = None,
    ) -> str:
        """Hidden."""
        return q

    assert list(props(f)) == ["q"]
    assert f.parameters["required"] == ["q"]
    assert f.hidden_parameters == ("ctx", "http", "maybe_ctx")
    assert f.parameter_order == ("q",)


def test_a_tool_reads_its_context_only_through_a_parameter_the_host_supplies():
    @tool
    def plain(q: str) -> str:
        """Plain."""
        return q

    @tool
    def with_context(q: str, ctx: ToolContext) -> str:
        """Context."""
        return q

    @tool
    def with_service(q: str, http: Injected[object]) -> str:
        """Service."""
        return q

    schema = {"type": "object", "properties": {}}
    assert not plain.reads_context
    assert with_context.reads_context
    assert with_service.reads_context  # services are found in the context
    assert not Tool.from_schema("bare", "", schema, lambda arguments: None).reads_context
    handler = Tool.from_schema("ctx", "", schema, lambda arguments, context: None)
    assert handler.reads_context
    assert not Tool.from_schema("external", "", schema, None, external=True).reads_context


def test_a_tool_without_parameters():
    @tool
    def now() -> str:
        """The time."""
        return "noon"

    assert now.parameters == {"type": "object", "properties": {}, "additionalProperties": False}


@pytest.mark.parametrize(
    ("annotation", "fragment"),
    [
        (bytes, "type bytes cannot be expressed"),
        (dict[int, str], "mapping keys of type int cannot be expressed"),
        (complex, "type complex cannot be expressed"),
        (Literal[b"x"], "is not a JSON scalar"),
    ],
)
def test_inexpressible_types_fail_at_definition(annotation: Any, fragment: str):
    def broken(good: int, bad: Any) -> None:
        """Broken."""

    broken.__annotations__["bad"] = annotation
    with pytest.raises(ToolDefinitionError) as info:
        Tool.from_function(broken)
    text = str(info.value)
    assert "broken" in text
    assert "parameter bad" in text
    assert fragment in text


@attrs.frozen
class Tree:
    value: int
    children: list[Tree]


def test_recursive_types_are_refused():
    def walk(tree: Tree) -> None:
        """Walk."""

    with pytest.raises(ToolDefinitionError, match=r"recursive type Tree -> Tree"):
        Tool.from_function(walk)


def test_enum_with_non_json_values_is_refused():
    class Odd(enum.Enum):
        A = (1, 2)

    def f(x: Odd) -> None:
        """Odd."""

    f.__annotations__["x"] = Odd
    with pytest.raises(ToolDefinitionError, match=r"parameter x: enum Odd has value \(1, 2\)"):
        Tool.from_function(f)


def test_missing_annotation_and_variadics_are_refused():
    def untyped(x) -> None:  # type: ignore[no-untyped-def]
        """Untyped."""

    with pytest.raises(ToolDefinitionError, match="parameter x: no type annotation"):
        Tool.from_function(untyped)

    def star(*args: int) -> None:
        """Star."""

    with pytest.raises(ToolDefinitionError, match=r"parameter \*args: variadic"):
        Tool.from_function(star)

    def kw(**kwargs: int) -> None:
        """Kw."""

    with pytest.raises(ToolDefinitionError, match=r"parameter \*\*kwargs: variadic"):
        Tool.from_function(kw)


def test_unresolvable_annotations_are_refused_naming_the_function():
    def f(x: NotDefinedAnywhere) -> None:  # type: ignore[name-defined]  # noqa: F821
        """F."""

    with pytest.raises(
        ToolDefinitionError, match=r"function .*f\): the annotations cannot be resolved"
    ):
        Tool.from_function(f)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "it is empty"),
        ("get weather", "it contains spaces"),
        ("x" * 65, "it is 65 characters long; providers accept at most 64"),
        ("get/weather", "characters that providers refuse: '/'"),
        ("café", "'é'"),
        (".hidden", "a name part on each side of every '.'"),
        ("math..factorial", "a name part on each side of every '.'"),
        ("math.", "a name part on each side of every '.'"),
    ],
)
def test_name_rules(name: str, reason: str):
    with pytest.raises(ToolDefinitionError) as info:
        validate_tool_name(name)
    assert reason in str(info.value)
    assert repr(name) in str(info.value)


@pytest.mark.parametrize(
    "name",
    ["fetch_DNA_sequence", "Events_3_FindEvents", "get-weather", "_private", "1st",
     "math.factorial", "a.b.c-d_e", "x" * 64, "A"],
)  # fmt: skip
def test_names_providers_accept_are_accepted_and_dotted_ones_too(name: str):
    validate_tool_name(name)
    assert tool_name_problems(name) == []


def test_name_refusal_suggests_a_snake_case_spelling():
    with pytest.raises(ToolDefinitionError, match="for example 'get_weather'"):
        validate_tool_name("get weather")
    validate_tool_name("get_weather_2")
    validate_tool_name("a" * 64)


def test_function_names_are_checked():
    def getWeather(city: str) -> None:
        """Weather."""

    assert Tool.from_function(getWeather).name == "getWeather"
    with pytest.raises(ToolDefinitionError, match="invalid tool name 'get weather'"):
        Tool.from_function(getWeather, name="get weather")
    assert Tool.from_function(getWeather, name="get_weather").name == "get_weather"


def test_explicit_schema_tools():
    schema = {
        "type": "object",
        "properties": {"sql": {"type": "string", "description": "A query."}},
        "required": ["sql"],
    }

    def run(arguments: Mapping[str, Any]) -> str:
        return str(arguments["sql"])

    t = Tool.from_schema("run_sql", "Run a query.", schema, run)
    assert t.parameters == schema
    assert t.parameters is not schema  # copied: later changes to the caller's dict do not leak
    schema["properties"]["other"] = {"type": "string"}
    assert "other" not in t.parameters["properties"]
    assert t.parameter_order == ("sql",)
    assert t.function_spec().description == "Run a query."


@pytest.mark.parametrize(
    ("parameters", "fragment"),
    [
        ({"type": "array"}, 'must have "type": "object"'),
        ({"properties": {}}, "got type None"),
        ({"type": "object", "default": object()}, "parameters are not JSON"),
    ],
)
def test_explicit_schema_refusals(parameters: Any, fragment: str):
    with pytest.raises(ToolDefinitionError, match="tool run_sql") as info:
        Tool.from_schema("run_sql", "Run.", parameters, lambda a: a)
    assert fragment in str(info.value)


def test_explicit_schema_needs_a_handler_unless_external():
    schema = {"type": "object", "properties": {}}
    with pytest.raises(ToolDefinitionError, match="give a handler, or mark the tool external"):
        Tool.from_schema("ask_user", "Ask.", schema)
    assert Tool.from_schema("ask_user", "Ask.", schema, external=True).external
