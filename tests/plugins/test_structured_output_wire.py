"""A run's answer schema in each API's structured-output field, against the fake servers."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from toolwire.adapters import ModelRequest, ProviderAdapter, ProviderError
from toolwire.config import ProviderConfig
from toolwire.messages import UserMessage
from toolwire.output import OutputSpec
from toolwire.testing import FakeOpenAIChatServer, FakeOpenAIResponsesServer, FakeProviderServer
from toolwire_anthropic import AnthropicMessagesAdapter
from toolwire_gemini import GeminiAdapter
from toolwire_gemini.testing import FakeGeminiServer
from toolwire_openai import OpenAIChatAdapter, OpenAIResponsesAdapter


@dataclasses.dataclass
class City:
    """A city."""

    name: str
    population: int | None = None


SPEC = OutputSpec.of(City)
ANSWER = '{"name": "Nice", "population": 340000}'

NATIVE = [
    ("openai-chat", OpenAIChatAdapter, FakeOpenAIChatServer),
    ("openai-responses", OpenAIResponsesAdapter, FakeOpenAIResponsesServer),
    ("gemini", GeminiAdapter, FakeGeminiServer),
]


def _format(api: str, body: dict[str, Any]) -> Any:
    if api == "openai-chat":
        return body["response_format"]
    if api == "openai-responses":
        return body["text"]["format"]
    return body["generationConfig"]


async def _ask(
    adapter_cls: type[ProviderAdapter],
    server: FakeProviderServer,
    stream: bool,
    **provider: Any,
) -> Any:
    config = ProviderConfig(
        adapter=adapter_cls.api, base_url=server.base_url, model="m", max_retries=0, **provider
    )
    adapter = adapter_cls(config)
    request = ModelRequest(
        run_id="r", round=1, messages=(UserMessage("Which city?"),), stream=stream, output=SPEC
    )
    try:
        return await adapter.complete(request, lambda event: None)
    finally:
        await adapter.aclose()


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "streamed"])
@pytest.mark.parametrize(("api", "adapter_cls", "server_cls"), NATIVE, ids=[n[0] for n in NATIVE])
async def test_the_schema_goes_in_the_apis_own_field_and_the_server_takes_it(
    api: str, adapter_cls: type[ProviderAdapter], server_cls: type[FakeProviderServer], stream: bool
) -> None:
    async with server_cls([ANSWER]) as server:
        message = await _ask(adapter_cls, server, stream)
    assert SPEC.parse(message.text) == City("Nice", 340000)
    sent = _format(api, server.bodies[0])
    if api == "gemini":
        assert sent["responseMimeType"] == "application/json"
        assert sent["responseSchema"]["required"] == ["name"]
    else:
        fields = sent if api == "openai-responses" else sent["json_schema"]
        assert sent["type"] == "json_schema"
        assert fields["name"] == "City"
        assert fields["strict"] is False  # a loopback host binds nothing
        assert fields["schema"] == dict(SPEC.schema)


@pytest.mark.parametrize(("api", "adapter_cls", "server_cls"), NATIVE[:2], ids=["chat", "resp"])
async def test_a_host_that_binds_output_gets_the_strict_projection(
    api: str, adapter_cls: type[ProviderAdapter], server_cls: type[FakeProviderServer]
) -> None:
    async with server_cls([ANSWER]) as server:
        message = await _ask(adapter_cls, server, False, enforces_strict_tool_schemas=True)
    sent = _format(api, server.bodies[0])
    fields = sent if api == "openai-responses" else sent["json_schema"]
    assert fields["strict"] is True
    # The optional field is required and nullable, as strict mode wants it.
    assert fields["schema"]["required"] == ["name", "population"]
    assert fields["schema"]["properties"]["population"]["type"] == ["integer", "null"]
    assert SPEC.parse(message.text) == City("Nice", 340000)


async def test_the_fake_server_refuses_a_strict_schema_openai_refuses() -> None:
    sloppy = OutputSpec(name="City", description="A city.", schema=SPEC.schema)
    async with FakeOpenAIChatServer([ANSWER]) as server:
        config = ProviderConfig(
            adapter="openai-chat", base_url=server.base_url, model="m", max_retries=0
        )
        adapter = OpenAIChatAdapter(config)
        request = ModelRequest(run_id="r", round=1, messages=(UserMessage("?"),), output=sloppy)
        body = adapter.request_body(request, None)
        body["response_format"]["json_schema"]["strict"] = True
        with pytest.raises(ProviderError, match="Missing 'population'"):
            await adapter.post(
                server.url,
                body,
                request,
                lambda event: None,
                key_env=None,
            )
        await adapter.aclose()


async def test_options_cannot_set_the_format_a_typed_output_decides() -> None:
    async with FakeOpenAIChatServer([ANSWER]) as server:
        with pytest.raises(ProviderError, match="answer's format"):
            await _ask(
                OpenAIChatAdapter,
                server,
                False,
                options={"response_format": {"type": "json_object"}},
            )
    assert server.requests == []


def test_anthropic_and_prompted_adapters_have_no_native_output() -> None:
    from toolwire.prompted import PromptedAdapter

    config = ProviderConfig(adapter="anthropic-messages", model="m")
    assert not AnthropicMessagesAdapter(config).capabilities.native_output
    chat = OpenAIChatAdapter(ProviderConfig(adapter="openai-chat", model="m"))
    assert chat.capabilities.native_output
    assert not PromptedAdapter(chat).capabilities.native_output
    off = ProviderConfig(adapter="openai-chat", model="m", native_output=False)
    assert not OpenAIChatAdapter(off).capabilities.native_output
