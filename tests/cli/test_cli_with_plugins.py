"""The CLI with real installed plugins: tools show for every wire, doctor, tools call, run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolwire.cli import main

pytest.importorskip("toolwire_basics", reason="needs toolwire-basics installed")
pytest.importorskip("toolwire_openai", reason="needs toolwire-openai installed")
pytest.importorskip("toolwire_anthropic", reason="needs toolwire-anthropic installed")
pytest.importorskip("toolwire_gemini", reason="needs toolwire-gemini installed")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolwire.toml").write_text(
        '[plugins]\nenable = ["basics", "openai", "anthropic", "gemini"]\n'
        '[tools.basics]\noffer = "always"\n'
        f'[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n',
        encoding="utf-8",
    )
    return tmp_path


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> object:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_show_openai_chat_is_the_wire_tool(workdir: Path, capsys: pytest.CaptureFixture[str]):
    [tool] = _json(capsys, "tools", "show", "calculator", "--wire", "openai-chat")  # type: ignore[misc]
    assert tool["type"] == "function"
    assert tool["function"]["name"] == "calculator"
    assert "expression" in tool["function"]["parameters"]["properties"]


def test_show_responses_is_flat(workdir: Path, capsys: pytest.CaptureFixture[str]):
    [tool] = _json(capsys, "tools", "show", "calculator", "--wire", "openai-responses")  # type: ignore[misc]
    assert tool["type"] == "function"
    assert tool["name"] == "calculator"
    assert "function" not in tool


def test_show_anthropic_uses_input_schema(workdir: Path, capsys: pytest.CaptureFixture[str]):
    [tool] = _json(capsys, "tools", "show", "calculator", "--wire", "anthropic-messages")  # type: ignore[misc]
    assert set(tool) >= {"name", "description", "input_schema"}


def test_show_gemini_is_a_function_declaration_in_its_schema_subset(
    workdir: Path, capsys: pytest.CaptureFixture[str]
):
    [tool] = _json(capsys, "tools", "show", "calculator", "--wire", "gemini")  # type: ignore[misc]
    [declaration] = tool["functionDeclarations"]
    assert declaration["name"] == "calculator"
    assert declaration["parameters"]["type"] == "OBJECT"
    assert declaration["parameters"]["properties"]["expression"]["type"] == "STRING"


def test_the_wire_choices_are_the_enabled_adapters(
    workdir: Path, capsys: pytest.CaptureFixture[str]
):
    assert main(["tools", "show", "calculator", "--wire", "bedrock"]) == 1
    err = capsys.readouterr().err
    assert "no provider adapter named 'bedrock' is registered" in err
    for api in ("openai-chat", "openai-responses", "anthropic-messages", "gemini"):
        assert api in err
    config = workdir / "toolwire.toml"
    config.write_text(config.read_text().replace(', "gemini"]', "]"), encoding="utf-8")
    assert main(["tools", "show", "calculator", "--wire", "gemini"]) == 1
    assert "no provider adapter named 'gemini'" in capsys.readouterr().err


@pytest.mark.parametrize("dialect", ["json", "xml", "ptype", "python", "typescript"])
def test_show_prompted_prints_the_system_prompt_text(
    workdir: Path, capsys: pytest.CaptureFixture[str], dialect: str
):
    assert main(["tools", "show", "calculator", "--wire", "prompted", "--dialect", dialect]) == 0
    text = capsys.readouterr().out
    assert "calculator" in text
    assert "expression" in text


def test_show_prompted_uses_the_tools_own_dialect(
    workdir: Path, capsys: pytest.CaptureFixture[str]
):
    config = workdir / "toolwire.toml"
    config.write_text(
        config.read_text() + '[provider.tool_dialects]\ncalculator = "typescript"\n',
        encoding="utf-8",
    )
    assert main(["tools", "show", "calculator", "--wire", "prompted"]) == 0
    assert "in TypeScript syntax" in capsys.readouterr().out
    assert main(["tools", "show", "calculator", "--wire", "prompted", "--dialect", "xml"]) == 0
    assert "an element named after the tool" in capsys.readouterr().out


def test_show_prompted_says_how_many_calls_a_run_asks_for(
    workdir: Path, capsys: pytest.CaptureFixture[str]
):
    assert main(["tools", "show", "calculator", "--wire", "prompted"]) == 0
    assert "Make at most one call per reply." in capsys.readouterr().out
    config = workdir / "toolwire.toml"
    config.write_text(config.read_text() + "[loop]\nconcurrency = 2\n", encoding="utf-8")
    assert main(["tools", "show", "calculator", "--wire", "prompted"]) == 0
    assert "You may make several calls in one reply" in capsys.readouterr().out


def test_strict_projection_when_the_host_binds_output(
    workdir: Path, capsys: pytest.CaptureFixture[str]
):
    config = workdir / "toolwire.toml"
    config.write_text(
        config.read_text()
        + '[provider]\nadapter = "openai-chat"\nenforces_strict_tool_schemas = true\n'
    )
    [tool] = _json(capsys, "tools", "show", "convert_units", "--wire", "openai-chat")  # type: ignore[misc]
    function = tool["function"]
    assert function.get("strict") is True
    params = function["parameters"]
    assert params["additionalProperties"] is False
    assert sorted(params["required"]) == sorted(params["properties"])


def test_doctor_lints_every_tool(workdir: Path, capsys: pytest.CaptureFixture[str]):
    config = workdir / "toolwire.toml"
    config.write_text(config.read_text() + '[provider]\nadapter = "openai-chat"\nmodel = "m"\n')
    report = _json(capsys, "doctor")
    assert isinstance(report, dict)
    names = {t["name"] for t in report["tools"]}
    assert {"calculator", "convert_units", "current_time", "convert_time"} <= names
    assert all(isinstance(t["findings"], list) for t in report["tools"])
    assert main(["doctor"]) == 0
    assert "tool calculator [basics]" in capsys.readouterr().out


def test_tools_call_ok_and_refused(workdir: Path, capsys: pytest.CaptureFixture[str]):
    assert (
        main(["tools", "call", "calculator", "--args", '{"expression": "2480 * 17.5 / 100"}']) == 0
    )
    assert capsys.readouterr().out.strip().endswith("434")
    assert main(["tools", "call", "calculator", "--args", '{"expression": "__import__(1)"}']) == 1
    assert capsys.readouterr().err.startswith("error: ")
    assert main(["tools", "call", "calculator", "--args", "[1]"]) == 2
    assert "--args must be a JSON object" in capsys.readouterr().err


def test_run_with_the_scripted_model_calls_every_offered_tool(
    workdir: Path, capsys: pytest.CaptureFixture[str]
):
    config = workdir / "toolwire.toml"
    config.write_text(
        config.read_text() + '[provider]\nadapter = "scripted"\n[tools]\nenable = ["calculator"]\n'
    )
    run = _json(capsys, "run", "What is 2 + 2?")
    assert isinstance(run, dict)
    assert run["stop_reason"] == "answered"
    assert [c["call"]["name"] for c in run["tool_calls"]] == ["calculator"]


def test_show_for_a_wire_whose_plugin_is_not_enabled_names_the_plugin(
    workdir: Path, capsys: pytest.CaptureFixture[str]
):
    config = workdir / "toolwire.toml"
    config.write_text(config.read_text().replace('"basics", "openai", "anthropic"', '"basics"'))
    assert main(["tools", "show", "calculator", "--wire", "openai-responses"]) == 1
    err = capsys.readouterr().err
    assert "the plugin 'openai' (toolwire-openai " in err
    assert 'installed but not enabled: add "openai" to [plugins] enable' in err
    assert main(["tools", "show", "calculator", "--wire", "anthropic-messages"]) == 1
    assert "the plugin 'anthropic' (toolwire-anthropic " in capsys.readouterr().err
