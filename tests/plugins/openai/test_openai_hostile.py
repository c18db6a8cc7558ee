"""The OpenAI adapters against a hostile host: garbage events, wrong shapes, keys echoed back."""

from __future__ import annotations

from typing import Any

import pytest
from canned_provider import CannedProvider

from toolwire.adapters import ModelRequest, ProviderError
from toolwire.config import ProviderConfig
from toolwire.messages import UserMessage
from toolwire_openai import OpenAIChatAdapter, OpenAIResponsesAdapter

KEY = "sk-hostile-openai-0123456789"


def _request(stream: bool) -> ModelRequest:
    return ModelRequest(run_id="r", round=1, messages=(UserMessage("hi"),), stream=stream)


async def _complete(adapter_type: Any, canned_provider: CannedProvider, stream: bool) -> Any:
    config = ProviderConfig(
        base_url=canned_provider.url + "/v1", model="m", max_retries=0, api_key_env="HOSTILE_KEY"
    )
    adapter = adapter_type(config)
    try:
        return await adapter.complete(_request(stream), lambda event: None)
    finally:
        await adapter.aclose()


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOSTILE_KEY", KEY)


@pytest.mark.parametrize(
    ("adapter", "body"),
    [
        (OpenAIChatAdapter, 'data: {"choices": []}\n\ndata: <html>502 Bad Gateway</html>\n\n'),
        (OpenAIResponsesAdapter, "data: {not json\n\n"),
        (OpenAIChatAdapter, "data: [1, 2]\n\n"),
    ],
)
async def test_a_garbage_event_is_refused_clearly(
    canned_provider: CannedProvider, adapter: Any, body: str
) -> None:
    canned_provider.answer(sse=body)
    with pytest.raises(ProviderError, match=r"a streamed event is (not JSON|a JSON array)"):
        await _complete(adapter, canned_provider, stream=True)


@pytest.mark.parametrize(
    ("stream", "body", "field"),
    [
        (
            False,
            '{"choices": [{"message": {"role": "assistant", "tool_calls": "add(1, 2)"}}]}',
            "message.tool_calls is a JSON string, not a list",
        ),
        (
            False,
            '{"choices": [{"message": {"role": "assistant", "tool_calls": [7]}}]}',
            r"message.tool_calls\[0\] is a JSON integer, not an object",
        ),
        (
            True,
            'data: {"choices": [{"index": 0, "delta": {"tool_calls": {"id": "x"}}}]}\n\n',
            "delta.tool_calls is a JSON object, not a list",
        ),
        (True, 'data: {"choices": "none"}\n\n', "choices is a JSON string, not a list"),
    ],
)
async def test_tool_calls_of_the_wrong_shape_are_refused_clearly(
    canned_provider: CannedProvider, stream: bool, body: str, field: str
) -> None:
    canned_provider.answer(sse=body) if stream else canned_provider.answer(json=body)
    with pytest.raises(ProviderError, match=field):
        await _complete(OpenAIChatAdapter, canned_provider, stream=stream)


async def test_responses_output_of_the_wrong_shape_is_refused_clearly(
    canned_provider: CannedProvider,
) -> None:
    canned_provider.answer(json='{"id": "r", "status": "completed", "output": {"type": "x"}}')
    with pytest.raises(ProviderError, match="output is a JSON object, not a list"):
        await _complete(OpenAIResponsesAdapter, canned_provider, stream=False)


@pytest.mark.parametrize(
    ("adapter", "body"),
    [
        (OpenAIChatAdapter, f'data: {{"error": {{"message": "key {KEY} revoked"}}}}\n\n'),
        (OpenAIResponsesAdapter, f'data: {{"type": "error", "message": "key {KEY} revoked"}}\n\n'),
        (
            OpenAIResponsesAdapter,
            'data: {"type": "response.failed", "response": {"status": "failed", '
            f'"error": {{"code": "invalid_key", "message": "key {KEY} revoked"}}}}}}\n\n',
        ),
    ],
    ids=["chat-stream-error", "responses-error", "responses-failed"],
)
async def test_a_key_in_a_streamed_error_never_reaches_the_error(
    canned_provider: CannedProvider, adapter: Any, body: str
) -> None:
    canned_provider.answer(sse=body)
    with pytest.raises(ProviderError) as caught:
        await _complete(adapter, canned_provider, stream=True)
    assert "revoked" in str(caught.value)
    assert KEY not in str(caught.value)
    assert KEY not in repr(caught.value.provider_message)


_DUPLICATE_CALLS = (
    '{"choices": [{"message": {"role": "assistant", "tool_calls": ['
    '{"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{}"}},'
    '{"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{}"}},'
    '{"id": "", "type": "function", "function": {"name": "add", "arguments": "{}"}}'
    ']}, "finish_reason": "tool_calls"}]}'
)
_DUPLICATE_STREAM = (
    'data: {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", '
    '"function": {"name": "add", "arguments": "{}"}}]}}]}\n\n'
    'data: {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_1", '
    '"function": {"name": "add", "arguments": "{}"}}]}}]}\n\n'
    'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}\n\n'
    "data: [DONE]\n\n"
)


@pytest.mark.parametrize("stream", [False, True])
async def test_repeated_call_ids_become_unique_and_the_wire_keeps_the_providers(
    canned_provider: CannedProvider, stream: bool
) -> None:
    from toolwire import ToolResult
    from toolwire.messages import ToolCall, ToolResultMessage
    from toolwire_openai._chat import render_chat_messages

    canned_provider.answer(sse=_DUPLICATE_STREAM, json=_DUPLICATE_CALLS)
    message = await _complete(OpenAIChatAdapter, canned_provider, stream=stream)
    calls = [part for part in message.parts if isinstance(part, ToolCall)]
    ids = [call.id for call in calls]
    assert len(ids) == (2 if stream else 3)
    assert len(set(ids)) == len(ids)
    assert all(ids)
    assert ids[0] == "call_1"
    # The next request names each call as the provider did.
    results = [
        ToolResultMessage(call_id=call.id, name="add", result=ToolResult.ok("3")) for call in calls
    ]
    wire = render_chat_messages([UserMessage("hi"), message, *results])
    assert [item["id"] for item in wire[1]["tool_calls"]][:2] == ["call_1", "call_1"]
    assert [item["tool_call_id"] for item in wire[2:]][:2] == ["call_1", "call_1"]
