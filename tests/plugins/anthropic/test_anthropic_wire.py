"""anthropic-messages without a server: request rendering, answer parsing, stream assembly."""

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
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from toolwire.messages import (
    AssistantMessage,
    OpaquePart,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from toolwire_anthropic import (
    DEFAULT_MAX_TOKENS,
    AnthropicMessagesAdapter,
    MessagesStream,
    parse_message,
    render_messages,
    render_messages_request,
    render_tools,
)

SPEC = FunctionSpec(
    name="weather",
    description="The weather.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["city"],
    },
)
THINKING = {"type": "thinking", "thinking": "Let me think.", "signature": "EqQBCkYI=="}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgB=="}
TOOL_USE = {
    "type": "tool_use",
    "id": "toolu_1",
    "name": "weather",
    "input": {"city": "Nice"},
    "caller": {"type": "direct"},
}
SERVER_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "web_search",
    "input": {"query": "nice weather"},
}
SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [{"type": "web_search_result", "url": "https://example.com", "title": "x"}],
}


def cfg(**fields: Any) -> ProviderConfig:
    values: dict[str, Any] = {"adapter": "anthropic-messages", "model": "claude-test"}
    values.update(fields)
    return ProviderConfig(**values)


def req(**fields: Any) -> ModelRequest:
    values: dict[str, Any] = {
        "run_id": "run-3",
        "round": 2,
        "messages": (UserMessage("hi"),),
        "functions": (SPEC,),
    }
    values.update(fields)
    return ModelRequest(**values)


def answer(*blocks: dict[str, Any], stop: str = "tool_use") -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test-2025",
        "content": list(blocks),
        "stop_reason": stop,
        "usage": {
            "input_tokens": 10,
            "cache_read_input_tokens": 5,
            "cache_creation_input_tokens": 1,
            "output_tokens": 4,
        },
    }


# -- request -----------------------------------------------------------------------------------


def test_tools_carry_input_schema_as_written() -> None:
    assert render_tools([SPEC]) == [
        {"name": "weather", "description": "The weather.", "input_schema": dict(SPEC.parameters)}
    ]
    body = render_messages_request(req(), cfg())
    assert AnthropicMessagesAdapter(cfg()).render_tools((SPEC,)) == body["tools"]


@pytest.mark.parametrize(
    ("choice", "parallel", "wire"),
    [
        ("auto", None, None),
        ("auto", False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", None, {"type": "any"}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        (NamedToolChoice("weather"), None, {"type": "tool", "name": "weather"}),
        ("none", False, {"type": "none"}),
    ],
)
def test_tool_choice_maps_to_the_wire(choice: Any, parallel: Any, wire: Any) -> None:
    body = render_messages_request(req(tool_choice=choice, parallel_tool_calls=parallel), cfg())
    assert body.get("tool_choice") == wire


def test_the_parallel_flag_can_be_switched_off_by_config() -> None:
    body = render_messages_request(
        req(parallel_tool_calls=False), cfg(accepts_parallel_tool_calls=False)
    )
    assert "tool_choice" not in body
    assert not AnthropicMessagesAdapter(
        cfg(accepts_parallel_tool_calls=False)
    ).capabilities.accepts_parallel_tool_calls


def test_max_tokens_is_always_sent() -> None:
    assert render_messages_request(req(), cfg())["max_tokens"] == DEFAULT_MAX_TOKENS
    assert render_messages_request(req(), cfg(max_tokens=123))["max_tokens"] == 123


def test_request_fields_and_refusals() -> None:
    body = render_messages_request(
        req(
            messages=(SystemMessage("One."), UserMessage("hi"), SystemMessage("Two.")),
            stream=True,
        ),
        cfg(temperature=0.5, options={"thinking": {"type": "enabled", "budget_tokens": 1024}}),
    )
    assert body["system"] == "One.\n\nTwo."
    assert body["stream"] is True
    assert body["temperature"] == 0.5
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    with pytest.raises(ProviderError, match="not offered"):
        render_messages_request(req(tool_choice=NamedToolChoice("x")), cfg())
    with pytest.raises(ProviderError, match=r"provider\.model"):
        render_messages_request(req(), cfg(model=None))
    no_tools = render_messages_request(req(functions=()), cfg())
    assert "tools" not in no_tools
    assert "tool_choice" not in no_tools


def test_endpoint_key_and_headers() -> None:
    assert AnthropicMessagesAdapter(cfg()).endpoint == "https://api.anthropic.com/v1/messages"
    assert AnthropicMessagesAdapter(cfg()).key_env == "ANTHROPIC_API_KEY"
    local = AnthropicMessagesAdapter(cfg(base_url="http://127.0.0.1:9000/v1/"))
    assert local.endpoint == "http://127.0.0.1:9000/v1/messages"
    assert local.key_env is None
    assert AnthropicMessagesAdapter(cfg(api_key_env="MINE")).key_env == "MINE"


# -- messages ----------------------------------------------------------------------------------


def result(call_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text, **extra}


def test_blocks_go_back_unchanged_and_results_in_one_user_message() -> None:
    message = parse_message(
        answer(
            THINKING,
            REDACTED,
            {"type": "text", "text": "Checking."},
            SERVER_USE,
            SEARCH_RESULT,
            TOOL_USE,
        )
    )
    call = next(c for c in message.tool_calls if not c.provider_executed)
    system, messages = render_messages(
        [
            SystemMessage("sys"),
            UserMessage("Weather in Nice?"),
            message,
            ToolResultMessage(call_id=call.id, name="weather", result=ToolResult.ok("sunny")),
            ToolResultMessage(call_id="toolu_2", name="weather", result=ToolResult.error("down")),
            ToolResultMessage(call_id="toolu_3", name="x", result=ToolResult.blocked("policy")),
            ToolResultMessage(call_id="toolu_4", name="x", result=ToolResult.denied("no")),
            UserMessage("And tomorrow?"),
        ]
    )
    assert system == "sys"
    assert messages == [
        {"role": "user", "content": "Weather in Nice?"},
        {
            "role": "assistant",
            "content": [
                THINKING,
                REDACTED,
                {"type": "text", "text": "Checking."},
                SERVER_USE,
                SEARCH_RESULT,
                TOOL_USE,
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "down",
                    "is_error": True,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_3",
                    "content": "policy",
                    "is_error": True,
                },
                {"type": "tool_result", "tool_use_id": "toolu_4", "content": "no"},
            ],
        },
        {"role": "user", "content": "And tomorrow?"},
    ]


