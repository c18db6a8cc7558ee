"""The Messages adapter against a hostile host: garbage events, wrong shapes, keys echoed back."""

from __future__ import annotations

from typing import Any

import pytest
from canned_provider import CannedProvider

from toolwire.adapters import ModelRequest, ProviderError
from toolwire.config import ProviderConfig
from toolwire.messages import UserMessage
from toolwire_anthropic import AnthropicMessagesAdapter

KEY = "sk-ant-hostile-0123456789"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOSTILE_KEY", KEY)


async def _complete(canned_provider: CannedProvider, stream: bool) -> Any:
    config = ProviderConfig(
        base_url=canned_provider.url, model="m", max_retries=0, api_key_env="HOSTILE_KEY"
    )
    adapter = AnthropicMessagesAdapter(config)
    request = ModelRequest(run_id="r", round=1, messages=(UserMessage("hi"),), stream=stream)
    try:
        return await adapter.complete(request, lambda event: None)
    finally:
        await adapter.aclose()


@pytest.mark.parametrize(
    ("stream", "body"),
    [
        (
            True,
            "event: error\ndata: "
            f'{{"type": "error", "error": {{"type": "authentication_error", '
            f'"message": "invalid x-api-key {KEY}"}}}}\n\n',
        ),
        (
            False,
            f'{{"type": "error", "error": {{"type": "authentication_error", '
            f'"message": "invalid x-api-key {KEY}"}}}}',
        ),
    ],
    ids=["stream-error-event", "200-error-body"],
)
async def test_a_key_echoed_in_an_error_never_reaches_the_error(
    canned_provider: CannedProvider, stream: bool, body: str
) -> None:
    canned_provider.answer(sse=body) if stream else canned_provider.answer(json=body)
    with pytest.raises(ProviderError) as caught:
        await _complete(canned_provider, stream)
    assert canned_provider.headers[-1]["x-api-key"] == KEY
    assert "invalid x-api-key [redacted]" in str(caught.value)
    assert KEY not in str(caught.value)
    assert KEY not in str(caught.value.provider_message)


async def test_a_garbage_event_is_refused_clearly(canned_provider: CannedProvider) -> None:
    canned_provider.answer(sse='event: message_start\ndata: {"type": "message_start"\n\n')
    with pytest.raises(ProviderError, match="a streamed event is not JSON"):
        await _complete(canned_provider, stream=True)


async def test_content_of_the_wrong_shape_is_refused_clearly(
    canned_provider: CannedProvider,
) -> None:
    canned_provider.answer(json='{"type": "message", "role": "assistant", "content": "hello"}')
    with pytest.raises(ProviderError, match="content is a JSON string, not a list"):
        await _complete(canned_provider, stream=False)


async def test_repeated_tool_use_ids_become_unique_and_the_wire_keeps_the_providers(
    canned_provider: CannedProvider,
) -> None:
    from toolwire import ToolResult
    from toolwire.messages import ToolCall, ToolResultMessage
    from toolwire_anthropic import render_messages

    block = '{"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}'
    canned_provider.answer(
        json=f'{{"type": "message", "role": "assistant", "content": [{block}, {block}], '
        '"stop_reason": "tool_use"}'
    )
    message = await _complete(canned_provider, stream=False)
    calls = [part for part in message.parts if isinstance(part, ToolCall)]
    assert calls[0].id == "toolu_1"
    assert calls[1].id != "toolu_1"
    results = [
        ToolResultMessage(call_id=call.id, name="add", result=ToolResult.ok("3")) for call in calls
    ]
    _, wire = render_messages([UserMessage("hi"), message, *results])
    assert [b["id"] for b in wire[1]["content"]] == ["toolu_1", "toolu_1"]
    assert [b["tool_use_id"] for b in wire[2]["content"]] == ["toolu_1", "toolu_1"]
