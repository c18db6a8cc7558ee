"""``[[provider.fallback]]``: the next provider answers when one cannot, over the wire, and
gets only what it can read of the turns others wrote."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import attrs

import toolwire
import toolwire_anthropic._plugin
import toolwire_gemini._plugin
import toolwire_openai._plugin
from toolwire import Host
from toolwire.adapters import ModelRequest
from toolwire.adapters._fallback import FallbackAdapter, foreign_message
from toolwire.config import config_from_dict
from toolwire.events import ProviderFallback
from toolwire.loop import Run
from toolwire.messages import AssistantMessage, ThinkingPart, UserMessage
from toolwire.testing import (
    ErrorReply,
    FakeAnthropicServer,
    FakeOpenAIChatServer,
    FakeOpenAIResponsesServer,
    FakeProviderServer,
    tool_call,
)
from toolwire_gemini.testing import FakeGeminiServer

PLUGINS = [toolwire_openai._plugin, toolwire_anthropic._plugin, toolwire_gemini._plugin]


@toolwire.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def provider(server: FakeProviderServer, **fields: Any) -> dict[str, Any]:
    return {
        "adapter": server.api,
        "base_url": server.base_url,
        "model": f"model-of-{server.api}",
        "max_retries": 0,
        **fields,
    }


async def run_with(first: dict[str, Any], *fallbacks: dict[str, Any], prompt: str = "go") -> Run:
    config = config_from_dict(
        {"provider": {**first, "fallback": list(fallbacks)}, "ledger": {"enabled": False}}
    )
    host = Host.load(config, plugins=PLUGINS)
    host.add_tool(add)
    try:
        return await host.run(prompt)
    finally:
        await host.aclose()


def fallbacks_of(run: Run) -> list[ProviderFallback]:
    return [e for e in run.events if isinstance(e, ProviderFallback)]


async def test_a_server_error_hands_the_request_to_the_next_provider() -> None:
    script = [ErrorReply(status=503, message="overloaded"), ErrorReply(status=503)]
    async with (
        FakeOpenAIChatServer(script) as down,
        FakeAnthropicServer([tool_call("add", {"a": 2, "b": 3}), "5."]) as up,
    ):
        run = await run_with(provider(down), provider(up))
    assert run.stop_reason == "answered", run.detail
    assert run.text == "5."
    first, second = fallbacks_of(run)
    assert (first.failed, first.next, first.status) == (
        "openai-chat/model-of-openai-chat",
        "anthropic-messages/model-of-anthropic-messages",
        503,
    )
    assert "overloaded" in first.error
    # Every request starts again with the first provider.
    assert len(down.requests) == 2
    assert second.round == 2
    answers = [m for m in run.messages if isinstance(m, AssistantMessage)]
    assert {m.provider for m in answers} == {"anthropic-messages/model-of-anthropic-messages"}
    assert all(m.api == "anthropic-messages" for m in answers)
    stored = [m for m in run.to_json()["messages"] if m["role"] == "assistant"]
    assert [m["provider"] for m in stored] == [answers[0].provider] * 2
    assert Run.from_json(run.to_json()).messages == run.messages


async def test_a_provider_that_cannot_be_reached_is_passed_over() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    closed = {
        "adapter": "openai-chat",
        "base_url": f"http://127.0.0.1:{port}/v1",
        "model": "gone",
        "max_retries": 0,
    }
    async with FakeOpenAIResponsesServer(["hello"]) as up:
        run = await run_with(closed, provider(up))
    assert run.stop_reason == "answered", run.detail
    (event,) = fallbacks_of(run)
    assert event.status is None
    assert "cannot connect" in event.error


async def test_a_refusal_of_tools_moves_on_instead_of_prompting() -> None:
    refusal = ErrorReply(status=400, message="registry/tiny does not support tools")
    async with (
        FakeOpenAIChatServer([refusal]) as tiny,
        FakeOpenAIChatServer(["native answer"]) as big,
    ):
        run = await run_with(provider(tiny, model="tiny"), provider(big, model="big"))
    assert run.stop_reason == "answered", run.detail
    assert [e.next for e in fallbacks_of(run)] == ["openai-chat/big"]
    assert "tools" in big.bodies[0]  # natively, not in the prompt


async def test_a_request_error_is_no_reason_to_fall_back() -> None:
    bad = ErrorReply(status=400, message="invalid model")
    async with FakeOpenAIChatServer([bad]) as first, FakeAnthropicServer(["never"]) as second:
        run = await run_with(provider(first), provider(second))
    assert run.stop_reason == "error"
    assert "invalid model" in (run.detail or "")
    assert fallbacks_of(run) == []
    assert second.requests == []


async def test_the_last_providers_error_ends_the_run() -> None:
    async with (
        FakeOpenAIChatServer([ErrorReply(status=500)]) as first,
        FakeAnthropicServer([ErrorReply(status=529, message="overloaded")]) as second,
    ):
        run = await run_with(provider(first), provider(second))
    assert run.stop_reason == "error"
    assert "529" in (run.detail or "")
    assert len(fallbacks_of(run)) == 1


async def test_another_gemini_is_not_sent_the_first_ones_thought_signatures() -> None:
    # Each fake Gemini refuses a signature it never gave, as Gemini 3 does: the second one
    # accepts the first one's turn only rewritten as a turn another provider wrote.
    async with (
        FakeGeminiServer([tool_call("add", {"a": 1, "b": 1}), ErrorReply(status=503)]) as a,
        FakeGeminiServer(["2."]) as b,
    ):
        run = await run_with(provider(a, model="g-a"), provider(b, model="g-b"))
    assert run.stop_reason == "answered", run.detail
    assert "skip_thought_signature_validator" in json.dumps(b.bodies[0])
    answers = [m for m in run.messages if isinstance(m, AssistantMessage)]
    assert [m.provider for m in answers] == ["gemini/g-a", "gemini/g-b"]


async def test_signed_thinking_and_reasoning_items_stay_with_their_provider() -> None:
    thinking = AssistantMessage(
        parts=(ThinkingPart(text="Adding."), tool_call("add", {"a": 1, "b": 2}))
    )
    async with (
        FakeAnthropicServer([thinking, ErrorReply(status=529)]) as claude,
        FakeAnthropicServer(["3."]) as other,
        FakeOpenAIResponsesServer([thinking, ErrorReply(status=503)]) as responses,
        FakeOpenAIResponsesServer(["3."]) as other_responses,
    ):
        run = await run_with(provider(claude, model="c1"), provider(other, model="c2"))
        again = await run_with(
            provider(responses, model="r1"), provider(other_responses, model="r2")
        )
    assert run.stop_reason == "answered", run.detail
    assert again.stop_reason == "answered", again.detail
    # The first provider's own second request carried its signature back …
    assert "sig-fake-1" in json.dumps(claude.bodies[1])
    # … the other provider never sees it, but does see the call and its result.
    other_body = json.dumps(other.bodies[0])
    assert "sig-fake-1" not in other_body
    assert '"tool_use"' in other_body
    assert '"tool_result"' in other_body
    assert "rs_fake1" in json.dumps(responses.bodies[1])
    assert "rs_fake1" not in json.dumps(other_responses.bodies[0])
    assert '"function_call_output"' in json.dumps(other_responses.bodies[0])


async def test_a_turn_is_made_foreign_once_for_every_request_it_is_in() -> None:
    # The same object each time, so the next provider's adapter renders it once.
    first, second = (
        {"adapter": api, "base_url": "http://127.0.0.1:9", "model": "m"}
        for api in ("anthropic-messages", "openai-chat")
    )
    config = config_from_dict({"provider": {**first, "fallback": [second]}})
    host = Host.load(config, plugins=PLUGINS)
    try:
        adapter = host.create_adapter()
        assert isinstance(adapter, FallbackAdapter)
        turn = AssistantMessage(parts=(ThinkingPart(text="t", signature="s"),), api="x")
        request = ModelRequest(run_id="r", round=1, messages=(UserMessage("go"), turn))
        foreign = adapter.request_for(request, 1).messages[1]
        again = adapter.request_for(attrs.evolve(request, round=2), 1).messages[1]
        assert adapter.request_for(request, 0) is request  # the first provider's own turns
        await adapter.aclose()
    finally:
        await host.aclose()
    assert foreign is again
    assert foreign == foreign_message(turn)


async def test_toolwire_run_json_says_which_provider_answered(tmp_path: Path) -> None:
    from cli_run import KEY_ENV, provider_table, toolwire_run

    async with (
        FakeOpenAIChatServer([ErrorReply(status=503, message="overloaded")]) as down,
        FakeOpenAIChatServer(["Fine."]) as up,
    ):
        config = tmp_path / "toolwire.toml"
        config.write_text(
            '[plugins]\nenable = ["openai"]\n[ledger]\nenabled = false\n'
            + provider_table(down)
            + 'max_retries = 0\n\n[[provider.fallback]]\nadapter = "openai-chat"\n'
            + f'base_url = "{up.base_url}"\nmodel = "spare"\napi_key_env = "{KEY_ENV}"\n'
        )
        run = await toolwire_run(config, "How are you?")
    assert run["stop_reason"] == "answered"
    assert run["text"] == "Fine."
    assert [m["provider"] for m in run["messages"] if m["role"] == "assistant"] == [
        "openai-chat/spare"
    ]
    (fallback,) = [e for e in run["events"] if e["kind"] == "provider_fallback"]
    assert (fallback["failed"], fallback["next"], fallback["status"]) == (
        "openai-chat/test-model",
        "openai-chat/spare",
        503,
    )
