"""The OpenAI adapters over HTTP against the loopback fake servers: paths, keys, hosts' quirks."""

from __future__ import annotations

from typing import Any

import pytest

import toolwire
import toolwire_openai._plugin
from toolwire import Config, FunctionSpec, Host
from toolwire.adapters import ModelRequest, ProviderError, ToolsNotSupportedError
from toolwire.config import LedgerConfig, ProviderConfig
from toolwire.events import Event
from toolwire.messages import UserMessage
from toolwire.testing import (
    ErrorReply,
    FakeOpenAIChatServer,
    FakeOpenAIResponsesServer,
    Reply,
    tool_call,
)
from toolwire_openai import OpenAIChatAdapter, OpenAIResponsesAdapter

SPEC = FunctionSpec(
    name="add",
    description="Add.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


def request(stream: bool = False, **fields: Any) -> ModelRequest:
    values: dict[str, Any] = {
        "run_id": "http",
        "round": 1,
        "messages": (UserMessage("add"),),
        "functions": (SPEC,),
        "stream": stream,
    }
    values.update(fields)
    return ModelRequest(**values)


def config(server: Any, **fields: Any) -> ProviderConfig:
    values: dict[str, Any] = {
        "adapter": "openai-chat",
        "base_url": server.base_url,
        "model": "m",
        "max_retries": 1,
    }
    values.update(fields)
    return ProviderConfig(**values)


@pytest.mark.parametrize("stream", [False, True])
async def test_chat_posts_to_chat_completions_with_the_key(
    stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_TEST_KEY", "sk-http-test")
    async with FakeOpenAIChatServer(["hello"], api_key="sk-http-test") as server:
        adapter = OpenAIChatAdapter(config(server, api_key_env="HTTP_TEST_KEY"))
        try:
            message = await adapter.complete(request(stream), lambda event: None)
        finally:
            await adapter.aclose()
    assert message.text == "hello"
    (recorded,) = server.requests
    assert recorded.path == "/v1/chat/completions"
    assert recorded.headers["authorization"] == "Bearer sk-http-test"
    assert recorded.headers["accept"] == ("text/event-stream" if stream else "application/json")


@pytest.mark.parametrize("stream", [False, True])
async def test_chat_hosts_that_omit_call_ids_get_generated_ones(stream: bool) -> None:
    turn = [tool_call("add", {"a": 1, "b": 2}), tool_call("add", {"a": 3, "b": 4})]
    async with FakeOpenAIChatServer([turn], omit_call_ids=True) as server:
        adapter = OpenAIChatAdapter(config(server))
        try:
            message = await adapter.complete(request(stream), lambda event: None)
        finally:
            await adapter.aclose()
    ids = [call.id for call in message.tool_calls]
    assert all(i.startswith("call_") for i in ids)
    assert len(set(ids)) == 2


@pytest.mark.parametrize("stream", [False, True])
async def test_responses_calls_without_call_id_are_an_error(stream: bool) -> None:
    async with FakeOpenAIResponsesServer([tool_call("add", {})], omit_call_ids=True) as server:
        adapter = OpenAIResponsesAdapter(config(server, adapter="openai-responses"))
        try:
            with pytest.raises(ProviderError, match="no call_id"):
                await adapter.complete(request(stream), lambda event: None)
        finally:
            await adapter.aclose()
    assert server.requests[0].path == "/v1/responses"


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "registry.ollama.ai/library/gemma:2b does not support tools"),
        (500, "tools param requires --jinja flag"),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
async def test_hosts_refusing_tools_raise_tools_not_supported(
    status: int, message: str, stream: bool
) -> None:
    async with FakeOpenAIChatServer([ErrorReply(status=status, message=message)]) as server:
        adapter = OpenAIChatAdapter(config(server, max_retries=3))
        try:
            with pytest.raises(ToolsNotSupportedError, match="does not accept native tools"):
                await adapter.complete(request(stream), lambda event: None)
        finally:
            await adapter.aclose()
    assert len(server.requests) == 1, "a refusal of tools is not sent again"


async def test_without_tools_a_refusal_message_is_an_ordinary_error() -> None:
    reply = ErrorReply(status=400, message="x does not support tools")
    async with FakeOpenAIChatServer([reply]) as server:
        adapter = OpenAIChatAdapter(config(server))
        try:
            with pytest.raises(ProviderError) as info:
                await adapter.complete(request(functions=()), lambda event: None)
        finally:
            await adapter.aclose()
    assert not isinstance(info.value, ToolsNotSupportedError)


async def test_a_host_without_tools_falls_back_to_prompted_calls() -> None:
    @toolwire.tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first.
            b: The second.
        """
        return a + b

    script = [
        ErrorReply(
            status=400, message="registry.ollama.ai/library/gemma:2b does not support tools"
        ),
        '<tool_call>{"name": "add", "arguments": {"a": 20, "b": 22}}</tool_call>',
        "The answer is 42.",
    ]
    async with FakeOpenAIChatServer(script) as server:
        cfg = Config(provider=config(server), ledger=LedgerConfig(enabled=False))
        host = Host.load(cfg, plugins=[toolwire_openai._plugin])
        host.add_tool(add)
        try:
            run = await host.run("What is 20 + 22?")
        finally:
            await host.aclose()
    assert run.stop_reason == "answered", run.detail
    assert run.text == "The answer is 42."
    assert [r.result.model_text() for r in run.tool_calls if r.result] == ["42"]
    assert "tools" in server.bodies[0]
    assert "tools" not in server.bodies[1]


async def test_a_slow_host_times_out_with_a_clear_error() -> None:
    events: list[Event] = []
    async with FakeOpenAIChatServer([Reply(turn="late", delay=0.5), "in time"]) as server:
        adapter = OpenAIChatAdapter(config(server, read_timeout=0.1, max_retries=1))
        try:
            message = await adapter.complete(request(), events.append)
        finally:
            await adapter.aclose()
    assert message.text == "in time"
    assert [e.kind for e in events] == ["provider_retry"]
