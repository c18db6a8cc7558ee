"""``schema_for``: the schema toolwire derives, outside of a tool."""

from __future__ import annotations

import enum
import functools
from typing import Annotated, Literal, TypedDict

import attrs
import pytest

from toolwire.tools import ToolContext, ToolDefinitionError, schema_for, tool


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@attrs.define
class Point:
    """A point on the plane."""

    x: float
    y: float = 0.0


class Query(TypedDict):
    text: str
    limit: int


def search(
    query: Annotated[str, "What to look for"],
    context: ToolContext,
    limit: int = 10,
    colour: Colour | None = None,
) -> list[str]:
    """Search the catalogue.

    :param limit: how many hits at most
    """
    return []


def test_a_function_gives_the_schema_a_tool_of_it_offers() -> None:
    schema = schema_for(search)
    assert schema == tool(search).parameters
    assert schema["required"] == ["query"]
    assert "context" not in schema["properties"]
    assert schema["properties"]["query"]["description"] == "What to look for"
    assert schema["properties"]["limit"] == {
        "type": "integer",
        "description": "how many hits at most",
        "default": 10,
    }


def test_methods_and_partials_leave_out_what_is_bound() -> None:
    class Catalogue:
        def find(self, name: str, exact: bool = False) -> str:
            return name

    assert list(schema_for(Catalogue.find)["properties"]) == ["name", "exact"]
    assert list(schema_for(Catalogue().find)["properties"]) == ["name", "exact"]
    assert schema_for(functools.partial(search, limit=3))["required"] == ["query"]


@pytest.mark.parametrize(
    ("tp", "expected"),
    [
        (int, {"type": "integer"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Colour, {"type": "string", "enum": ["red", "blue"]}),
    ],
)
def test_a_type_gives_the_schema_of_its_values(tp: object, expected: dict[str, object]) -> None:
    assert schema_for(tp) == expected


def test_records_and_typed_dicts_become_objects() -> None:
    point = schema_for(Point)
    assert point["type"] == "object"
    assert point["required"] == ["x"]
    assert set(point["properties"]) == {"x", "y"}
    query = schema_for(Query)
    assert query["required"] == ["text", "limit"]


def test_a_type_without_a_schema_is_named_in_the_error() -> None:
    with pytest.raises(ToolDefinitionError, match=r"type complex.*complex"):
        schema_for(complex)

    def bad(value: complex) -> None: ...

    with pytest.raises(ToolDefinitionError, match=r"function .*bad, parameter value"):
        schema_for(bad)
