"""The Gemini wire format against the fixture set (shapes from the API reference), the loopback
fake server and the host's real transport."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import toolwire
import toolwire_gemini._plugin
from toolwire import Config, FunctionSpec, Host
from toolwire.adapters import ModelRequest, NamedToolChoice, ProviderError
from toolwire.config import ConfigError, LedgerConfig, ProviderConfig, config_from_dict
from toolwire.events import ProviderRetry, ToolCallArgumentsDelta, ToolCallStarted
from toolwire.http._sse import SSEDecoder
from toolwire.messages import (
    AssistantMessage,
    OpaquePart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from toolwire.testing import ErrorReply, tool_call
from toolwire.tools import ToolResult
from toolwire_gemini import (
    GeminiAdapter,
    GeminiSettings,
    GenerateStream,
    parse_response,
    render_contents,
    render_request,
)
from toolwire_gemini._wire import SKIP_SIGNATURE
from toolwire_gemini.testing import FakeGeminiServer, signature

FIXTURES = Path(__file__).parent / "fixtures"
KEY = "gm-test-key-0123456789"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def streamed(name: str, events: list[Any] | None = None) -> AssistantMessage:
    decoder = SSEDecoder()
    raw = (FIXTURES / name).read_bytes()
    reader = GenerateStream(REQUEST, (events if events is not None else []).append)
    for event in decoder.feed(raw) + decoder.close():
        reader.feed(event.data)
    return reader.result()


REQUEST = ModelRequest(run_id="r", round=1, messages=(UserMessage("hi"),))
WEATHER = FunctionSpec(
    name="get_weather",
    description="The weather at a place.",
    parameters={
        "type": "object",
        "properties": {
            "location": {"type": "string"},
            "unit": {"enum": ["celsius", "fahrenheit"]},
        },
        "required": ["location"],
    },
)


def result(call: ToolCall, text: str, *, failed: bool = False) -> ToolResultMessage:
    made = ToolResult.error(text) if failed else ToolResult.ok(text)
    return ToolResultMessage(call_id=call.id, name=call.name, result=made)


# -- answers -----------------------------------------------------------------------------------


def test_a_call_with_an_id_keeps_it_and_its_signature() -> None:
    message = parse_response(fixture("call_with_id.json"))
    [call] = message.tool_calls
    assert call.id == "fc-7f3a91"
    assert call.name == "get_weather"
    assert call.arguments == {"location": "Zürich", "unit": "celsius"}
    assert message.finish_reason == "tool_calls"
    assert message.response_id == "resp-call-with-id"
    assert message.model == "gemini-3-flash-preview"
    assert message.usage is not None
    assert (message.usage.input_tokens, message.usage.output_tokens) == (71, 80)
    assert message.usage.total_tokens == 151
    # Back in the history: the part as it came, signature on it, id and all.
    _, contents = render_contents([UserMessage("hi"), message])
    assert contents[1] == {
        "role": "model",
        "parts": fixture("call_with_id.json")["candidates"][0]["content"]["parts"],
    }


def test_calls_without_ids_get_the_hosts_and_are_answered_by_name_and_order() -> None:
    message = parse_response(fixture("parallel_without_ids.json"))
    assert isinstance(message.parts[0], TextPart)
    first, second = message.tool_calls
    assert first.id
    assert second.id
    assert first.id != second.id
    assert [c.arguments for c in message.tool_calls] == [
        {"location": "Paris"},
        {"location": "Tokyo"},
    ]
    # Results arriving in another order go back in the order of the calls, without ids.
    history = [UserMessage("weather?"), message, result(second, "rain"), result(first, "sun")]
    _, contents = render_contents(history)
    wire = fixture("parallel_without_ids.json")["candidates"][0]["content"]["parts"]
    assert contents[1]["parts"] == wire  # only the first call carries the signature
    assert contents[2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"output": "sun"}}},
            {"functionResponse": {"name": "get_weather", "response": {"output": "rain"}}},
        ],
    }


def test_results_go_in_a_function_turn_for_older_models_and_failures_under_error() -> None:
    message = parse_response(fixture("call_with_id.json"))
    [call] = message.tool_calls
    history = [UserMessage("hi"), message, result(call, "no such place", failed=True)]
    _, contents = render_contents(history, result_role="function")
    assert contents[2] == {
        "role": "function",
        "parts": [
            {
                "functionResponse": {
                    "id": "fc-7f3a91",
                    "name": "get_weather",
                    "response": {"error": "no such place"},
                }
            }
        ],
    }


def test_thoughts_and_a_signed_text_go_back_as_they_came() -> None:
    message = parse_response(fixture("thoughts.json"))
    thinking, text, extra = message.parts
    assert isinstance(thinking, ThinkingPart)
    assert thinking.text.startswith("**Weighing")
    assert isinstance(text, TextPart)
    assert message.text == "It is 21 °C in Zürich."
    assert isinstance(extra, OpaquePart)
    assert message.usage is not None
    assert message.usage.cache_read_tokens == 64
    assert message.usage.output_tokens == 90  # candidates and thoughts
    _, contents = render_contents([UserMessage("weather?"), message])
    assert contents[1]["parts"] == fixture("thoughts.json")["candidates"][0]["content"]["parts"]


def test_parts_of_kinds_the_adapter_does_not_know_go_back_whole() -> None:
    message = parse_response(fixture("code_execution.json"))
    assert message.text == "The sum is 1275."
    assert [type(p).__name__ for p in message.parts] == ["OpaquePart", "OpaquePart", "TextPart"]
    assert message.usage is not None
    assert message.usage.input_tokens == 35  # the prompt and the code-execution prompt
    _, contents = render_contents([UserMessage("sum?"), message])
    assert (
        contents[1]["parts"] == fixture("code_execution.json")["candidates"][0]["content"]["parts"]
    )


def test_thoughts_go_back_only_to_gemini_and_foreign_calls_carry_the_skip_signature() -> None:
    foreign = AssistantMessage(
        parts=(ThinkingPart(text="secret", signature="sig"), tool_call("add", {"a": 1}, id="c1")),
        api="anthropic-messages",
    )
    _, contents = render_contents([UserMessage("hi"), foreign])
    assert contents[1]["parts"] == [
        {"functionCall": {"name": "add", "args": {"a": 1}}, "thoughtSignature": SKIP_SIGNATURE}
    ]


def test_a_malformed_call_becomes_an_invalid_call_the_model_is_told_about() -> None:
    message = parse_response(fixture("malformed_call.json"))
    [call] = message.tool_calls
    assert call.name == "get_weather"
    assert call.arguments is None
    assert call.invalid_reason is not None
    assert "MALFORMED_FUNCTION_CALL" in call.invalid_reason
    assert message.finish_reason == "malformed_function_call"
    _, contents = render_contents(
        [UserMessage("hi"), message, result(call, "bad arguments", failed=True)]
    )
    assert contents[1]["parts"] == [
        {"functionCall": {"name": "get_weather", "args": {}}, "thoughtSignature": SKIP_SIGNATURE}
    ]
    assert contents[2]["parts"][0]["functionResponse"] == {
        "name": "get_weather",
        "response": {"error": "bad arguments"},
    }


def test_a_blocked_prompt_is_an_error_naming_the_reason() -> None:
    with pytest.raises(ProviderError, match=r"blocked \(SAFETY\)"):
        parse_response(fixture("blocked_prompt.json"))


@pytest.mark.parametrize(
    ("raw", "called", "expected"),
    [
        ("STOP", False, "stop"),
        ("STOP", True, "tool_calls"),
        ("MAX_TOKENS", False, "length"),
        ("SAFETY", False, "content_filter"),
        ("RECITATION", False, "content_filter"),
        ("UNEXPECTED_TOOL_CALL", False, "unexpected_tool_call"),
    ],
)
def test_finish_reasons(raw: str, called: bool, expected: str) -> None:
    from toolwire_gemini._wire import finish_reason

    assert finish_reason(raw, called=called) == expected


# -- streams -----------------------------------------------------------------------------------


def test_a_stream_gives_the_same_turn_as_the_whole_answer_and_one_call_per_part() -> None:
    events: list[Any] = []
    message = streamed("stream_text_then_call.sse", events)
    assert message.text == "Let me look that up."
    [call] = message.tool_calls
    assert call.arguments == {"location": "Zürich", "unit": "celsius"}
    assert message.finish_reason == "tool_calls"
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    deltas = [e for e in events if isinstance(e, ToolCallArgumentsDelta)]
    assert [e.name for e in started] == ["get_weather"]
    assert len(deltas) == 1  # the whole arguments, once
    assert json.loads(deltas[0].delta) == call.arguments
    # The empty text of the last event adds nothing; the call keeps its signature.
    _, contents = render_contents([UserMessage("hi"), message])
    assert contents[1]["parts"] == [
        {"text": "Let me look that up."},
        {
            "functionCall": {
                "name": "get_weather",
                "args": {"location": "Zürich", "unit": "celsius"},
            },
            "thoughtSignature": "CiQB0e2Kc3RyZWFtZWQtY2FsbA==",
        },
    ]


def test_a_signature_at_the_end_of_a_stream_goes_back_on_the_text() -> None:
    message = streamed("stream_text_signed_at_end.sse")
    assert message.text == "It is 21 °C in Zürich."
    _, contents = render_contents([UserMessage("hi"), message])
    assert contents[1]["parts"] == [
        {"text": "It is 21 °C in Zürich.", "thoughtSignature": "CiQB0e2KZW5kLW9mLXN0cmVhbQ=="}
    ]


# -- requests ----------------------------------------------------------------------------------


def request(**fields: Any) -> ModelRequest:
    values: dict[str, Any] = {"run_id": "r", "round": 1, "messages": (UserMessage("hi"),)}
    values.update(fields)
    return ModelRequest(**values)


@pytest.mark.parametrize(
    ("choice", "validated", "expected"),
    [
        ("auto", False, {"mode": "AUTO"}),
        ("auto", True, {"mode": "VALIDATED"}),
        ("none", True, {"mode": "NONE"}),
        ("required", False, {"mode": "ANY"}),
        (
            NamedToolChoice("get_weather"),
            True,
            {"mode": "ANY", "allowedFunctionNames": ["get_weather"]},
        ),
    ],
)
def test_tool_choice_maps_to_function_calling_modes(
    choice: Any, validated: bool, expected: dict[str, Any]
) -> None:
    body = render_request(
        request(functions=(WEATHER,), tool_choice=choice),
        ProviderConfig(model="m"),
        validated=validated,
    )
    assert body["toolConfig"] == {"functionCallingConfig": expected}


def test_a_named_choice_must_be_offered() -> None:
    with pytest.raises(ProviderError, match="'other', which is not offered"):
        render_request(
            request(functions=(WEATHER,), tool_choice=NamedToolChoice("other")),
            ProviderConfig(model="m"),
        )


def test_options_reach_the_body_but_never_the_tool_config() -> None:
    config = ProviderConfig(
        model="m",
        max_tokens=256,
        temperature=0.2,
        options={
            "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
            "cachedContent": "c/1",
        },
        provider_tools=({"googleSearch": {}},),
    )
    body = render_request(request(functions=(WEATHER,)), config)
    assert body["generationConfig"] == {
        "maxOutputTokens": 256,
        "temperature": 0.2,
        "thinkingConfig": {"includeThoughts": True},
    }
    assert body["cachedContent"] == "c/1"
    assert body["tools"][1] == {"googleSearch": {}}
    assert [d["name"] for d in body["tools"][0]["functionDeclarations"]] == ["get_weather"]
    owned = ProviderConfig(model="m", options={"toolConfig": {}})
    with pytest.raises(ProviderError, match="toolConfig, which the loop decides"):
        render_request(request(functions=(WEATHER,)), owned)


def test_a_wrong_setting_names_key_value_and_choices() -> None:
    with pytest.raises(ConfigError) as caught:
        Host.load(
            config_from_dict(
                {"plugins": {"enable": ["gemini"]}, "providers": {"gemini": {"schemas": "xml"}}}
            )
        )
    assert "$.providers.gemini.schemas = 'xml'" in str(caught.value)
    assert "'auto', 'openapi', 'json-schema'" in str(caught.value)


async def test_the_settings_reach_the_adapter_the_host_creates() -> None:
    config = config_from_dict(
        {
            "plugins": {"enable": ["gemini"]},
            "provider": {"adapter": "gemini", "model": "m"},
            "providers": {"gemini": {"result_role": "function", "validated": True}},
            "ledger": {"enabled": False},
        }
    )
    async with Host.load(config) as host:
        adapter = getattr(host.create_adapter(), "inner", None)  # ready for a prompted fallback
    assert isinstance(adapter, GeminiAdapter)
    assert adapter.settings == GeminiSettings(result_role="function", validated=True)


# -- through the host --------------------------------------------------------------------------


@toolwire.tool
def weather(location: str) -> str:
    """The weather at a place.

    Args:
        location: The place.
    """
    return f"sunny in {location}"


async def run(server: FakeGeminiServer, monkeypatch: pytest.MonkeyPatch, **provider: Any) -> Any:
    monkeypatch.setenv("GEMINI_TEST_KEY", KEY)
    fields: dict[str, Any] = {
        "adapter": "gemini",
        "base_url": server.base_url,
        "model": "gemini-2.5-flash",
        "api_key_env": "GEMINI_TEST_KEY",
        "max_retries": 2,
    }
    fields.update(provider)
    host = Host.load(
        Config(provider=ProviderConfig(**fields), ledger=LedgerConfig(enabled=False)),
        plugins=[toolwire_gemini._plugin],
    )
    host.add_tool(weather)
    try:
        return await host.run("What is the weather in Paris?", stream=fields.get("stream", False))
    finally:
        await host.aclose()


async def test_the_key_goes_in_the_header_and_the_url_names_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with FakeGeminiServer(
        [tool_call("weather", {"location": "Paris"}), "Sunny."], api_key=KEY
    ) as server:
        outcome = await run(server, monkeypatch, stream=True)
    assert outcome.stop_reason == "answered", outcome.detail
    first = server.requests[0]
    assert first.headers["x-goog-api-key"] == KEY
    assert first.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert first.query == "alt=sse"
    assert KEY not in first.path + first.query


async def test_a_429_waits_as_its_retry_info_says(monkeypatch: pytest.MonkeyPatch) -> None:
    script = [ErrorReply(status=429, body=fixture("error_429.json")), "Sunny."]
    async with FakeGeminiServer(script) as server:
        outcome = await run(server, monkeypatch)
    assert outcome.stop_reason == "answered", outcome.detail
    [retry] = [e for e in outcome.events if isinstance(e, ProviderRetry)]
    assert (retry.status, retry.delay) == (429, 0.25)
    assert "exceeded your current quota" in retry.reason


async def test_a_503_is_sent_again_and_a_400_ends_the_run_naming_gemini(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = [
        ErrorReply(status=503, body=fixture("error_503.json")),
        ErrorReply(status=400, body=fixture("error_400.json")),
    ]
    async with FakeGeminiServer(script) as server:
        outcome = await run(server, monkeypatch)
    assert outcome.stop_reason == "error"
    assert isinstance(outcome.error, ProviderError)
    assert outcome.error.status == 400
    assert "gemini: HTTP 400" in str(outcome.error)
    assert "number of function response parts" in str(outcome.error)
    assert len(server.requests) == 2


async def test_a_wrong_key_is_refused_without_showing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    async with FakeGeminiServer(["never"], api_key="the-right-key") as server:
        outcome = await run(server, monkeypatch)
    assert outcome.stop_reason == "error"
    assert outcome.error.status == 400
    assert KEY not in str(outcome.error)


async def test_googles_wrong_key_answer_is_not_sent_again(monkeypatch: pytest.MonkeyPatch) -> None:
    async with FakeGeminiServer(
        [ErrorReply(status=400, body=fixture("error_400_key.json"))]
    ) as server:
        outcome = await run(server, monkeypatch)
    assert outcome.stop_reason == "error"
    assert "API key not valid" in str(outcome.error)
    assert len(server.requests) == 1


async def test_a_model_without_function_calling_falls_back_to_prompted_tools(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    refusal = ErrorReply(
        status=400, message="Function calling is not enabled for models/gemma-3-27b-it"
    )
    async with FakeGeminiServer([refusal, "Sunny, I think."]) as server:
        outcome = await run(server, monkeypatch)
    assert outcome.stop_reason == "answered", outcome.detail
    assert "tools" in server.bodies[0]
    assert "tools" not in server.bodies[1]  # the tools are in the system instruction now
    assert "weather" in json.dumps(server.bodies[1]["systemInstruction"])


async def test_a_malformed_call_is_answered_and_the_model_tries_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = [
        tool_call("weather", raw_arguments="location='Paris"),
        tool_call("weather", {"location": "Paris"}),
        "Sunny.",
    ]
    async with FakeGeminiServer(script) as server:
        outcome = await run(server, monkeypatch)
    assert outcome.stop_reason == "answered", outcome.detail
    first, second = outcome.tool_calls
    assert first.call.arguments is None
    assert first.result is not None
    assert not first.result.is_ok
    assert second.result is not None
    assert second.result.model_text() == "sunny in Paris"
    # The server checks every model turn with calls is signed: the written call carries the
    # documented skip signature, the real one its own.
    contents = server.bodies[2]["contents"]
    signed = [p["thoughtSignature"] for c in contents for p in c["parts"] if "functionCall" in p]
    assert signed == [SKIP_SIGNATURE, signature(2)]


async def test_a_lost_signature_is_refused_by_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    server = FakeGeminiServer()
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {}}}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "weather", "response": {"output": "x"}}}],
            },
        ]
    }
    from toolwire.testing import RecordedRequest

    refused = server.check_request(
        RecordedRequest(
            method="POST",
            path="/v1beta/models/m:generateContent",
            headers={},
            body=body,
            raw=b"",
        )
    )
    assert refused is not None
    assert "missing a thought_signature" in refused.message


def test_the_url_takes_a_versioned_base_url_and_model_paths() -> None:
    adapter = GeminiAdapter(ProviderConfig(model="models/gemini-2.5-pro"))
    assert adapter.url(stream=False) == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent"
    )
    assert adapter.key_env == "GEMINI_API_KEY"
    proxy = GeminiAdapter.configured(GeminiSettings(api_version="v1"))(
        ProviderConfig(model="tunedModels/mine", base_url="http://127.0.0.1:9/gemini/v1beta/")
    )
    assert proxy.url(stream=True) == (
        "http://127.0.0.1:9/gemini/v1beta/tunedModels/mine:streamGenerateContent?alt=sse"
    )
    assert proxy.key_env is None
    assert proxy.url(stream=False) == (
        "http://127.0.0.1:9/gemini/v1beta/tunedModels/mine:generateContent"
    )
    assert proxy.url(stream=True) is proxy.url(stream=True)  # made once
    unset = GeminiAdapter(ProviderConfig())
    for _ in range(2):  # every request is refused, not only the first
        with pytest.raises(ProviderError, match="no model is configured"):
            unset.url(stream=False)


# -- hostile answers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"candidates": {"content": {}}}, "candidates is a JSON object, not a list"),
        ({"candidates": [{"content": {"parts": "text"}}]}, "candidates[0].content.parts"),
        ({"candidates": [{"content": {"parts": [7]}}]}, "candidates[0].content.parts[0]"),
        ({"candidates": [{"content": []}]}, "candidates[0].content is not an object"),
    ],
)
def test_an_answer_of_the_wrong_shape_is_an_error_naming_the_field(
    payload: dict[str, Any], field: str
) -> None:
    with pytest.raises(ProviderError) as caught:
        parse_response(payload)
    assert str(caught.value).startswith("gemini: ")
    assert field in str(caught.value)


def test_a_garbage_event_ends_the_stream_with_an_error_naming_gemini() -> None:
    reader = GenerateStream(REQUEST, lambda event: None)
    with pytest.raises(ProviderError, match=r"^gemini: a streamed event is not JSON"):
        reader.feed("<html>502 Bad Gateway</html>")


def test_an_error_event_in_a_stream_says_whether_to_try_again() -> None:
    reader = GenerateStream(REQUEST, lambda event: None)
    with pytest.raises(ProviderError) as caught:
        reader.feed(json.dumps(fixture("error_503.json")))
    assert caught.value.retryable
    assert caught.value.status == 503
    assert "model is overloaded" in str(caught.value)


def test_arguments_that_are_no_object_make_an_invalid_call() -> None:
    payload = {
        "candidates": [
            {"content": {"parts": [{"functionCall": {"name": "get_weather", "args": [1, 2]}}]}}
        ]
    }
    [call] = parse_response(payload).tool_calls
    assert call.arguments is None
    assert call.invalid_reason is not None
    assert "not an object" in call.invalid_reason


def test_a_call_without_arguments_has_empty_ones() -> None:
    payload = {"candidates": [{"content": {"parts": [{"functionCall": {"name": "now"}}]}}]}
    [call] = parse_response(payload).tool_calls
    assert call.arguments == {}
    assert call.is_valid
