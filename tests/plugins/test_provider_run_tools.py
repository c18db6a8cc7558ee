"""Tools the provider runs itself (web search, code execution) reported like local ones:
the call with its arguments, progress while it runs, and what it came to."""

from __future__ import annotations

import json
from typing import Any

import pytest
from canned_provider import CannedProvider

from toolwire.adapters import ModelRequest
from toolwire.config import ProviderConfig
from toolwire.events import (
    Event,
    ToolCallCompleted,
    ToolCallStarted,
    ToolCompleted,
    ToolFailed,
    ToolProgress,
)
from toolwire.messages import UserMessage
from toolwire_anthropic import AnthropicMessagesAdapter
from toolwire_openai import OpenAIResponsesAdapter

SEARCH_DONE = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {
        "type": "search",
        "query": "lyon weather",
        "sources": [{"type": "url", "url": "https://weather.example/lyon"}],
    },
}
ANSWER = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}],
}
SERVER_USE = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [
        {"type": "web_search_result", "url": "https://weather.example/nice", "title": "Nice"}
    ],
}
SEARCH_ERROR = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": {"type": "web_search_tool_result_error", "error_code": "too_many_requests"},
}


def sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def responses_stream() -> str:
    added = {**SEARCH_DONE, "status": "in_progress", "action": None}
    phases = ("in_progress", "searching", "completed")
    return sse(
        {"type": "response.created", "response": {"id": "resp_1", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        *(
            {"type": f"response.web_search_call.{p}", "output_index": 0, "item_id": "ws_1"}
            for p in phases
        ),
        {"type": "response.output_item.done", "output_index": 0, "item": SEARCH_DONE},
        {"type": "response.output_item.added", "output_index": 1, "item": ANSWER},
        {"type": "response.output_item.done", "output_index": 1, "item": ANSWER},
        {
            "type": "response.completed",
            "response": {"id": "resp_1", "status": "completed", "output": [SEARCH_DONE, ANSWER]},
        },
    )


def messages_stream(result: dict[str, Any]) -> str:
    text = {"type": "text", "text": ""}
    return sse(
        {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 3}}},
        {"type": "content_block_start", "index": 0, "content_block": SERVER_USE},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"query": "nice weather"}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": result},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": text},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Ok"}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    )


async def complete(adapter: Any, stream: bool) -> list[Event]:
    events: list[Event] = []
    request = ModelRequest(
        run_id="run", round=1, messages=(UserMessage("weather?"),), stream=stream
    )
    try:
        await adapter.complete(request, events.append)
    finally:
        await adapter.aclose()
    return events


def of(events: list[Event], kind: type[Event]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


@pytest.mark.parametrize("stream", [True, False])
async def test_a_responses_web_search_reports_progress_and_its_sources(
    canned_provider: CannedProvider, stream: bool
) -> None:
    canned_provider.answer(
        "/v1/responses",
        sse=responses_stream(),
        json={"id": "resp_1", "status": "completed", "output": [SEARCH_DONE, ANSWER]},
    )
    config = ProviderConfig(base_url=canned_provider.url + "/v1", model="m", max_retries=0)
    events = await complete(OpenAIResponsesAdapter(config), stream)
    [call] = [e.call for e in of(events, ToolCallCompleted)]
    assert call.provider_executed
    assert call.name == "web_search"
    assert call.arguments["action"]["query"] == "lyon weather"
    if stream:
        [started] = of(events, ToolCallStarted)
        assert started.call_id == call.id
        assert [p.message for p in of(events, ToolProgress)] == ["started", "searching", "done"]
    [result] = of(events, ToolCompleted)
    assert result.call_id == call.id
    assert [s.url for s in result.result.sources] == ["https://weather.example/lyon"]
    assert "searched: lyon weather" in (result.result.content or "")
    assert events.index(result) > events.index(of(events, ToolCallCompleted)[0])


@pytest.mark.parametrize("stream", [True, False])
async def test_an_anthropic_server_tool_reports_what_its_result_block_says(
    canned_provider: CannedProvider, stream: bool
) -> None:
    text = {"type": "text", "text": "Ok"}
    whole = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{**SERVER_USE, "input": {"query": "nice weather"}}, SEARCH_RESULT, text],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    canned_provider.answer("/v1/messages", sse=messages_stream(SEARCH_RESULT), json=whole)
    config = ProviderConfig(base_url=canned_provider.url, model="claude-test", max_retries=0)
    events = await complete(AnthropicMessagesAdapter(config), stream)
    [call] = [e.call for e in of(events, ToolCallCompleted)]
    assert call.provider_executed
    assert call.arguments == {"query": "nice weather"}
    if stream:
        assert [p.message for p in of(events, ToolProgress)] == ["running at the provider"]
    [result] = of(events, ToolCompleted)
    assert (result.call_id, result.name) == (call.id, "web_search")
    assert [(s.url, s.title) for s in result.result.sources] == [
        ("https://weather.example/nice", "Nice")
    ]


async def test_an_anthropic_server_tool_error_is_a_failure(canned_provider: CannedProvider) -> None:
    canned_provider.answer("/v1/messages", sse=messages_stream(SEARCH_ERROR), json={})
    config = ProviderConfig(base_url=canned_provider.url, model="claude-test", max_retries=0)
    events = await complete(AnthropicMessagesAdapter(config), True)
    assert of(events, ToolCompleted) == []
    [failed] = of(events, ToolFailed)
    assert failed.result.content == "the provider's web_search failed: too_many_requests"


async def test_a_failed_responses_tool_is_a_failure(canned_provider: CannedProvider) -> None:
    failed_item = {**SEARCH_DONE, "status": "failed"}
    canned_provider.answer(
        "/v1/responses",
        sse="",
        json={"id": "resp_1", "status": "completed", "output": [failed_item, ANSWER]},
    )
    config = ProviderConfig(base_url=canned_provider.url + "/v1", model="m", max_retries=0)
    events = await complete(OpenAIResponsesAdapter(config), False)
    [failed] = of(events, ToolFailed)
    assert "web_search failed: failed" in (failed.result.content or "")
