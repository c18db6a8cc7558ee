"""Every adapter keeps the provider's id of its answer on the assistant turn (`response_id`)."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.adapters import ModelRequest
from toolwire.config import ProviderConfig
from toolwire.loop._codec import message_from_json, message_to_json
from toolwire.messages import UserMessage
from toolwire.testing import FakeOpenAIChatServer, FakeOpenAIResponsesServer
from toolwire_openai import OpenAIChatAdapter, OpenAIResponsesAdapter


def _request(stream: bool) -> ModelRequest:
    return ModelRequest(run_id="r", round=1, messages=(UserMessage("hi"),), stream=stream)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    ("server_cls", "adapter_cls", "api", "expected"),
    [
        (FakeOpenAIChatServer, OpenAIChatAdapter, "openai-chat", "chatcmpl-fake1"),
        (FakeOpenAIResponsesServer, OpenAIResponsesAdapter, "openai-responses", "resp_fake1"),
    ],
)
async def test_the_answer_carries_the_providers_id(
    stream: bool, server_cls: Any, adapter_cls: Any, api: str, expected: str
) -> None:
    async with server_cls(["hello"]) as server:
        adapter = adapter_cls(ProviderConfig(adapter=api, base_url=server.base_url, model="m"))
        try:
            message = await adapter.complete(_request(stream), lambda event: None)
        finally:
            await adapter.aclose()
    assert message.text == "hello"
    assert message.response_id == expected
    assert message_from_json(message_to_json(message)) == message  # kept in stored runs


def test_an_answer_without_an_id_has_none() -> None:
    from toolwire_openai import parse_chat_completion

    payload = {"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}]}
    assert parse_chat_completion(payload).response_id is None
    assert parse_chat_completion({**payload, "id": ""}).response_id is None
    assert "response_id" not in message_to_json(parse_chat_completion(payload))
