"""`[trace] request_bodies` and `toolwire run --show-wire`: every body sent, secrets redacted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import attrs
import pytest

import toolwire
import toolwire_openai._plugin as openai_plugin
from toolwire import Host
from toolwire.cli import main
from toolwire.config import ConfigError, config_from_dict
from toolwire.testing import FakeOpenAIChatServer, tool_call

PASSWORD = "correct horse battery"


@toolwire.tool(sensitive_arguments=["password"])
def login(user: str, password: str) -> str:
    """Log in.

    Args:
        user: The user name.
        password: The password.
    """
    return f"welcome {user}"


class LoginPlugin:
    @toolwire.hookimpl
    def toolwire_tools(self) -> list[toolwire.Tool]:
        return [login]


def _config(server: FakeOpenAIChatServer, trace: Path, stream: bool) -> Any:
    return config_from_dict(
        {
            "plugins": {"enable": ["openai"]},
            "provider": {
                "adapter": "openai-chat",
                "base_url": server.base_url,
                "model": "m",
                "stream": stream,
            },
            "ledger": {"enabled": False},
            "trace": {"path": str(trace), "request_bodies": True},
        }
    )


@pytest.mark.parametrize("name", ["login", "Login"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_the_trace_holds_every_request_body_with_secrets_redacted(
    tmp_path: Path, stream: bool, name: str
) -> None:
    """Also when the model changed the case of the tool's name (the call runs as ``login``)."""
    trace = tmp_path / "trace.jsonl"
    script = [tool_call(name, {"user": "ada", "password": PASSWORD}), "Logged in."]
    async with FakeOpenAIChatServer(script) as server:
        host = Host.load(_config(server, trace, stream), plugins=[openai_plugin, LoginPlugin()])
        async with host:
            run = await host.run("Log in as ada.")
    assert run.stop_reason == "answered"
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    bodies = [r for r in records if r["kind"] == "request_body"]
    assert [b["round"] for b in bodies] == [1, 2]
    assert all(b["api"] == "openai-chat" and b["stream"] is stream for b in bodies)
    assert all(b["url"].endswith("/v1/chat/completions") for b in bodies)
    # The first body is exactly what the server received; the second differs only where the
    # password stood in the history.
    assert bodies[0]["body"] == server.bodies[0]
    sent = json.dumps(server.bodies[1])
    assert PASSWORD in sent
    assert PASSWORD not in trace.read_text(encoding="utf-8")
    assistant = bodies[1]["body"]["messages"][1]
    arguments = json.loads(assistant["tool_calls"][0]["function"]["arguments"])
    assert arguments == {"user": "ada", "password": "[redacted]"}
    kinds = [r["kind"] for r in records]
    assert kinds.index("request_sent") < kinds.index("request_body")  # existing events unchanged


def test_request_bodies_without_a_trace_path_is_refused() -> None:
    expected = r"\$\.trace\.request_bodies = True: expected a \[trace\] path"
    with pytest.raises(ConfigError, match=expected):
        config_from_dict({"trace": {"request_bodies": True}})
    with pytest.raises(ConfigError, match="request_bodies = 'yes'"):
        config_from_dict({"trace": {"request_bodies": "yes", "path": "t.jsonl"}})


async def test_show_wire_prints_the_bodies_to_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WIRE_TEST_KEY", "sk-wire-test-key-5678")
    async with FakeOpenAIChatServer(["Hello there."], api_key="sk-wire-test-key-5678") as server:
        (tmp_path / "toolwire.toml").write_text(
            '[plugins]\nenable = ["openai"]\n'
            f'[provider]\nadapter = "openai-chat"\nbase_url = "{server.base_url}"\nmodel = "m"\n'
            'api_key_env = "WIRE_TEST_KEY"\n[ledger]\nenabled = false\n',
            encoding="utf-8",
        )
        code = await asyncio.to_thread(
            main, ["run", "--show-wire", "Say hello, my key is sk-wire-test-key-5678"]
        )
    assert code == 0
    shown = capsys.readouterr()
    assert "Hello there." in shown.out
    assert "POST" not in shown.out
    assert '"messages"' not in shown.out
    header, _, rest = shown.err.partition("\n")
    assert header.startswith("--> POST 127.0.0.1:")
    assert header.endswith("/v1/chat/completions (openai-chat, round 1)")
    body = json.loads(rest[: rest.rindex("}") + 1])
    assert body["model"] == "m"
    assert body["messages"][-1]["content"] == "Say hello, my key is [redacted]"
    assert "sk-wire-test-key-5678" not in shown.err


def test_show_wire_says_when_the_adapter_sends_no_http_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolwire.toml").write_text(
        '[provider]\nadapter = "scripted"\n[ledger]\nenabled = false\n', encoding="utf-8"
    )
    assert main(["run", "--show-wire", "Hello?"]) == 0
    err = capsys.readouterr().err
    assert "no request body to show: the scripted adapter sends no HTTP request" in err


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_bridge_call_has_the_secrets_of_the_tool_it_calls_redacted(
    tmp_path: Path, stream: bool
) -> None:
    """``login`` deferred ([tools.exposure]) and called through ``tool_call``: its password
    stands inside the bridge call's ``arguments``, and is redacted there."""
    trace = tmp_path / "trace.jsonl"
    bridge = {"name": "login", "arguments": {"user": "ada", "password": PASSWORD}}
    script = [tool_call("tool_call", bridge), "Logged in."]
    async with FakeOpenAIChatServer(script) as server:
        config = _config(server, trace, stream)
        config = attrs.evolve(
            config, tools=attrs.evolve(config.tools, exposure={"login": "deferred"})
        )
        host = Host.load(config, plugins=[openai_plugin, LoginPlugin()])
        async with host:
            run = await host.run("Log in as ada.")
    assert run.stop_reason == "answered"
    assert run.tool_calls[0].tool == "login"
    offered = [t["function"]["name"] for t in server.bodies[0]["tools"]]
    assert offered == ["tool_call", "tool_search"]
    assert PASSWORD in json.dumps(server.bodies[1])  # the provider gets its conversation back
    written = trace.read_text(encoding="utf-8")
    assert PASSWORD not in written
    records = [json.loads(line) for line in written.splitlines()]
    [_, second] = [r for r in records if r["kind"] == "request_body"]
    call = second["body"]["messages"][1]["tool_calls"][0]["function"]
    assert call["name"] == "tool_call"
    assert json.loads(call["arguments"]) == {
        "name": "login",
        "arguments": {"user": "ada", "password": "[redacted]"},
    }
