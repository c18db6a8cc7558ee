"""Captured request bodies: the key and sensitive argument values are redacted, by value."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolwire.events import Event, RequestBody
from toolwire.http._capture import redact_body, sensitive_values
from toolwire.http._transport import ProviderRequest, Transport
from toolwire.messages import AssistantMessage, TextPart, ToolCall, UserMessage
from toolwire.testing import FakeOpenAIChatServer

R = "[redacted]"


def _names(call: ToolCall) -> frozenset[str]:
    return frozenset({"password", "pin"}) if call.name == "login" else frozenset()


def test_sensitive_values_come_from_sensitive_arguments_only() -> None:
    messages = (
        UserMessage("log in"),
        AssistantMessage(
            parts=(
                TextPart("sure"),
                ToolCall(
                    id="c1",
                    name="login",
                    arguments={"user": "ada", "password": "hunter22", "pin": 4711},
                ),
                ToolCall(id="c2", name="search", arguments={"password": "not sensitive here"}),
                ToolCall(id="c3", name="login", arguments=None, raw_arguments="{oops"),
                ToolCall(id="c4", name="login", arguments={"password": {"old": "a", "new": "b2c"}}),
            )
        ),
    )
    assert sensitive_values(messages, _names) == {"hunter22", "4711", "a", "b2c"}


def test_a_secret_is_redacted_in_every_form_the_wire_gives_it() -> None:
    secret = 'pa"ss wörd'
    body = {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "function": {
                            "name": "login",
                            "arguments": json.dumps({"user": "ada", "password": secret}),
                        }
                    }
                ],
            },
            {"role": "user", "content": [{"type": "tool_use", "input": {"password": secret}}]},
            {"role": "tool", "content": f"logged in with {secret} as ada"},
        ],
    }
    redacted = redact_body(body, [secret])
    text = json.dumps(redacted, ensure_ascii=False)
    assert "ss wörd" not in text
    arguments = json.loads(redacted["messages"][0]["tool_calls"][0]["function"]["arguments"])
    assert arguments == {"user": "ada", "password": R}
    assert redacted["messages"][1]["content"][0]["input"] == {"password": R}
    assert redacted["messages"][2]["content"] == f"logged in with {R} as ada"
    assert body["messages"][1]["content"][0]["input"] == {"password": secret}  # not changed


def test_short_and_numeric_secrets_are_redacted_where_they_stand_whole() -> None:
    body = {
        "model": "gpt-4.1",
        "max_tokens": 12,
        "messages": [
            {"content": json.dumps({"pin": "12", "count": 12})},
            {"input": {"pin": "12", "code": 4711}},
            {"content": "the code 4711 works"},
        ],
    }
    redacted = redact_body(body, ["12", "4711"])
    assert redacted["model"] == "gpt-4.1"
    assert redacted["max_tokens"] == R  # a number equal to a sensitive number is hidden too
    assert json.loads(redacted["messages"][0]["content"]) == {"pin": R, "count": 12}
    assert redacted["messages"][1]["input"] == {"pin": R, "code": R}
    assert redacted["messages"][2]["content"] == f"the code {R} works"


@pytest.mark.parametrize("stream", [False, True])
async def test_the_transport_announces_the_body_with_the_key_redacted(
    stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-capture-secret-1234"
    monkeypatch.setenv("CAPTURE_TEST_KEY", key)
    events: list[Event] = []
    body: dict[str, Any] = {
        "model": "m",
        "messages": [{"role": "user", "content": f"my key is {key}, password hunter22"}],
    }
    if stream:
        body["stream"] = True
    server = FakeOpenAIChatServer(["ok"], api_key=key)
    async with server, Transport(request_bodies=True) as transport:
        request = ProviderRequest(
            server.url,
            body,
            api="openai-chat",
            key_env="CAPTURE_TEST_KEY",
            emit=events.append,
            run_id="r",
            round=2,
            secrets=["hunter22"],
        )
        if stream:
            async for _ in transport.stream_sse(request):
                pass
        else:
            await transport.post_json(request)
    (captured,) = [e for e in events if isinstance(e, RequestBody)]
    assert captured.run_id == "r"
    assert captured.round == 2
    assert captured.stream is stream
    assert captured.url == server.url.removeprefix("http://")
    assert captured.body["messages"][0]["content"] == f"my key is {R}, password {R}"
    assert server.bodies[0] == body  # what was sent is the body itself


async def test_without_request_bodies_nothing_is_captured() -> None:
    events: list[Event] = []
    async with FakeOpenAIChatServer(["ok"]) as server, Transport() as transport:
        await transport.post_json(
            ProviderRequest(
                server.url, {"model": "m", "messages": []}, api="openai-chat", emit=events.append
            )
        )
    assert not [e for e in events if isinstance(e, RequestBody)]
