"""openai-responses without a server: request rendering, answer parsing, stream assembly."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolwire import FunctionSpec, ToolResult
from toolwire.adapters import ModelRequest, NamedToolChoice, ProviderError
from toolwire.config import ProviderConfig
from toolwire.events import (
    Event,
    TextDelta,
    ThinkingDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from toolwire.messages import (
    AssistantMessage,
    OpaquePart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from toolwire_openai import (
    OpenAIResponsesAdapter,
    parse_response,
    render_responses_input,
    render_responses_request,
    render_responses_tools,
)
from toolwire_openai._responses import ResponsesStream

SPEC = FunctionSpec(
    name="weather",
    description="The weather.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA=="}
MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "status": "completed",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}],
}
CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "weather",
    "arguments": '{"city":"Lyon"}',
    "status": "completed",
}
SEARCH = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "lyon weather"},
}


def cfg(**fields: Any) -> ProviderConfig:
    return ProviderConfig(adapter="openai-responses", model="gpt-test", **fields)


def req(**fields: Any) -> ModelRequest:
    values: dict[str, Any] = {
        "run_id": "run-2",
        "round": 4,
        "messages": (UserMessage("hi"),),
        "functions": (SPEC,),
    }
    values.update(fields)
    return ModelRequest(**values)


def response(*output: dict[str, Any], status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "status": status,
        "model": "gpt-test-2025",
        "output": list(output),
        "usage": {
            "input_tokens": 20,
            "input_tokens_details": {"cached_tokens": 8},
            "output_tokens": 6,
            "total_tokens": 26,
        },
        **extra,
    }


# -- request -----------------------------------------------------------------------------------


def test_function_tools_are_flat_and_always_say_strict() -> None:
    assert render_responses_tools([SPEC]) == [
        {
            "type": "function",
            "name": "weather",
            "description": "The weather.",
            "parameters": dict(SPEC.parameters),
            "strict": False,
        }
    ]
    (strict,) = render_responses_tools([SPEC], binds_strict=True)
    assert strict["strict"] is True
    assert strict["parameters"]["additionalProperties"] is False


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", None),
        ("none", "none"),
        ("required", "required"),
        (NamedToolChoice("weather"), {"type": "function", "name": "weather"}),
    ],
)
def test_tool_choice_maps_to_the_wire(choice: Any, wire: Any) -> None:
    assert render_responses_request(req(tool_choice=choice), cfg()).get("tool_choice") == wire


def test_request_fields() -> None:
    body = render_responses_request(
        req(
            messages=(SystemMessage("Be brief."), UserMessage("hi")),
            parallel_tool_calls=False,
            stream=True,
        ),
        cfg(max_tokens=50, options={"store": False, "include": ["reasoning.encrypted_content"]}),
    )
    assert body["instructions"] == "Be brief."
    assert body["input"] == [{"role": "user", "content": "hi"}]
    assert body["parallel_tool_calls"] is False
    assert body["max_output_tokens"] == 50
    assert body["stream"] is True
    assert body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    with pytest.raises(ProviderError, match="not offered"):
        render_responses_request(req(tool_choice=NamedToolChoice("x")), cfg())


def test_the_whole_output_goes_back_and_results_by_call_id() -> None:
    message = parse_response(response(REASONING, MESSAGE, CALL, SEARCH))
    (call,) = [c for c in message.tool_calls if not c.provider_executed]
    instructions, items = render_responses_input(
        [
            SystemMessage("sys"),
            UserMessage("Weather in Lyon?"),
            message,
            ToolResultMessage(call_id=call.id, name="weather", result=ToolResult.ok("rain")),
            SystemMessage("a later system note"),
        ]
    )
    assert instructions == "sys"
    assert items == [
        {"role": "user", "content": "Weather in Lyon?"},
        REASONING,
        MESSAGE,
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "weather",
            "arguments": '{"city":"Lyon"}',
            "id": "fc_1",
        },
        SEARCH,
        {"type": "function_call_output", "call_id": "call_1", "output": "rain"},
        {"role": "system", "content": "a later system note"},
    ]


def test_turns_of_other_apis_render_as_plain_items() -> None:
    other = AssistantMessage(
        parts=(
            TextPart("Sure."),
            OpaquePart(api="anthropic-messages", data={"type": "thinking"}),
            ToolCall(id="toolu_1", name="weather", arguments={"city": "Bern"}),
        ),
        api="anthropic-messages",
    )
    _, items = render_responses_input([other])
    assert items == [
        {"role": "assistant", "content": "Sure."},
        {
            "type": "function_call",
            "call_id": "toolu_1",
            "name": "weather",
            "arguments": '{"city":"Bern"}',
        },
    ]


def test_user_parts_become_input_parts() -> None:
    image = {"type": "input_image", "image_url": "data:image/png;base64,AA=="}
    _, items = render_responses_input(
        [UserMessage((TextPart("Look"), OpaquePart(api="openai-responses", data=image)))]
    )
    assert items == [{"role": "user", "content": [{"type": "input_text", "text": "Look"}, image]}]


# -- parsing -----------------------------------------------------------------------------------


def test_output_items_become_parts() -> None:
    message = parse_response(response(REASONING, MESSAGE, CALL, SEARCH))
    assert message.parts[0] == OpaquePart(api="openai-responses", data=REASONING)
    assert message.parts[1] == TextPart("Let me check.")
    assert message.parts[2] == OpaquePart(api="openai-responses", data=MESSAGE)
    call = message.parts[3]
    assert call == ToolCall(
        id="call_1",
        name="weather",
        arguments={"city": "Lyon"},
        raw_arguments='{"city":"Lyon"}',
        provider_data={"item_id": "fc_1"},
    )
    search = message.parts[4]
    assert isinstance(search, ToolCall)
    assert search.provider_executed
    assert search.name == "web_search"
    assert search.arguments == {"action": SEARCH["action"]}
    assert message.finish_reason == "tool_calls"
    assert message.usage is not None
    assert message.usage.cache_read_tokens == 8
    assert message.text == "Let me check."


def test_a_call_without_call_id_ends_the_run_with_an_error() -> None:
    broken = {k: v for k, v in CALL.items() if k != "call_id"}
    with pytest.raises(ProviderError, match="no call_id"):
        parse_response(response(broken))


def test_status_maps_to_the_finish_reason() -> None:
    assert parse_response(response(MESSAGE)).finish_reason == "stop"
    cut = response(MESSAGE, status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    assert parse_response(cut).finish_reason == "length"
    failed = response(status="failed", error={"code": "server_error", "message": "boom"})
    with pytest.raises(ProviderError, match="boom") as info:
        parse_response(failed)
    assert info.value.retryable


# -- streaming ---------------------------------------------------------------------------------


def events_of(
    *items: dict[str, Any], chunk: int = 4, done: str = "response.completed"
) -> list[str]:
    out = [{"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}]
    for index, item in enumerate(items):
        if item["type"] == "function_call":
            added = {**item, "arguments": ""}
            out.append({"type": "response.output_item.added", "output_index": index, "item": added})
            text = item["arguments"]
            for start in range(0, len(text), chunk):
                out.append(
                    {
                        "type": "response.function_call_arguments.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "delta": text[start : start + chunk],
                    }
                )
        elif item["type"] == "message":
            added = {**item, "content": []}
            out.append({"type": "response.output_item.added", "output_index": index, "item": added})
            text = item["content"][0]["text"]
            for start in range(0, len(text), chunk):
                out.append(
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "delta": text[start : start + chunk],
                    }
                )
        else:
            out.append({"type": "response.output_item.added", "output_index": index, "item": item})
        out.append({"type": "response.output_item.done", "output_index": index, "item": item})
    if done:
        out.append({"type": done, "response": response(*items)})
    return [json.dumps(e) for e in out]


def play(data: list[str]) -> tuple[AssistantMessage, list[Event]]:
    events: list[Event] = []
    stream = ResponsesStream(req(), events.append)
    for item in data:
        if stream.feed(item):
            break
    return stream.result(), events


def test_a_stream_gives_the_same_turn_as_the_answer() -> None:
    streamed, events = play(events_of(REASONING, MESSAGE, CALL, SEARCH))
    assert streamed == parse_response(response(REASONING, MESSAGE, CALL, SEARCH))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Let me check."
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(e.call_id, e.name) for e in started] == [("call_1", "weather"), ("ws_1", "web_search")]
    completed = [e.call for e in events if isinstance(e, ToolCallCompleted)]
    assert completed == list(streamed.tool_calls)


def test_reasoning_summaries_stream_as_thinking() -> None:
    data = [
        json.dumps(
            {"type": "response.reasoning_summary_text.delta", "item_id": "rs", "delta": "Hm"}
        ),
        json.dumps({"type": "response.completed", "response": response(MESSAGE)}),
    ]
    _, events = play(data)
    assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["Hm"]


def test_a_stream_cut_before_completion_ends_open_calls_invalid() -> None:
    data = events_of(CALL, done="")[:-2]  # no arguments.done, no item.done, no completion
    message, _ = play(data)
    (call,) = message.tool_calls
    assert call.arguments is None
    assert call.raw_arguments is not None
    assert call.raw_arguments.startswith('{"city')
    assert message.finish_reason == "incomplete"


def test_stream_errors_are_provider_errors() -> None:
    stream = ResponsesStream(req(), lambda event: None)
    with pytest.raises(ProviderError, match="overloaded") as info:
        stream.feed(json.dumps({"type": "error", "code": "server_error", "message": "overloaded"}))
    assert info.value.retryable
    stream = ResponsesStream(req(), lambda event: None)
    broken = {k: v for k, v in CALL.items() if k != "call_id"}
    with pytest.raises(ProviderError, match="no call_id"):
        stream.feed(
            json.dumps({"type": "response.output_item.done", "output_index": 0, "item": broken})
        )


@pytest.mark.parametrize("base_url", [None, "http://127.0.0.1:11434/v1"])
def test_render_tools_is_exactly_what_the_request_carries(base_url: str | None) -> None:
    config = cfg(base_url=base_url)
    body = render_responses_request(req(), config)
    assert OpenAIResponsesAdapter(config).render_tools((SPEC,)) == body["tools"]
