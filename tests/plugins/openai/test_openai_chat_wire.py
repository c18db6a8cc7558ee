"""openai-chat without a server: request rendering, answer parsing, stream assembly."""

from __future__ import annotations

import json
from typing import Any

import pytest

import toolwire
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
from toolwire_openai import (
    ChatStream,
    OpenAIChatAdapter,
    host_profile,
    parse_chat_completion,
    render_chat_messages,
    render_chat_request,
    render_chat_tools,
)

WEATHER = FunctionSpec(
    name="weather",
    description="The weather in a city.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["c", "f"]},
        },
        "required": ["city"],
    },
)
OPEN_DICT = FunctionSpec(
    name="tag",
    description="Attach tags.",
    parameters={
        "type": "object",
        "properties": {"tags": {"type": "object", "additionalProperties": {"type": "string"}}},
        "required": ["tags"],
    },
)


def cfg(**fields: Any) -> ProviderConfig:
    values: dict[str, Any] = {"adapter": "openai-chat", "model": "gpt-test"}
    values.update(fields)
    return ProviderConfig(**values)


def req(**fields: Any) -> ModelRequest:
    values: dict[str, Any] = {
        "run_id": "run-1",
        "round": 1,
        "messages": (UserMessage("hi"),),
        "functions": (WEATHER,),
    }
    values.update(fields)
    return ModelRequest(**values)


# -- host profile ------------------------------------------------------------------------------


def test_openai_defaults_differ_from_other_hosts() -> None:
    openai = host_profile(cfg())
    assert openai.base_url == "https://api.openai.com/v1"
    assert openai.key_env == "OPENAI_API_KEY"
    assert openai.binds_strict
    assert openai.accepts_parallel
    local = host_profile(cfg(base_url="http://localhost:11434/v1/"))
    assert local.base_url == "http://localhost:11434/v1"
    assert local.key_env is None
    assert not local.binds_strict
    assert not local.accepts_parallel
    assert host_profile(cfg(base_url="https://openrouter.ai/api/v1")).accepts_parallel
    configured = host_profile(
        cfg(
            base_url="http://localhost:8000/v1",
            api_key_env="VLLM_KEY",
            enforces_strict_tool_schemas=True,
            accepts_parallel_tool_calls=True,
            native_tools=False,
        )
    )
    assert configured.key_env == "VLLM_KEY"
    assert configured.binds_strict
    assert configured.accepts_parallel
    assert not configured.native_tools


def test_capabilities_follow_the_host() -> None:
    caps = OpenAIChatAdapter(cfg(base_url="http://localhost:1234/v1")).capabilities
    assert caps.native_tools
    assert not caps.binds_strict_schemas
    assert not caps.accepts_parallel_tool_calls
    assert caps.tool_choice == frozenset({"auto", "none", "required", "named"})
    assert OpenAIChatAdapter(cfg()).capabilities.binds_strict_schemas


# -- tools -------------------------------------------------------------------------------------


def test_tools_go_as_written_to_hosts_that_do_not_bind_output() -> None:
    (tool,) = render_chat_tools([WEATHER])
    assert tool == {
        "type": "function",
        "function": {
            "name": "weather",
            "description": "The weather in a city.",
            "parameters": dict(WEATHER.parameters),
        },
    }


def test_tools_are_projected_to_strict_form_where_the_host_binds_output() -> None:
    (tool,) = render_chat_tools([WEATHER], binds_strict=True)
    function = tool["function"]
    assert function["strict"] is True
    parameters = function["parameters"]
    assert parameters["additionalProperties"] is False
    assert sorted(parameters["required"]) == ["city", "unit"]
    assert "null" in parameters["properties"]["unit"]["type"]
    assert None in parameters["properties"]["unit"]["enum"]


def test_a_schema_strict_mode_cannot_express_falls_back_for_that_tool_alone() -> None:
    weather, tag = render_chat_tools([WEATHER, OPEN_DICT], binds_strict=True)
    assert weather["function"]["strict"] is True
    assert tag["function"]["strict"] is False  # said plainly to a host that binds output
    assert tag["function"]["parameters"] == dict(OPEN_DICT.parameters)


def test_a_tool_that_refuses_strict_is_never_projected() -> None:
    spec = FunctionSpec(
        name=WEATHER.name,
        description=WEATHER.description,
        parameters=WEATHER.parameters,
        strict=False,
    )
    (tool,) = render_chat_tools([spec], binds_strict=True)
    assert tool["function"]["strict"] is False


def test_render_tools_uses_the_tools_own_projection() -> None:
    @toolwire.tool
    def lookup(city: str, unit: str | None = None) -> str:
        """Look a city up.

        Args:
            city: The city.
            unit: The unit.
        """
        return city

    adapter = OpenAIChatAdapter(cfg())
    (tool,) = adapter.render_tools((lookup.function_spec(),))
    assert tool["function"]["strict"] is True
    assert tool["function"]["parameters"] == lookup.strict_projection().schema