def test_turns_of_other_apis_keep_only_what_this_api_understands() -> None:
    other = AssistantMessage(
        parts=(
            ThinkingPart(text="unsigned reasoning"),
            OpaquePart(api="openai-responses", data={"type": "reasoning"}),
            TextPart(""),
            TextPart("Sure."),
            ToolCall(id="call_1", name="weather", arguments={"city": "Bern"}),
            ToolCall(id="x", name="bad", raw_arguments="{", invalid_reason="bad"),
        ),
        api="openai-chat",
    )
    _, messages = render_messages([other, AssistantMessage(parts=(TextPart(""),))])
    assert messages == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Sure."},
                {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Bern"}},
                {"type": "tool_use", "id": "x", "name": "bad", "input": {}},
            ],
        }
    ]


# -- parsing -----------------------------------------------------------------------------------


def test_blocks_become_parts() -> None:
    message = parse_message(answer(THINKING, REDACTED, TOOL_USE, SERVER_USE, SEARCH_RESULT))
    assert message.parts[0] == ThinkingPart(text="Let me think.", signature="EqQBCkYI==")
    assert message.parts[1] == ThinkingPart(redacted=True, provider_data={"data": "EmwKAhgB=="})
    assert message.parts[2] == ToolCall(
        id="toolu_1",
        name="weather",
        arguments={"city": "Nice"},
        provider_data={"extra": {"caller": {"type": "direct"}}},
    )
    server = message.parts[3]
    assert isinstance(server, ToolCall)
    assert server.provider_executed
    assert server.arguments == {"query": "nice weather"}
    assert message.parts[4] == OpaquePart(api="anthropic-messages", data=SEARCH_RESULT)
    assert message.finish_reason == "tool_calls"
    assert message.usage is not None
    assert message.usage.cache_read_tokens == 5
    assert message.usage.total_tokens == 20


