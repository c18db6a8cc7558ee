"""A call whose argument text the loop repaired goes back to the provider with the arguments it
ran with, in each API's own form; text that could not be read is kept as the model sent it."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from providers import FAKE_PROVIDERS

import toolwire
from toolwire import Config, Host
from toolwire.config import LedgerConfig, ProviderConfig
from toolwire.loop import Run
from toolwire.messages import AssistantMessage
from toolwire.testing import tool_call

# Gemini's wire carries a call's arguments as an object, not as text: there is nothing to repair.
SERVERS = [row for row in FAKE_PROVIDERS if row[1] != "gemini"]

# Unquoted keys, a single-quoted key and a trailing comma, then text after the object.
REPAIRABLE = "{a: 2, 'b': 3,}\nfunctions.add:"
UNREADABLE = '{"a": 2, "b": '


@toolwire.tool(side_effects="read_only", idempotent=True)
def add(a: Annotated[int, "A whole number."], b: Annotated[int, "Another one."]) -> str:
    """Add two whole numbers."""
    return str(a + b)


def _sent_arguments(body: Any) -> list[Any]:
    """The arguments of the calls of the history a request sends, as the API writes them."""
    found: list[Any] = []
    for item in body.get("input") or ():  # Responses
        if isinstance(item, dict) and item.get("type") == "function_call":
            found.append(item["arguments"])
    for message in body.get("messages") or ():
        for call in message.get("tool_calls") or ():  # Chat Completions
            found.append(call["function"]["arguments"])
        content = message.get("content")
        if isinstance(content, list):  # Messages
            found.extend(b["input"] for b in content if b.get("type") == "tool_use")
    return found


async def _run(server_class: Any, api: str, plugin: Any, arguments: str) -> tuple[Run, Any]:
    script = [tool_call("add", raw_arguments=arguments), tool_call("add", {"a": 2, "b": 3}), "5"]
    async with server_class(script) as server:
        provider = ProviderConfig(
            adapter=api, base_url=server.base_url, model="m", max_retries=0, stream=True
        )
        host = Host.load(
            Config(provider=provider, ledger=LedgerConfig(enabled=False)), plugins=[plugin]
        )
        host.add_tool(add)
        async with host:
            run = await host.run("What is 2 plus 3?")
    return run, server


@pytest.mark.parametrize(("server_class", "api", "plugin"), SERVERS)
async def test_repaired_arguments_go_back_to_the_provider_as_they_ran(
    server_class: Any, api: str, plugin: Any
) -> None:
    run, server = await _run(server_class, api, plugin, REPAIRABLE)
    assert run.stop_reason == "answered", run.detail
    # The next request sends the call back with the arguments it ran with, in the API's form.
    sent = _sent_arguments(server.bodies[1])[0]
    assert (json.loads(sent) if isinstance(sent, str) else sent) == {"a": 2, "b": 3}
    first = run.tool_calls[0]
    assert first.result is not None
    assert first.result.model_text() == "5"
    # The history holds the object the text was read as, and the text as it came.
    assert first.call.arguments == {"a": 2, "b": 3}
    assert first.call.raw_arguments == REPAIRABLE
    turn = next(m for m in run.messages if isinstance(m, AssistantMessage) and m.tool_calls)
    assert turn.tool_calls[0].arguments == {"a": 2, "b": 3}
    # The run's JSON (ledger, `run --json`, the web chat's store) keeps them too.
    stored = Run.from_json(json.loads(json.dumps(run.to_json())))
    assert stored.tool_calls[0].call.arguments == {"a": 2, "b": 3}
    stored_turn = next(m for m in stored.messages if isinstance(m, AssistantMessage))
    assert stored_turn.tool_calls[0].arguments == {"a": 2, "b": 3}


@pytest.mark.parametrize(("server_class", "api", "plugin"), SERVERS)
async def test_unreadable_arguments_keep_the_models_text_and_the_next_request_is_valid(
    server_class: Any, api: str, plugin: Any
) -> None:
    run, server = await _run(server_class, api, plugin, UNREADABLE)
    assert run.stop_reason == "answered", run.detail
    refused, ran = run.tool_calls
    assert refused.outcome == "invalid_arguments"
    assert (refused.call.arguments, refused.call.raw_arguments) == (None, UNREADABLE)
    assert ran.result is not None
    assert ran.result.model_text() == "5"
    # Text that never parsed goes back as an empty object (hosts that parse the history's
    # argument text refuse anything else), its refusal saying what was wrong with it.
    sent = _sent_arguments(server.bodies[1])[0]
    assert (json.loads(sent) if isinstance(sent, str) else sent) == {}
    stored = Run.from_json(json.loads(json.dumps(run.to_json())))
    assert stored.tool_calls[0].call.raw_arguments == UNREADABLE
