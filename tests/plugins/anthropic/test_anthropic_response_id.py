"""The Messages adapter keeps the message's id (`msg_…`) on the assistant turn."""

from __future__ import annotations

import pytest

from toolwire.adapters import ModelRequest
from toolwire.config import ProviderConfig
from toolwire.messages import UserMessage
from toolwire.testing import FakeAnthropicServer
from toolwire_anthropic import AnthropicMessagesAdapter


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_the_answer_carries_the_message_id(stream: bool) -> None:
    request = ModelRequest(run_id="r", round=1, messages=(UserMessage("hi"),), stream=stream)
    async with FakeAnthropicServer(["hello"]) as server:
        config = ProviderConfig(adapter="anthropic-messages", base_url=server.base_url, model="m")
        adapter = AnthropicMessagesAdapter(config)
        try:
            message = await adapter.complete(request, lambda event: None)
        finally:
            await adapter.aclose()
    assert message.text == "hello"
    assert message.response_id == "msg_fake1"
