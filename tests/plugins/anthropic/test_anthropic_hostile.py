"""The Messages adapter against a hostile host: garbage events, wrong shapes, keys echoed back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from toolwire.adapters import ModelRequest, ProviderError
from toolwire.config import ProviderConfig
from toolwire.messages import UserMessage
from toolwire_anthropic import AnthropicMessagesAdapter

KEY = "sk-ant-hostile-0123456789"


@pytest.fixture
async def host(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[dict[str, Any]]:
    """A loopback host answering with whatever the test puts under ``answer``."""
    monkeypatch.setenv("HOSTILE_KEY", KEY)
    state: dict[str, Any] = {}

    async def answer(request: web.Request) -> web.StreamResponse:
        await request.read()
        state["key_sent"] = request.headers.get("x-api-key")
        kind, body = state["answer"]
        if kind == "json":
            return web.Response(text=body, content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(body.encode())
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/v1/messages", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    state["base_url"] = f"http://127.0.0.1:{runner.addresses[0][1]}"
    yield state
    await runner.cleanup()


async def _complete(host: dict[str, Any], stream: bool) -> Any:
    config = ProviderConfig(
        base_url=host["base_url"], model="m", max_retries=0, api_key_env="HOSTILE_KEY"
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
    host: dict[str, Any], stream: bool, body: str
) -> None:
    host["answer"] = ("sse" if stream else "json", body)
    with pytest.raises(ProviderError) as caught:
        await _complete(host, stream)
    assert host["key_sent"] == KEY
    assert "invalid x-api-key [redacted]" in str(caught.value)
    assert KEY not in str(caught.value)
    assert KEY not in str(caught.value.provider_message)


async def test_a_garbage_event_is_refused_clearly(host: dict[str, Any]) -> None:
    host["answer"] = ("sse", 'event: message_start\ndata: {"type": "message_start"\n\n')
    with pytest.raises(ProviderError, match="a streamed event is not JSON"):
        await _complete(host, stream=True)


async def test_content_of_the_wrong_shape_is_refused_clearly(host: dict[str, Any]) -> None:
    host["answer"] = ("json", '{"type": "message", "role": "assistant", "content": "hello"}')
    with pytest.raises(ProviderError, match="content is a JSON string, not a list"):
        await _complete(host, stream=False)


async def test_repeated_tool_use_ids_become_unique_and_the_wire_keeps_the_providers(
    host: dict[str, Any],
) -> None:
    from toolwire import ToolResult
    from toolwire.messages import ToolCall, ToolResultMessage
    from toolwire_anthropic import render_messages

    block = '{"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}'
    host["answer"] = (
        "json",
        f'{{"type": "message", "role": "assistant", "content": [{block}, {block}], '
        '"stop_reason": "tool_use"}',
    )
    message = await _complete(host, stream=False)
    calls = [part for part in message.parts if isinstance(part, ToolCall)]
    assert calls[0].id == "toolu_1"
    assert calls[1].id != "toolu_1"
    results = [
        ToolResultMessage(call_id=call.id, name="add", result=ToolResult.ok("3")) for call in calls
    ]
    _, wire = render_messages([UserMessage("hi"), message, *results])
    assert [b["id"] for b in wire[1]["content"]] == ["toolu_1", "toolu_1"]
    assert [b["tool_use_id"] for b in wire[2]["content"]] == ["toolu_1", "toolu_1"]
