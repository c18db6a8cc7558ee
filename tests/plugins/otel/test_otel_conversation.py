"""`gen_ai.input.messages` rebuilt from a run's events, and `gen_ai.response.id` from the
provider's answer, on the chat spans (the SDK's in-memory exporter)."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Annotated, Any

import pytest

pytest.importorskip("toolwire_openai")

from opentelemetry.sdk.trace import ReadableSpan

import toolwire
import toolwire_openai._plugin
from toolwire import Config, Host
from toolwire.config import LedgerConfig, LoopConfig, ProviderConfig
from toolwire.loop import Approve
from toolwire.testing import FakeOpenAIChatServer, tool_call

API_KEY = "sk-otel-conversation-key-4242"
SECRET = "tr0ub4dor-and-3"


@toolwire.tool
def add(a: Annotated[int, "First."], b: Annotated[int, "Second."]) -> int:
    """Add two numbers."""
    return a + b


@toolwire.tool
def explode() -> str:
    """Always fails."""
    raise ValueError("the fuse was lit")


@toolwire.tool(sensitive_arguments=["password"])
def login(user: Annotated[str, "Who."], password: Annotated[str, "Their password."]) -> str:
    """Log a user in."""
    return f"welcome {user}"


@toolwire.tool(requires_approval=True)
def delete_file(path: Annotated[str, "The file to delete."]) -> str:
    """Delete a file."""
    return f"deleted {path}"


def _host(server: Any, telemetry: Any, tmp_path: Path, *, capture: bool, stream: bool) -> Host:
    tools = [add, explode, login, delete_file]
    plugin = types.SimpleNamespace(
        __name__="conversation_tools", toolwire_tools=toolwire.hookimpl(lambda settings: tools)
    )
    config = Config(
        provider=ProviderConfig(
            adapter="openai-chat",
            base_url=server.base_url,
            model="gpt-test",
            api_key_env="OTEL_CONVERSATION_KEY",
            stream=stream,
            max_retries=1,
        ),
        loop=LoopConfig(concurrency=4),
        ledger=LedgerConfig(enabled=True, path=str(tmp_path / "ledger.sqlite3")),
    )
    return Host.load(
        config, plugins=[toolwire_openai._plugin, plugin, telemetry.plugin(capture=capture)]
    )


def _chats(telemetry: Any) -> list[ReadableSpan]:
    spans = telemetry.spans.get_finished_spans()
    return sorted((s for s in spans if s.name == "chat gpt-test"), key=lambda s: s.start_time or 0)


def _input(span: ReadableSpan) -> list[dict[str, Any]]:
    value = span.attributes["gen_ai.input.messages"] if span.attributes else None
    assert isinstance(value, str)
    messages: list[dict[str, Any]] = json.loads(value)
    return messages


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_CONVERSATION_KEY", API_KEY)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_each_request_holds_the_conversation_so_far_redacted(
    telemetry: Any, tmp_path: Path, stream: bool
) -> None:
    script = [
        [
            tool_call("login", {"user": "ada", "password": SECRET}),
            tool_call("explode"),
            tool_call("add", {"a": 2, "b": 3}),
        ],
        f"Done; the key is {API_KEY}.",
    ]
    async with FakeOpenAIChatServer(script, api_key=API_KEY) as server:
        host = _host(server, telemetry, tmp_path, capture=True, stream=stream)
        run = await host.run("Log ada in, then add 2 and 3.")
        await host.aclose()
    assert run.stop_reason == "answered"
    first, second = _chats(telemetry)
    assert _input(first) == [
        {"role": "user", "parts": [{"type": "text", "content": "Log ada in, then add 2 and 3."}]}
    ]
    user, assistant, *results = _input(second)
    assert user == _input(first)[0]
    assert assistant["role"] == "assistant"
    calls = [p for p in assistant["parts"] if p["type"] == "tool_call"]
    assert [c["name"] for c in calls] == ["login", "explode", "add"]
    assert calls[0]["arguments"] == {"user": "ada", "password": "[redacted]"}
    # One tool message per call, in the order of the calls, holding what the model was sent.
    assert [r["role"] for r in results] == ["tool", "tool", "tool"]
    responses = [r["parts"][0] for r in results]
    assert [p["id"] for p in responses] == [c["id"] for c in calls]
    assert all(p["type"] == "tool_call_response" for p in responses)
    assert responses[0]["response"] == "welcome ada"
    assert "the fuse was lit" in responses[1]["response"]
    assert responses[2]["response"] == "5"
    everything = json.dumps([dict(s.attributes or {}) for s in _chats(telemetry)])
    assert SECRET not in everything
    assert API_KEY not in everything


async def test_a_resumed_run_continues_the_conversation_it_was_given(
    telemetry: Any, tmp_path: Path
) -> None:
    script = [[tool_call("add", {"a": 1, "b": 1}), tool_call("delete_file", {"path": "x"})], "Ok."]
    async with FakeOpenAIChatServer(script, api_key=API_KEY) as server:
        host = _host(server, telemetry, tmp_path, capture=True, stream=False)
        run = await host.run("Add, then delete x.")
        assert run.stop_reason == "deferred"
        resumed = await host.resume(run, {run.deferred[0].call_id: Approve()})
        await host.aclose()
    assert resumed.stop_reason == "answered"
    _, after = _chats(telemetry)
    roles = [m["role"] for m in _input(after)]
    assert roles == ["user", "assistant", "tool", "tool"]
    responses = [m["parts"][0]["response"] for m in _input(after)[2:]]
    assert responses == ["2", "deleted x"]


async def test_an_unknown_tool_is_answered_in_the_conversation(
    telemetry: Any, tmp_path: Path
) -> None:
    async with FakeOpenAIChatServer([[tool_call("nope", {})], "Sorry."], api_key=API_KEY) as server:
        host = _host(server, telemetry, tmp_path, capture=True, stream=False)
        await host.run("Call something.")
        await host.aclose()
    _, second = _chats(telemetry)
    (result,) = [m for m in _input(second) if m["role"] == "tool"]
    assert "no tool named 'nope' is offered" in result["parts"][0]["response"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_the_response_id_is_the_providers_and_is_kept_without_capture(
    telemetry: Any, tmp_path: Path, stream: bool
) -> None:
    async with FakeOpenAIChatServer(
        [[tool_call("add", {"a": 1, "b": 2})], "3"], api_key=API_KEY
    ) as server:
        host = _host(server, telemetry, tmp_path, capture=False, stream=stream)
        run = await host.run("add")
        await host.aclose()
    chats = _chats(telemetry)
    assert [c.attributes["gen_ai.response.id"] for c in chats if c.attributes] == [
        "chatcmpl-fake1",
        "chatcmpl-fake2",
    ]
    assert all("gen_ai.input.messages" not in (c.attributes or {}) for c in chats)
    answers = [m for m in run.messages if type(m).__name__ == "AssistantMessage"]
    assert [getattr(m, "response_id", None) for m in answers] == [
        "chatcmpl-fake1",
        "chatcmpl-fake2",
    ]
