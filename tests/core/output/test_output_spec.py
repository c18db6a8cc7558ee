"""``OutputSpec``: a run's answer type to a schema, and an answer checked and structured."""

from __future__ import annotations

import dataclasses
import enum
from typing import Literal, TypedDict

import attrs
import pytest

from toolwire.output import ANSWER_TOOL, OutputInvalid, OutputSpec
from toolwire.tools import ToolDefinitionError, schema_for


@dataclasses.dataclass
class City:
    """A city and its country."""

    name: str
    country: str
    population: int | None = None


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@attrs.frozen
class Paint:
    colour: Colour
    litres: float


class Verdict(TypedDict):
    label: Literal["spam", "ham"]
    score: float


def test_a_dataclass_gets_the_tool_models_schema_and_its_answer_is_structured() -> None:
    spec = OutputSpec.of(City)
    assert spec.schema == schema_for(City)
    assert not spec.wrapped
    assert spec.name == "City"
    assert spec.description == "A city and its country."
    assert spec.check({"name": "Nice", "country": "France"}) == City("Nice", "France")
    # A null for an optional field means "left out", as for tool arguments.
    assert spec.check({"name": "Nice", "country": "France", "population": None}) == City(
        "Nice", "France"
    )


def test_a_wrong_answer_names_each_problem() -> None:
    spec = OutputSpec.of(City)
    with pytest.raises(OutputInvalid) as info:
        spec.check({"name": 5, "capital": True})
    problems = info.value.problems
    assert any(p.startswith("name: got 5 (integer); expected a string") for p in problems)
    assert any(p.startswith("country: missing; it is required") for p in problems)
    assert any(p.startswith("capital: unknown") for p in problems)
    assert str(info.value).startswith("The answer does not match the required schema (3 problems)")


def test_attrs_classes_enums_and_typeddicts() -> None:
    assert OutputSpec.of(Paint).check({"colour": "red", "litres": 2}) == Paint(Colour.RED, 2.0)
    verdict = OutputSpec.of(Verdict)
    assert verdict.check({"label": "ham", "score": 0.25}) == {"label": "ham", "score": 0.25}
    with pytest.raises(OutputInvalid, match='label: got "eggs"'):
        verdict.check({"label": "eggs", "score": 1})


def test_a_value_that_is_no_object_is_sent_wrapped_and_unwrapped() -> None:
    spec = OutputSpec.of(list[City])
    assert spec.wrapped
    assert spec.schema["required"] == ["value"]
    assert spec.schema["properties"]["value"] == schema_for(list[City])
    answer = {"value": [{"name": "Nice", "country": "France"}]}
    assert spec.check(answer) == [City("Nice", "France")]
    # Written as text, the bare list and the wrapped object both read.
    assert spec.parse('[{"name": "Nice", "country": "France"}]') == [City("Nice", "France")]
    assert spec.parse('{"value": []}') == []
    union = OutputSpec.of(City | Paint)
    assert union.wrapped
    assert union.check({"value": {"colour": "blue", "litres": 1}}) == Paint(Colour.BLUE, 1.0)


def test_a_json_schema_keeps_the_json_value() -> None:
    schema = {
        "title": "Weather report",
        "type": "object",
        "properties": {"celsius": {"type": "number"}},
        "required": ["celsius"],
        "additionalProperties": False,
    }
    spec = OutputSpec.of(schema)
    assert spec.name == "Weather_report"
    assert spec.target is None
    assert spec.check({"celsius": 21.5}) == {"celsius": 21.5}
    with pytest.raises(OutputInvalid, match='celsius: got "warm"'):
        spec.check({"celsius": "warm"})


def test_an_unusable_type_or_schema_is_refused_when_the_spec_is_made() -> None:
    with pytest.raises(ToolDefinitionError, match="cannot be expressed as JSON Schema"):
        OutputSpec.of(complex)
    with pytest.raises(ToolDefinitionError, match=r"\$\.properties\.a"):
        OutputSpec.of({"type": "object", "properties": {"a": "string"}})


def test_text_answers_are_parsed_with_the_argument_repairs_and_refused_clearly() -> None:
    spec = OutputSpec.of(City)
    fenced = '```json\n{"name": "Nice", "country": "France"}\n```'
    assert spec.parse(fenced) == City("Nice", "France")
    with pytest.raises(OutputInvalid, match="one JSON object and nothing else"):
        spec.parse("Nice is in France.")


def test_the_answer_tool_and_the_prompted_instructions_carry_the_schema() -> None:
    spec = OutputSpec.of(City)
    function = spec.function()
    assert function.name == ANSWER_TOOL
    assert function.parameters == spec.schema
    assert "final answer" in function.description
    assert '"country"' in spec.instructions()
    error = OutputInvalid(["country: missing"])
    assert spec.retry_message(error).endswith("Answer again with only the corrected JSON object.")
    assert "Call the tool final_answer again" in spec.retry_message(error, tool=ANSWER_TOOL)


def test_a_stored_spec_checks_answers_without_its_type() -> None:
    spec = OutputSpec.of(list[City])
    loaded = OutputSpec.from_json(spec.to_json())
    assert loaded.schema == spec.schema
    assert loaded.target is None
    assert loaded.check({"value": [{"name": "Nice", "country": "France"}]}) == [
        {"name": "Nice", "country": "France"}
    ]
