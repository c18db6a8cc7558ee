"""A run's answer schema in each API's structured-output field, against the fake servers."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from toolwire.adapters import ModelRequest, ProviderAdapter, ProviderError
from toolwire.config import ProviderConfig
from toolwire.messages import UserMessage
from toolwire.output import OutputSpec
from toolwire.testing import (
    FakeAnthropicServer,
    FakeOpenAIChatServer,
    FakeOpenAIResponsesServer,
    FakeProviderServer,
    tool_call,
)
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


# -- whole runs ----------------------------------------------------------------------------------


def _host(server: Any, plugins: list[Any], **provider: Any) -> Any:
    from fake_config import fake_config

    import toolwire_openai._plugin
    from toolwire import Host

    config = fake_config(server, provider=provider)
    return Host.load(config, plugins=[toolwire_openai._plugin, *plugins])


async def test_a_model_without_native_tools_is_asked_in_the_prompt() -> None:
    async with FakeOpenAIChatServer(["It is Nice.", ANSWER]) as server:
        host = _host(server, [], native_tools=False)
        try:
            run = await host.run("Which city?", output=City)
        finally:
            await host.aclose()
    assert run.stop_reason == "answered", run.detail
    assert run.output == City("Nice", 340000)
    first, second = server.bodies
    assert "response_format" not in first
    system = first["messages"][0]
    assert system["role"] == "system"
    assert "write only a JSON object that matches this JSON Schema" in system["content"]
    # The prose answer went back with what was wrong.
    assert "one JSON object and nothing else" in second["messages"][-1]["content"]


async def test_without_native_output_the_answer_tool_is_forced() -> None:
    import toolwire

    @toolwire.tool(side_effects="read_only")
    def census(city: str) -> int:
        """The population of a city."""
        return 340000

    script = [
        tool_call("census", {"city": "Nice"}),
        [
            tool_call("final_answer", {"name": "Nice", "population": 340000}),
            tool_call("census", {"city": "Lyon"}),
        ],
    ]
    async with FakeOpenAIChatServer(script) as server:
        host = _host(server, [], native_output=False)
        host.add_tool(census)
        try:
            run = await host.run("Which city?", output=City)
        finally:
            await host.aclose()
    assert run.stop_reason == "answered", run.detail
    assert run.output == City("Nice", 340000)
    assert run.text == '{"name": "Nice", "population": 340000}'
    first, second = server.bodies
    assert [t["function"]["name"] for t in first["tools"]] == ["census", "final_answer"]
    assert first["tool_choice"] == "required"  # a tool or the answer, never prose
    outcomes = [(r.call.name, r.outcome) for r in run.tool_calls]
    assert outcomes == [
        ("census", "executed"),
        ("final_answer", "final_answer"),
        ("census", "not_run"),  # beside the answer: the run had ended
    ]
    assert "response_format" not in second


async def test_a_run_with_no_tools_is_made_to_call_the_answer_tool(tmp_path: Any) -> None:
    import json

    from toolwire import Host
    from toolwire.config import load_config

    schema = tmp_path / "city.json"
    schema.write_text(json.dumps(SPEC.schema))
    async with FakeAnthropicServer([tool_call("final_answer", {"name": "Nice"})]) as server:
        (tmp_path / "toolwire.toml").write_text(
            f'[provider]\nadapter = "anthropic-messages"\nbase_url = "{server.base_url}"\n'
            'model = "m"\n[ledger]\nenabled = false\n[run]\noutput_schema = "city.json"\n'
        )
        import toolwire_anthropic._plugin

        host = Host.load(
            load_config(tmp_path / "toolwire.toml"), plugins=[toolwire_anthropic._plugin]
        )
        try:
            run = await host.run("Which city?")
        finally:
            await host.aclose()
    assert run.stop_reason == "answered", run.detail
    assert run.output == {"name": "Nice"}  # a schema from the config: the JSON value
    (body,) = server.bodies
    assert [t["name"] for t in body["tools"]] == ["final_answer"]
    assert body["tool_choice"]["type"] == "tool"
    assert body["tool_choice"]["name"] == "final_answer"
    assert run.options.output is not None
    assert run.to_json()["output"] == {"name": "Nice"}


async def test_toolwire_run_takes_a_schema_file_and_prints_the_answer_and_its_cost(
    tmp_path: Any,
) -> None:
    import json

    from cli_run import provider_table, toolwire_run

    from toolwire.testing import Reply
    from toolwire.usage import Usage

    schema = tmp_path / "city.json"
    schema.write_text(json.dumps(SPEC.schema))
    spent = Usage(input_tokens=2000, cache_read_tokens=1000, output_tokens=100, total_tokens=2100)
    async with FakeOpenAIChatServer([Reply(turn=ANSWER, usage=spent)]) as server:
        config = tmp_path / "toolwire.toml"
        config.write_text(
            '[plugins]\nenable = ["openai"]\n[ledger]\nenabled = false\n'
            + provider_table(server)
            + '[prices."test-model"]\ninput = 1.0\ncached_input = 0.5\noutput = 10.0\n'
        )
        run = await toolwire_run(config, "Which city?", options=("--output-schema", str(schema)))
    assert run["stop_reason"] == "answered"
    assert run["output"] == {"name": "Nice", "population": 340000}
    assert run["usage"]["cache_read_tokens"] == 1000
    assert run["cost"] == (1000 * 1.0 + 1000 * 0.5 + 100 * 10.0) / 1_000_000
    assert server.bodies[0]["response_format"]["json_schema"]["name"] == "answer"  # no title
