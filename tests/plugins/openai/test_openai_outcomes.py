"""Empty and cut-off answers end the run with their own stop reason, and `toolwire run` fails."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import toolwire_openai._plugin as openai_plugin
from toolwire import Host
from toolwire.cli import main
from toolwire.config import config_from_dict
from toolwire.testing import FakeOpenAIChatServer, Reply


def _host(server: FakeOpenAIChatServer, stream: bool) -> Host:
    config = config_from_dict(
        {
            "plugins": {"enable": ["openai"]},
            "provider": {
                "adapter": "openai-chat",
                "base_url": server.base_url,
                "model": "m",
                "stream": stream,
                "max_tokens": 16,
            },
            "ledger": {"enabled": False},
        }
    )
    return Host.load(config, plugins=[openai_plugin])


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_an_empty_answer_is_empty(stream: bool) -> None:
    async with FakeOpenAIChatServer([""]) as server:
        host = _host(server, stream)
        async with host:
            run = await host.run("Hello?")
    assert run.stop_reason == "empty"
    assert run.detail is not None
    assert "no text and no tool calls" in run.detail
    assert "check the server" in run.detail


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_cut_off_answer_is_truncated(stream: bool) -> None:
    async with FakeOpenAIChatServer([Reply(turn="Once upon a", finish_reason="length")]) as server:
        host = _host(server, stream)
        async with host:
            run = await host.run("Tell me a story.")
    assert run.stop_reason == "truncated"
    assert run.text == "Once upon a"
    assert run.detail is not None
    assert "raise [provider] max_tokens (now 16)" in run.detail


async def test_a_full_answer_is_answered() -> None:
    async with FakeOpenAIChatServer(["Hi."]) as server:
        host = _host(server, False)
        async with host:
            run = await host.run("Hello?")
    assert run.stop_reason == "answered"
    assert run.detail is None


async def test_toolwire_run_exits_non_zero_and_says_what_happened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    async with FakeOpenAIChatServer([""]) as server:
        (tmp_path / "toolwire.toml").write_text(
            '[plugins]\nenable = ["openai"]\n'
            f'[provider]\nadapter = "openai-chat"\nbase_url = "{server.base_url}"\nmodel = "m"\n'
            "[ledger]\nenabled = false\n",
            encoding="utf-8",
        )
        code = await asyncio.to_thread(main, ["run", "Hello?"])
    assert code == 1
    shown = capsys.readouterr()
    assert "empty" in shown.out + shown.err
    assert "check the server" in shown.out + shown.err