# -- request -----------------------------------------------------------------------------------


def test_a_request_needs_a_model() -> None:
    with pytest.raises(ProviderError, match=r"provider\.model"):
        render_chat_request(req(), cfg(model=None))


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        (NamedToolChoice("weather"), {"type": "function", "function": {"name": "weather"}}),
    ],
)
def test_tool_choice_maps_to_the_wire(choice: Any, wire: Any) -> None:
    body = render_chat_request(req(tool_choice=choice), cfg())
    assert body.get("tool_choice") == wire


def test_tool_choice_that_cannot_be_satisfied_is_refused() -> None:
    with pytest.raises(ProviderError, match=r"'nope'.*offered: weather"):
        render_chat_request(req(tool_choice=NamedToolChoice("nope")), cfg())
    with pytest.raises(ProviderError, match="'required' needs at least one"):
        render_chat_request(req(functions=(), tool_choice="required"), cfg())


def test_serial_execution_sends_parallel_tool_calls_false_where_accepted() -> None:
    assert (
        render_chat_request(req(parallel_tool_calls=False), cfg())["parallel_tool_calls"] is False
    )
    local = cfg(base_url="http://127.0.0.1:8080/v1")
    assert "parallel_tool_calls" not in render_chat_request(req(parallel_tool_calls=False), local)
    accepting = cfg(base_url="http://127.0.0.1:8080/v1", accepts_parallel_tool_calls=True)
    assert (
        render_chat_request(req(parallel_tool_calls=False), accepting)["parallel_tool_calls"]
        is False
    )
    assert "parallel_tool_calls" not in render_chat_request(req(parallel_tool_calls=None), cfg())
    assert "parallel_tool_calls" not in render_chat_request(
        req(functions=(), parallel_tool_calls=False), cfg()
    )


def test_without_functions_there_are_no_tools_fields() -> None:
    body = render_chat_request(req(functions=(), tool_choice="none"), cfg())
    assert "tools" not in body
    assert "tool_choice" not in body


def test_limits_streaming_and_options() -> None:
    body = render_chat_request(
        req(stream=True, options={"seed": 7}),
        cfg(max_tokens=99, temperature=0.2, options={"reasoning_effort": "low"}),
    )
    assert body["max_completion_tokens"] == 99
    assert body["temperature"] == 0.2
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["reasoning_effort"] == "low"
    assert body["seed"] == 7
    local = render_chat_request(req(), cfg(base_url="http://127.0.0.1:1/v1", max_tokens=5))
    assert local["max_tokens"] == 5
    assert "max_completion_tokens" not in local


# -- messages ----------------------------------------------------------------------------------


def conversation() -> list[Any]:
    call_a = ToolCall(
        id="call_a", name="weather", arguments={"city": "Zürich"}, raw_arguments='{"city":"Zürich"}'
    )
    call_b = ToolCall(id="call_b", name="weather", arguments={"city": "Oslo"})
    return [
        SystemMessage("Be brief."),
        UserMessage("Weather?"),
        AssistantMessage(
            parts=(ThinkingPart(text="hmm"), TextPart("Checking."), call_a, call_b),
            api="openai-chat",
        ),
        ToolResultMessage(call_id="call_a", name="weather", result=ToolResult.ok("sunny")),
        ToolResultMessage(
            call_id="call_b", name="weather", result=ToolResult.error("no such city: Oslo")
        ),
    ]


def test_messages_render_with_one_tool_message_per_result() -> None:
    rendered = render_chat_messages(conversation())
    assert rendered == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Zürich"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Oslo"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_b", "content": "no such city: Oslo"},
    ]


def test_argument_text_going_back() -> None:
    unparsed = ToolCall(id="x", name="t", raw_arguments="{oops", invalid_reason="bad")
    repaired = ToolCall(id="y", name="t", arguments={"a": 1}, raw_arguments="{a: 1}")
    verbatim = ToolCall(id="z", name="t", arguments={"a": 1}, raw_arguments='{ "a" : 1 }')
    (message,) = render_chat_messages([AssistantMessage(parts=(unparsed, repaired, verbatim))])
    texts = [c["function"]["arguments"] for c in message["tool_calls"]]
    assert texts == ["{}", '{"a":1}', '{ "a" : 1 }']
    # A string, never absent or null: chat templates of local hosts read it.
    assert message["content"] == ""


