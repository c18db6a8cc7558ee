"""Calls written into an answer's text while native tools were on, read back as calls."""

from __future__ import annotations

import pytest

from toolwire import FunctionSpec
from toolwire.messages import AssistantMessage, TextPart, ThinkingPart, ToolCall
from toolwire.prompted import recover_text_calls

CALC = FunctionSpec(
    name="calculator",
    description="Evaluate arithmetic.",
    parameters={
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
)
TIME = FunctionSpec(
    name="current_time",
    description="The time in a place.",
    parameters={"type": "object", "properties": {"timezone": {"type": "string"}}},
)
OFFERED = (CALC, TIME)


def _answer(text: str, finish: str = "stop") -> AssistantMessage:
    return AssistantMessage(parts=(TextPart(text),), api="openai-chat", finish_reason=finish)


@pytest.mark.parametrize(
    ("text", "form"),
    [
        (
            '<tool_call>{"name": "calculator", "arguments": {"expression": "2+2"}}</tool_call>',
            "tool_call",
        ),
        ('{"name": "calculator", "arguments": {"expression": "2+2"}}', "json"),
        ('```json\n{"name": "calculator", "arguments": {"expression": "2+2"}}\n```', "json"),
        ("calculator(expression='2+2')", "python"),
        ('functions.calculator:\n{"expression": "2+2"}', "routing"),
    ],
)
def test_each_written_form_becomes_a_call(text: str, form: str) -> None:
    found = recover_text_calls(_answer(text), OFFERED)
    assert found is not None
    (call,) = found.message.tool_calls
    assert (call.name, call.arguments) == ("calculator", {"expression": "2+2"})
    assert found.forms == (form,)
    assert found.message.text == ""
    assert found.message.finish_reason == "tool_calls"


def test_text_around_a_call_stays_and_other_parts_are_kept() -> None:
    message = AssistantMessage(
        parts=(
            ThinkingPart(text="adding"),
            TextPart(
                'Let me work it out.\n{"name": "calculator", "arguments": {"expression": "1+1"}}'
            ),
        )
    )
    found = recover_text_calls(message, OFFERED)
    assert found is not None
    kinds = [type(p).__name__ for p in found.message.parts]
    assert kinds == ["ThinkingPart", "TextPart", "ToolCall"]
    assert found.message.text == "Let me work it out."


def test_routing_text_alone_is_a_failed_call_naming_the_tool() -> None:
    found = recover_text_calls(_answer("functions.current_time:"), OFFERED)
    assert found is not None
    (call,) = found.message.tool_calls
    assert call.name == "current_time"
    assert call.arguments is None
    assert call.raw_arguments == "functions.current_time:"
    assert call.invalid_reason is not None
    assert "routing text" in call.invalid_reason
    assert "call current_time again with its arguments" in call.invalid_reason
    assert found.forms == ("routing",)


def test_a_broken_call_is_a_failed_call_not_an_answer() -> None:
    found = recover_text_calls(
        _answer('<tool_call>{"name": "calculator", "arguments": {"expression": </tool_call>'),
        OFFERED,
    )
    assert found is not None
    (call,) = found.message.tool_calls
    assert call.name == "calculator"
    assert call.arguments is None
    assert call.invalid_reason


@pytest.mark.parametrize(
    "text",
    [
        "The answer is 4.",
        '{"name": "weather", "arguments": {"city": "Paris"}}',  # not offered
        "functions.weather:",  # not offered
        "You could call calculator(expression='2+2') yourself.",  # a mention in prose
        "",
    ],
)
def test_text_that_names_no_offered_call_stays_an_answer(text: str) -> None:
    assert recover_text_calls(_answer(text), OFFERED) is None


def test_a_turn_with_native_calls_or_no_offer_is_left_alone() -> None:
    native = AssistantMessage(
        parts=(
            TextPart('{"name": "calculator", "arguments": {"expression": "1"}}'),
            ToolCall(id="c1", name="calculator", arguments={"expression": "2"}),
        )
    )
    assert recover_text_calls(native, OFFERED) is None
    assert recover_text_calls(_answer("calculator(expression='1')"), ()) is None


def test_ids_come_from_new_id_when_given() -> None:
    found = recover_text_calls(
        _answer("functions.calculator:"), OFFERED, new_id=lambda index: f"call_x_{index}"
    )
    assert found is not None
    assert found.message.tool_calls[0].id == "call_x_0"
