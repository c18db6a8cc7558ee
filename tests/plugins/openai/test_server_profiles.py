"""`[providers.openai] profile`: what openai-chat sends to each kind of server, by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import toolwire
from toolwire import FunctionSpec, Host
from toolwire.adapters import ModelRequest, NamedToolChoice, ProviderError
from toolwire.cli import main
from toolwire.config import ConfigError, ProviderConfig, config_from_dict
from toolwire.messages import UserMessage
from toolwire.testing import FakeOpenAIChatServer, tool_call
from toolwire_openai import SERVER_PROFILES, OpenAIChatAdapter, render_chat_request
from toolwire_openai._common import host_profile

SPEC = FunctionSpec(
    name="add",
    description="Add.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


def _request(choice: Any = "auto") -> ModelRequest:
    return ModelRequest(
        run_id="r",
        round=1,
        messages=(UserMessage("add 1 and 2"),),
        functions=(SPEC,),
        tool_choice=choice,
        parallel_tool_calls=False,
    )


def _body(server: str | None, choice: Any = "auto", **provider: Any) -> dict[str, Any]:
    config = ProviderConfig(
        adapter="openai-chat",
        base_url="http://127.0.0.1:8080/v1",
        model="m",
        max_tokens=64,
        **provider,
    )
    return render_chat_request(_request(choice), config, profile=host_profile(config, server))


def test_the_profiles_are_the_documented_six() -> None:
    assert sorted(SERVER_PROFILES) == [
        "llama-cpp-python",
        "llama.cpp",
        "lmstudio",
        "ollama",
        "openai",
        "vllm",
    ]


def test_openai_profile_sends_strict_tools_the_parallel_flag_and_the_new_token_field() -> None:
    body = _body("openai")
    assert body["tools"][0]["function"]["strict"] is True
    assert body["parallel_tool_calls"] is False
    assert body["max_completion_tokens"] == 64
    assert "max_tokens" not in body
    assert host_profile(ProviderConfig(base_url="http://x/v1"), "openai").key_env == (
        "OPENAI_API_KEY"
    )


@pytest.mark.parametrize("server", ["llama.cpp", "vllm"])
def test_llama_cpp_and_vllm_take_the_parallel_flag_and_no_strict(server: str) -> None:
    body = _body(server)
    assert body["tool_choice"] == "auto"
    assert body["parallel_tool_calls"] is False
    assert "strict" not in body["tools"][0]["function"]
    assert body["max_tokens"] == 64


def test_lmstudio_sends_tool_choice_but_not_the_parallel_flag() -> None:
    body = _body("lmstudio", "required")
    assert body["tool_choice"] == "required"
    assert "parallel_tool_calls" not in body


def test_ollama_gets_no_tool_choice_and_none_means_no_tools() -> None:
    body = _body("ollama")
    assert "tool_choice" not in body
    assert body["tools"][0]["function"]["name"] == "add"
    assert "tools" not in _body("ollama", "none")


@pytest.mark.parametrize(
    ("server", "choice", "valid"),
    [
        ("ollama", "required", "auto, none"),
        ("ollama", NamedToolChoice("add"), "auto, none"),
        ("llama.cpp", NamedToolChoice("add"), "auto, none, required"),
        ("lmstudio", NamedToolChoice("add"), "auto, none, required"),
    ],
)
def test_a_choice_the_server_does_not_honour_is_refused_before_sending(
    server: str, choice: Any, valid: str
) -> None:
    with pytest.raises(ProviderError) as caught:
        _body(server, choice)
    message = str(caught.value)
    assert f"not honoured by the {server} server profile" in message
    assert f"it honours {valid}" in message


def test_provider_flags_still_override_the_profile() -> None:
    body = _body("openai", enforces_strict_tool_schemas=False, accepts_parallel_tool_calls=False)
    assert "strict" not in body["tools"][0]["function"]
    assert "parallel_tool_calls" not in body


def test_an_unknown_profile_is_refused_naming_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"'llama\.cpp', 'vllm', 'ollama', 'lmstudio', 'llama-cpp"):
        OpenAIChatAdapter.for_server("llamacpp")


def _host(config: dict[str, Any]) -> Host:
    return Host.load(config_from_dict({"plugins": {"enable": ["openai"]}, **config}))


async def test_the_profile_reaches_the_adapter_the_host_creates() -> None:
    script = [tool_call("add", {"a": 1, "b": 2}), "3"]
    async with FakeOpenAIChatServer(script) as server:
        host = _host(
            {
                "provider": {"adapter": "openai-chat", "base_url": server.base_url, "model": "m"},
                "providers": {"openai": {"profile": "ollama"}},
                "ledger": {"enabled": False},
            }
        )
        async with host:
            assert host.create_adapter().api == "openai-chat"
            host.add_tool(_add)
            run = await host.run("add 1 and 2")
    assert run.stop_reason == "answered"
    assert all("tool_choice" not in body for body in server.bodies)
    assert server.bodies[0]["tools"][0]["function"]["name"] == "add"


@toolwire.tool(name="add")
def _add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


def test_an_unknown_profile_in_the_config_names_key_value_and_choices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolwire.toml").write_text(
        '[plugins]\nenable = ["openai"]\n[provider]\nadapter = "openai-chat"\nmodel = "m"\n'
        '[providers.openai]\nprofile = "llamacpp"\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        Host.load()
    message = str(caught.value)
    assert "$.providers.openai.profile = 'llamacpp'" in message
    assert "'llama.cpp', 'llama-cpp-python', 'vllm', 'ollama', 'lmstudio', 'openai'" in message
    assert main(["tools", "list"]) == 2
    assert "profile = 'llamacpp'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("server", "choice", "sent"),
    [
        ("ollama", "required", None),
        ("llama.cpp", "add", "required"),
        ("lmstudio", "add", "required"),
    ],
)
async def test_a_run_degrades_a_choice_the_server_does_not_honour(
    server: str, choice: str, sent: str | None
) -> None:
    script = [tool_call("add", {"a": 1, "b": 2}), "3"]
    async with FakeOpenAIChatServer(script) as fake:
        host = _host(
            {
                "provider": {"adapter": "openai-chat", "base_url": fake.base_url, "model": "m"},
                "providers": {"openai": {"profile": server}},
                "ledger": {"enabled": False},
            }
        )
        async with host:
            host.add_tool(_add)
            run = await host.run("add 1 and 2", tool_choice=choice)
    assert run.stop_reason == "answered"
    assert fake.bodies[0].get("tool_choice") == sent
    (warning,) = [e for e in run.events if e.kind == "tool_choice_degraded"]
    assert "the openai-chat adapter can express here" in warning.detail
