"""The JSON form of events (``Run.to_json``, the trace): every field in declaration order, records
as their own forms, the partial arguments of a delta and an empty parent left out."""

from __future__ import annotations

import enum
import functools
import types

import attrs

from toolwire.events import (
    Event,
    ParentCall,
    ResponseReceived,
    RoundFinished,
    RoundStarted,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCompleted,
    ToolStarted,
)
from toolwire.loop._codec import event_to_json, message_to_json, result_to_json
from toolwire.messages import AssistantMessage, TextPart, ToolCall
from toolwire.tools import ToolResult
from toolwire.usage import Usage

CALL = ToolCall(
    id="c1", name="calculator", arguments={"expression": "1 + 2"}, raw_arguments='{"x":1}'
)


def test_an_event_of_leaves_is_its_fields_after_its_kind() -> None:
    out = event_to_json(RoundFinished(run_id="r", round=3, tool_calls=1))
    assert out == {"kind": "round_finished", "run_id": "r", "round": 3, "tool_calls": 1}
    assert list(out) == ["kind", "run_id", "round", "tool_calls"]


def test_tuples_become_lists_and_records_their_own_forms() -> None:
    offered = event_to_json(RoundStarted(run_id="r", round=1, offered=("a", "b")))
    assert offered["offered"] == ["a", "b"]
    completed = event_to_json(ToolCallCompleted(run_id="r", round=1, call=CALL))
    assert completed["call"] == {
        "id": "c1",
        "name": "calculator",
        "arguments": {"expression": "1 + 2"},
        "raw_arguments": '{"x":1}',
        "invalid_reason": None,
        "provider_executed": False,
        "provider_data": None,
    }
    message = AssistantMessage(
        parts=(TextPart("hi"), CALL), usage=Usage(input_tokens=3, output_tokens=4)
    )
    received = event_to_json(ResponseReceived(run_id="r", round=1, message=message))
    assert received["message"] == message_to_json(message)
    assert received["message"]["usage"]["input_tokens"] == 3


def test_a_result_keeps_its_optional_fields_in_order() -> None:
    result = ToolResult.ok("3", usage=Usage(input_tokens=1), cost=0.5)
    out = event_to_json(
        ToolCompleted(run_id="r", round=1, call_id="c1", name="calculator", result=result)
    )
    assert out["result"] == result_to_json(result)
    assert list(out["result"])[-2:] == ["usage", "cost"]
    assert "follow_up" not in out["result"]
    assert "usage" not in result_to_json(ToolResult.ok(""))


def test_a_subclass_of_a_record_gets_the_same_form() -> None:
    @attrs.frozen(kw_only=True)
    class Marked(ToolResult):
        pass

    marked = Marked(content="3")
    out = event_to_json(
        ToolCompleted(run_id="r", round=1, call_id="c1", name="calculator", result=marked)
    )
    assert out["result"] == result_to_json(ToolResult(content="3"))


def test_mappings_and_enums_inside_values_become_json() -> None:
    class Colour(enum.Enum):
        RED = "red"

    arguments = types.MappingProxyType({"colour": Colour.RED, "n": (1, 2), "none": None})
    out = event_to_json(
        ToolStarted(run_id="r", round=1, call_id="c1", name="paint", arguments=arguments)
    )
    assert out["arguments"] == {"colour": "red", "n": [1, 2], "none": None}


def test_partial_arguments_and_an_empty_parent_are_left_out() -> None:
    delta = ToolCallArgumentsDelta(
        run_id="r", round=1, call_id="c1", delta='{"x"', partial_arguments={"x": None}
    )
    out = event_to_json(delta)
    assert out == {"kind": "tool_call_arguments_delta", "run_id": "r", "round": 1,
                   "call_id": "c1", "delta": '{"x"'}  # fmt: skip
    parent = ParentCall(run_id="p", call_id="pc", round=2)
    child = event_to_json(attrs.evolve(delta, parent=parent))
    assert child["parent"] == {"run_id": "p", "call_id": "pc", "round": 2}
    assert list(child) == ["kind", "run_id", "round", "parent", "call_id", "delta"]


@attrs.frozen(kw_only=True)
class SlottedNote(Event):
    """A plugin's event with slots of its own: its fields are not all in its instance dict."""

    note: str
    offered: tuple[str, ...] = ()


@attrs.frozen(kw_only=True, slots=False)
class CachedNote(Event):
    """A plugin's event that keeps a worked-out value in its instance dict."""

    note: str

    @functools.cached_property
    def shout(self) -> str:
        return self.note.upper()


def test_an_event_whose_dict_is_not_its_fields_gets_the_same_form() -> None:
    slotted = event_to_json(SlottedNote(run_id="r", round=2, note="n", offered=("a",)))
    assert list(slotted.items()) == [
        ("kind", "slotted_note"),
        ("run_id", "r"),
        ("round", 2),
        ("note", "n"),
        ("offered", ["a"]),
    ]
    noted = CachedNote(run_id="r", round=2, note="n")
    assert noted.shout == "N"  # now in the instance dict beside the fields
    assert list(event_to_json(noted).items()) == [
        ("kind", "cached_note"),
        ("run_id", "r"),
        ("round", 2),
        ("note", "n"),
    ]