def test_stop_reasons_and_errors() -> None:
    assert (
        parse_message(answer({"type": "text", "text": "x"}, stop="end_turn")).finish_reason
        == "stop"
    )
    assert parse_message(answer(stop="max_tokens")).finish_reason == "length"
    assert parse_message(answer(stop="refusal")).finish_reason == "refusal"
    with pytest.raises(ProviderError, match="invalid_request_error: bad") as info:
        parse_message(
            {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
        )
    assert not info.value.retryable


# -- streaming ---------------------------------------------------------------------------------


def event(kind: str, **fields: Any) -> str:
    return json.dumps({"type": kind, **fields})


def play(data: list[str]) -> tuple[AssistantMessage, list[Event]]:
    events: list[Event] = []
    stream = MessagesStream(req(), events.append)
    for item in data:
        if stream.feed(item):
            break
    return stream.result(), events


def json_delta(text: str) -> dict[str, Any]:
    return {"type": "input_json_delta", "partial_json": text}


def start_of_message() -> str:
    message = {"model": "claude-test", "usage": {"input_tokens": 7, "output_tokens": 1}}
    return event("message_start", message=message)


def test_a_stream_with_thinking_text_and_a_call() -> None:
    data = [
        start_of_message(),
        event("content_block_start", index=0, content_block={"type": "thinking", "thinking": ""}),
        event("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "Hm"}),
        event("content_block_delta", index=0, delta={"type": "signature_delta", "signature": "S1"}),
        event("content_block_stop", index=0),
        event("content_block_start", index=1, content_block={"type": "text", "text": ""}),
        event("ping"),
        event("content_block_delta", index=1, delta={"type": "text_delta", "text": "Look"}),
        event("content_block_stop", index=1),
        event("content_block_start", index=2, content_block={**TOOL_USE, "input": {}}),
        event(
            "content_block_delta", index=2, delta={"type": "input_json_delta", "partial_json": ""}
        ),
        event(
            "content_block_delta",
            index=2,
            delta={"type": "input_json_delta", "partial_json": '{"city": "Ni'},
        ),
        event(
            "content_block_delta",
            index=2,
            delta={"type": "input_json_delta", "partial_json": 'ce"}'},
        ),
        event("content_block_stop", index=2),
        event("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 9}),
        event("message_stop"),
    ]
    message, events = play(data)
    assert message.parts[0] == ThinkingPart(text="Hm", signature="S1")
    assert message.parts[1] == TextPart("Look")
    call = message.parts[2]
    assert isinstance(call, ToolCall)
    assert (call.id, call.name, call.arguments) == ("toolu_1", "weather", {"city": "Nice"})
    assert call.provider_data == {"extra": {"caller": {"type": "direct"}}}
    assert message.finish_reason == "tool_calls"
    assert message.usage is not None
    assert (message.usage.input_tokens, message.usage.output_tokens) == (7, 9)
    assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["Hm"]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Look"]
    assert [e.call_id for e in events if isinstance(e, ToolCallStarted)] == ["toolu_1"]
    deltas = [e for e in events if isinstance(e, ToolCallArgumentsDelta)]
    assert [d.delta for d in deltas] == ['{"city": "Ni', 'ce"}']
    assert [e.call for e in events if isinstance(e, ToolCallCompleted)] == [call]
    _, rendered = render_messages([message])
    assert rendered[0]["content"][0] == {"type": "thinking", "thinking": "Hm", "signature": "S1"}


def test_a_streamed_call_without_argument_deltas_completes_empty() -> None:
    start = {"type": "tool_use", "id": "toolu_9", "name": "now", "input": {}}
    message, _ = play(
        [
            start_of_message(),
            event("content_block_start", index=0, content_block=start),
            event("content_block_stop", index=0),
            event("message_stop"),
        ]
    )
    assert message.tool_calls[0].arguments == {}


def test_a_stream_cut_inside_the_arguments_ends_the_call_invalid() -> None:
    message, events = play(
        [
            start_of_message(),
            event("content_block_start", index=0, content_block={**TOOL_USE, "input": {}}),
            event(
                "content_block_delta",
                index=0,
                delta={"type": "input_json_delta", "partial_json": '{"city": "Ni'},
            ),
            event("message_delta", delta={"stop_reason": "max_tokens"}, usage={"output_tokens": 3}),
            event("message_stop"),
        ]
    )
    (call,) = message.tool_calls
    assert call.arguments is None
    assert call.raw_arguments == '{"city": "Ni'
    assert call.invalid_reason is not None
    assert "max_tokens" in call.invalid_reason
    assert message.finish_reason == "length"
    assert isinstance(events[-1], ToolCallCompleted)


def test_server_tool_blocks_stream_as_provider_run_calls() -> None:
    message, _ = play(
        [
            start_of_message(),
            event("content_block_start", index=0, content_block={**SERVER_USE, "input": {}}),
            event(
                "content_block_delta",
                index=0,
                delta={"type": "input_json_delta", "partial_json": '{"query": "nice weather"}'},
            ),
            event("content_block_stop", index=0),
            event("content_block_start", index=1, content_block=SEARCH_RESULT),
            event("content_block_stop", index=1),
            event("message_stop"),
        ]
    )
    server, result = message.parts
    assert isinstance(server, ToolCall)
    assert server.provider_executed
    assert server.provider_data == {"block": SERVER_USE}
    assert server.arguments == {"query": "nice weather"}
    assert result == OpaquePart(api="anthropic-messages", data=SEARCH_RESULT)
    _, rendered = render_messages([message])
    assert rendered[0]["content"] == [SERVER_USE, SEARCH_RESULT]


def test_unknown_blocks_and_deltas_are_kept_whole() -> None:
    start = {"type": "compaction", "content": None, "encrypted_content": None}
    delta = {"type": "compaction_delta", "content": "Summary.", "encrypted_content": "Ep=="}
    message, _ = play(
        [
            start_of_message(),
            event("content_block_start", index=0, content_block=start),
            event("content_block_delta", index=0, delta=delta),
            event("content_block_stop", index=0),
            event("message_stop"),
        ]
    )
    assert message.parts == (
        OpaquePart(
            api="anthropic-messages",
            data={"type": "compaction", "content": "Summary.", "encrypted_content": "Ep=="},
        ),
    )


def test_stream_error_events_are_provider_errors() -> None:
    stream = MessagesStream(req(), lambda event: None)
    overloaded = {"type": "overloaded_error", "message": "Overloaded"}
    with pytest.raises(ProviderError, match="Overloaded") as info:
        stream.feed(event("error", error=overloaded))
    assert info.value.retryable