def test_fields_a_host_attached_to_a_call_go_back() -> None:
    payload = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "t", "arguments": "{}"},
                            "extra_content": {"google": {"thought_signature": "sig=="}},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    message = parse_chat_completion(payload)
    (rendered,) = render_chat_messages([message])
    assert rendered["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "sig=="}}


def test_parts_of_other_apis_and_provider_run_calls_are_left_out() -> None:
    message = AssistantMessage(
        parts=(
            OpaquePart(api="openai-responses", data={"type": "reasoning"}),
            ToolCall(id="ws", name="web_search", arguments={}, provider_executed=True),
            TextPart("Answer."),
        )
    )
    assert render_chat_messages([message]) == [{"role": "assistant", "content": "Answer."}]


def test_user_parts_render_as_content_parts() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}
    message = UserMessage(
        (TextPart("Look:"), OpaquePart(api="openai-chat", data=image), OpaquePart(api="x", data={}))
    )
    assert render_chat_messages([message]) == [
        {"role": "user", "content": [{"type": "text", "text": "Look:"}, image]}
    ]


# -- parsing -----------------------------------------------------------------------------------


def completion(message: dict[str, Any], finish: str = "tool_calls", **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-test-2024",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": 10,
            "completion_tokens": 5,
            "total_tokens": 15,
            "prompt_tokens_details": {"cached_tokens": 4},
        },
        **extra,
    }


def test_calls_without_ids_get_generated_ones() -> None:
    payload = completion(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "", "type": "function", "function": {"name": "now", "arguments": "{}"}},
                {"type": "function", "function": {"name": "now", "arguments": "{}"}},
            ],
        }
    )
    message = parse_chat_completion(payload)
    ids = [call.id for call in message.tool_calls]
    assert all(i.startswith("call_") and len(i) > 10 for i in ids)
    assert len(set(ids)) == 2


