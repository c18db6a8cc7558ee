"""``toolwire run`` chooses per command what the config sets: the provider block, the model,
the system prompt, the tools, the tool choice and request options."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from toolwire.testing import FakeOpenAIChatServer

pytest.importorskip("toolwire_basics", reason="needs toolwire-basics installed")
pytest.importorskip("toolwire_openai", reason="needs toolwire-openai installed")


def _config(tmp_path: Path, base_url: str, *, offer: str = "always") -> Path:
    path = tmp_path / "toolwire.toml"
    path.write_text(
        '[plugins]\nenable = ["basics", "openai"]\n'
        f'[tools.basics]\noffer = "{offer}"\n'
        f'[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n'
        '[provider]\nadapter = "openai-chat"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "from-provider"\napi_key_env = "RUN_OPTIONS_KEY"\n'
        f'[provider.local]\nbase_url = "{base_url}"\nmodel = "from-local"\ntemperature = 0.1\n',
        encoding="utf-8",
    )
    return path


async def _toolwire(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "toolwire",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "RUN_OPTIONS_KEY": "k"},
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_every_choice_reaches_the_request(tmp_path: Path) -> None:
    call = {"tool_calls": [{"name": "calculator", "arguments": {"expression": "6 * 7"}}]}
    async with FakeOpenAIChatServer([call, "42."]) as server:
        config = _config(tmp_path, server.base_url)
        code, out, err = await _toolwire(
            "--config", str(config), "run", "What is 6 * 7?",
            "--provider", "local",
            "-m", "picked-model",
            "--system", "Answer in one word.",
            "-T", "calculator",
            "--tool-choice", "calculator",
            "-o", "seed=7",
            "-o", "temperature=0.5",
            "-o", "user=ada",
        )  # fmt: skip
        assert code == 0, err
        assert "42." in out
        first, second = server.bodies
    assert first["model"] == "picked-model"
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][0]["content"].startswith("Answer in one word.")
    assert [t["function"]["name"] for t in first["tools"]] == ["calculator"]
    assert first["tool_choice"] == {"type": "function", "function": {"name": "calculator"}}
    assert (first["seed"], first["temperature"], first["user"]) == (7, 0.5, "ada")
    assert second["tool_choice"] == "auto"  # a named choice holds for the first round only


async def test_a_named_tool_is_offered_when_the_words_would_not_call_for_it(
    tmp_path: Path,
) -> None:
    # The basics tools offer themselves by relevance: the calculator's test does not pass for
    # a question about the time, but the person named it.
    call = {"tool_calls": [{"name": "calculator", "arguments": {"expression": "6 * 7"}}]}
    async with FakeOpenAIChatServer([call, "42."]) as server:
        config = _config(tmp_path, server.base_url, offer="relevant")
        code, out, err = await _toolwire(
            "--config", str(config), "run", "--provider", "local",
            "--tool-choice", "calculator", "what time is it in Tokyo",
        )  # fmt: skip
        assert code == 0, out + err
        assert "42." in out
        first, second = server.bodies
    assert first["tool_choice"] == {"type": "function", "function": {"name": "calculator"}}
    assert [t["function"]["name"] for t in first["tools"]] == ["calculator", "current_time"]
    # The history calls the calculator: it stays offered for the run, forced no longer.
    assert [t["function"]["name"] for t in second["tools"]] == ["calculator", "current_time"]
    assert second["tool_choice"] == "auto"


@pytest.mark.parametrize(
    ("option", "words"),
    [
        (["--provider", "cloud"], "--provider 'cloud': no [provider.cloud] table in the config"),
        (["--provider", "cloud"], "named providers: local"),
        (["-o", "tool_choice=none"], "$.provider.options.tool_choice"),
        (["-o", "tool_choice=none"], "choose one run's with toolwire run -T and --tool-choice"),
        (["-o", "temperature=hot"], "$.provider.temperature = 'hot'"),
        (["-o", "temperature=7"], "expected a number from 0 to 2"),
        (["-o", "temperature"], "expected KEY=VALUE"),
        (["-T", "no_such_tool"], "no_such_tool"),
    ],
)
async def test_bad_choices_are_refused_naming_the_option(
    tmp_path: Path, option: list[str], words: str
) -> None:
    config = str(_config(tmp_path, "http://127.0.0.1:9/v1"))
    code, _, err = await _toolwire("--config", config, "run", "hi", *option)
    assert code == 2
    assert words in err


async def test_a_provider_no_plugin_provides_is_refused_naming_the_adapters(tmp_path: Path) -> None:
    config = _config(tmp_path, "http://127.0.0.1:9/v1")
    config.write_text(config.read_text().replace('"openai-chat"', '"martian"'), encoding="utf-8")
    code, out, err = await _toolwire("--config", str(config), "run", "hi")
    assert (code, out) == (2, "")
    assert "toolwire: no provider adapter named 'martian' is registered" in err
    assert "openai-chat" in err  # among the registered ones
    assert "Traceback" not in err