@pytest.mark.parametrize("arguments", [None, "", "null", "{}", {}])
def test_calls_without_arguments_complete_as_empty_objects(arguments: Any) -> None:
    function: dict[str, Any] = {"name": "now"}
    if arguments is not None:
        function["arguments"] = arguments
    payload = completion(
        {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": function}]}
    )
    (call,) = parse_chat_completion(payload).tool_calls
    assert call.arguments == {}
    assert call.is_valid


def test_arguments_sent_as_an_object_are_accepted() -> None:
    payload = completion(
        {
            "role": "assistant",
            "tool_calls": [{"id": "c", "function": {"name": "t", "arguments": {"a": [1, 2]}}}],
        }
    )
    (call,) = parse_chat_completion(payload).tool_calls
    assert call.arguments == {"a": [1, 2]}


def test_invalid_arguments_keep_their_raw_text() -> None:
    payload = completion(
        {
            "role": "assistant",
            "tool_calls": [{"id": "c", "function": {"name": "t", "arguments": "{a:"}}],
        }
    )
    (call,) = parse_chat_completion(payload).tool_calls
    assert call.arguments is None
    assert call.raw_arguments == "{a:"
    assert call.invalid_reason is not None


def test_reasoning_text_usage_and_finish_reason() -> None:
    payload = completion(
        {"role": "assistant", "content": "Paris.", "reasoning_content": "The capital..."},
        finish="stop",
    )
    message = parse_chat_completion(payload)
    assert message.parts == (ThinkingPart(text="The capital..."), TextPart("Paris."))
    assert message.api == "openai-chat"
    assert message.model == "gpt-test-2024"
    assert message.finish_reason == "stop"
    assert message.usage is not None
    assert (message.usage.input_tokens, message.usage.output_tokens) == (10, 5)
    assert message.usage.cache_read_tokens == 4
    assert message.usage.total_tokens == 15


def test_a_refusal_is_the_text_of_the_turn() -> None:
    payload = completion({"role": "assistant", "content": None, "refusal": "I can't."}, "stop")
    assert parse_chat_completion(payload).text == "I can't."


def test_a_legacy_function_call_is_one_call() -> None:
    payload = completion(
        {"role": "assistant", "function_call": {"name": "t", "arguments": '{"a": 1}'}},
        "function_call",
    )
    message = parse_chat_completion(payload)
    assert [(c.name, c.arguments) for c in message.tool_calls] == [("t", {"a": 1})]
    assert message.finish_reason == "tool_calls"


def test_error_bodies_and_empty_answers_are_errors() -> None:
    with pytest.raises(ProviderError, match="model overloaded"):
        parse_chat_completion({"error": {"message": "model overloaded", "code": "server_error"}})
    with pytest.raises(ProviderError, match="no choices"):
        parse_chat_completion({"choices": []})


# -- streaming ---------------------------------------------------------------------------------


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
    return json.dumps(
        {"model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
    )


def play(chunks: list[str]) -> tuple[AssistantMessage, list[Event]]:
    events: list[Event] = []
    stream = ChatStream(req(), events.append)
    for data in chunks:
        if stream.feed(data):
            break
    return stream.result(), events


def call_delta(index: int | None, **fields: Any) -> dict[str, Any]:
    delta: dict[str, Any] = dict(fields)
    if index is not None:
        delta["index"] = index
    return {"tool_calls": [delta]}


def test_interleaved_parallel_calls_assemble_by_index() -> None:
    message, events = play(
        [
            chunk({"role": "assistant", "content": None}),
            chunk(call_delta(0, id="a", function={"name": "weather", "arguments": ""})),
            chunk(call_delta(1, id="b", function={"name": "weather", "arguments": '{"ci'})),
            chunk(call_delta(0, function={"arguments": '{"city": "Ro'})),
            chunk(call_delta(1, function={"arguments": 'ty": "Oslo"}'})),
            chunk(call_delta(0, function={"arguments": 'me"}'})),
            chunk({}, "tool_calls"),
            json.dumps({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}),
            "[DONE]",
        ]
    )
    assert [(c.id, c.arguments) for c in message.tool_calls] == [
        ("a", {"city": "Rome"}),
        ("b", {"city": "Oslo"}),
    ]
    assert message.finish_reason == "tool_calls"
    assert message.usage is not None
    assert message.usage.output_tokens == 4
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(e.call_id, e.index) for e in started] == [("a", 0), ("b", 1)]
    partial = [e.partial_arguments for e in events if isinstance(e, ToolCallArgumentsDelta)]
    assert partial[-1] == {"city": "Rome"}
    assert [e.call.id for e in events if isinstance(e, ToolCallCompleted)] == ["a", "b"]
    assert all(e.run_id == "run-1" and e.round == 1 for e in events)


def test_calls_without_indexes_are_keyed_by_id() -> None:
    message, _ = play(
        [
            chunk(call_delta(None, id="x", function={"name": "t", "arguments": '{"n": 1}'})),
            chunk(call_delta(None, id="y", function={"name": "t", "arguments": '{"n": 2}'})),
            chunk({}, "tool_calls"),
        ]
    )
    assert [(c.id, c.arguments) for c in message.tool_calls] == [("x", {"n": 1}), ("y", {"n": 2})]


@pytest.mark.parametrize("arguments", [None, "", "{}"])
def test_a_streamed_call_without_arguments_completes_empty(arguments: Any) -> None:
    function: dict[str, Any] = {"name": "now"}
    if arguments is not None:
        function["arguments"] = arguments
    message, _ = play([chunk(call_delta(0, id="n", function=function)), chunk({}, "tool_calls")])
    assert message.tool_calls[0].arguments == {}


def test_a_stream_without_a_finish_reason_ends_open_calls() -> None:
    message, events = play(
        [chunk(call_delta(0, id="c", function={"name": "t", "arguments": '{"text": "cut'}))]
    )
    (call,) = message.tool_calls
    assert call.arguments is None
    assert call.raw_arguments == '{"text": "cut'
    assert call.invalid_reason is not None
    assert "without a finish reason" in call.invalid_reason
    assert isinstance(events[-1], ToolCallCompleted)


def test_streamed_text_and_reasoning() -> None:
    message, events = play(
        [
            chunk({"role": "assistant", "reasoning": "Think"}),
            chunk({"reasoning": "ing."}),
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}),
            chunk({}, "stop"),
            "[DONE]",
            chunk({"content": "after the end"}),
        ]
    )
    assert message.parts == (ThinkingPart(text="Thinking."), TextPart("Hello"))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo"]
    assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["Think", "ing."]


def test_a_stream_error_chunk_is_a_provider_error() -> None:
    stream = ChatStream(req(), lambda event: None)
    with pytest.raises(ProviderError, match="rate"):
        stream.feed(
            json.dumps({"error": {"message": "rate limited", "code": "rate_limit_exceeded"}})
        )


@pytest.mark.parametrize("base_url", [None, "http://127.0.0.1:11434/v1"])
def test_render_tools_is_exactly_what_the_request_carries(base_url: str | None) -> None:
    config = cfg(base_url=base_url)
    adapter = OpenAIChatAdapter(config)
    functions = (WEATHER, OPEN_DICT)
    body = render_chat_request(req(functions=functions), config)
    assert adapter.render_tools(functions) == body["tools"]


def test_a_call_sent_both_as_tool_calls_and_function_call_counts_once() -> None:
    # llama-cpp-python's server repeats every call delta in the legacy `function_call` field.
    def both(function: dict[str, Any], **fields: Any) -> dict[str, Any]:
        return {"function_call": function, **call_delta(0, function=function, **fields)}

    message, _ = play(
        [
            chunk(both({"name": "add", "arguments": '{"a": '}, id="c1", type="function")),
            chunk(both({"arguments": "2}"})),
            chunk({}, "tool_calls"),
            "[DONE]",
        ]
    )
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [("c1", "add", {"a": 2})]
