"""The examples of the README and the guides run as written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import toolwire
from toolwire import Config, Host
from toolwire.config import LedgerConfig

ROOT = Path(__file__).resolve().parents[2]


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def _namespace(code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(code, "docs_example", "exec"), namespace)  # the example text is ours
    return namespace


async def test_readme_tool_plugin_example_registers_and_runs(tmp_path: Path) -> None:
    [plugin_code] = [b for b in _python_blocks(ROOT / "README.md") if "toolwire_tools" in b]
    module = _namespace(plugin_code)
    plugin = type("ReadmePlugin", (), {"toolwire_tools": staticmethod(module["toolwire_tools"])})
    plugin.__name__ = "shout"
    host = Host.load(
        Config(ledger=LedgerConfig(enabled=False, path=str(tmp_path / "l"))), plugins=[plugin]
    )
    assert list(host.tools) == ["shout"]
    shout = host.tools["shout"]
    assert shout.parameters["properties"]["text"]["description"] == "The text to shout."
    result = await shout.invoke({"text": "hi"})
    assert result.content == "HI"


def test_tool_author_guide_example_defines_a_described_tool() -> None:
    [code] = [b for b in _python_blocks(ROOT / "docs" / "tool-authors.md") if "def forecast" in b]
    forecast = _namespace(code.replace("    ...\n", "    return city\n"))["forecast"]
    assert isinstance(forecast, toolwire.Tool)
    props = forecast.parameters["properties"]
    assert props["units"]["description"] == "Metric (°C, km/h) or imperial (°F, mph)."
    assert props["units"]["enum"] == ["metric", "imperial"]
    assert forecast.parameters["required"] == ["city"]
    assert forecast.policy.idempotent


def test_tool_author_guide_settings_class_is_structured_from_the_config() -> None:
    [code] = [
        b for b in _python_blocks(ROOT / "docs" / "tool-authors.md") if "WeatherSettings" in b
    ]
    settings = _namespace(code)["WeatherSettings"]
    assert repr(settings()) == "WeatherSettings(units='metric')"
    assert settings(units="imperial") == settings(units="imperial") != settings()
    assert hash(settings()) == hash(settings())
    structured = Config().structure({"units": "imperial"}, settings, path="$.tools.weather")
    assert structured == settings(units="imperial")


async def test_middleware_example_wraps_execution(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [code] = [b for b in _python_blocks(ROOT / "docs" / "hooks.md") if "log_duration" in b]
    module = _namespace("import time\n" + code)
    plugin = type("Timing", (), {"log_duration": staticmethod(module["log_duration"])})()

    @toolwire.tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    tools = type("Tools", (), {"toolwire_tools": toolwire.hookimpl(lambda settings: [ping])})()
    host = Host.load(
        Config(ledger=LedgerConfig(enabled=False, path=str(tmp_path / "l"))),
        plugins=[tools, plugin],
    )
    from toolwire.loop import call_tool

    result = await call_tool(host, "ping", {})
    assert result.content == "pong"
    assert capsys.readouterr().out.startswith("ping ")


async def test_middleware_adjusting_arguments_example(tmp_path: Path) -> None:
    [code] = [b for b in _python_blocks(ROOT / "docs" / "hooks.md") if "AdjustArguments" in b]
    module = _namespace("import toolwire\n" + code)
    plugin = type("Staff", (), {"mw": staticmethod(module["mail_to_staff_only"])})()
    sent: list[str] = []

    @toolwire.tool
    def send_mail(to: str, text: str) -> str:
        """Send mail."""
        sent.append(to)
        return "sent"

    tools = type("Tools", (), {"toolwire_tools": toolwire.hookimpl(lambda settings: [send_mail])})()
    host = Host.load(
        Config(ledger=LedgerConfig(enabled=False, path=str(tmp_path / "l"))),
        plugins=[tools, plugin],
    )
    from toolwire.loop import ToolCallingLoop
    from toolwire.testing import ScriptedModel, tool_call

    call = tool_call("send_mail", {"to": "someone@elsewhere.org", "text": "hi"})
    run = await ToolCallingLoop(host, adapter=ScriptedModel(script=[[call], "ok"])).run("go")
    assert run.stop_reason == "answered"
    assert sent == ["desk@example.com"]
    [adjusted] = [e for e in run.events if e.kind == "arguments_adjusted"]
    assert adjusted.reason == "staff only"


def test_tool_author_testing_example_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    [code] = [b for b in _python_blocks(ROOT / "docs" / "tool-authors.md") if "ScriptedModel" in b]
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    _namespace(code)  # asserts inside; asyncio.run drives it


def test_tool_author_normaliser_example_runs() -> None:
    [code] = [
        b for b in _python_blocks(ROOT / "docs" / "tool-authors.md") if "normalize_schema" in b
    ]
    namespace = _namespace(code)
    assert namespace["measure"].parameters["properties"]["size"] == {"type": "number"}
    assert len(namespace["notes"]) == 4


def _tool_author_block(marker: str) -> dict[str, Any]:
    [code] = [b for b in _python_blocks(ROOT / "docs" / "tool-authors.md") if marker in b]
    return _namespace(code)


def test_tool_author_named_tool_example_offers_what_the_run_names() -> None:
    from toolwire import OfferRequest
    from toolwire.messages import UserMessage

    namespace = _tool_author_block("def offer_when_asked")
    namespace["mentions_a_date"] = lambda messages: False
    offer = namespace["offer_when_asked"]

    @toolwire.tool
    def today() -> str:
        """Today's date."""
        return "2025-01-01"

    def request(chosen: str | None) -> OfferRequest:
        return OfferRequest(
            run_id="r", round=1, messages=(UserMessage("hi"),), api="x", chosen_tool=chosen
        )

    assert offer(today, request(None)) is None
    assert offer(today, request("today")) == today.function_spec()


async def test_sandbox_example_runs_code_in_a_limited_child(tmp_path: Path) -> None:
    from toolwire.loop import call_tool

    module = _tool_author_block("def sandbox(")
    run_python = module["run_python"]
    tools = type("Tools", (), {"toolwire_tools": toolwire.hookimpl(lambda settings: [run_python])})
    sandbox = type("Sandbox", (), {"sandbox": staticmethod(module["sandbox"])})
    config = Config(ledger=LedgerConfig(enabled=False, path=str(tmp_path / "l")))
    host = Host.load(config, plugins=[tools(), sandbox()])
    result = await call_tool(host, "run_python", {"code": "print(6 * 7)"})
    assert (result.status.value, result.content) == ("ok", "42\n")
    result = await call_tool(host, "run_python", {"code": "import os; print(dict(os.environ))"})
    assert "HOME" not in (result.content or "")  # no environment reaches the child
    result = await call_tool(host, "run_python", {"code": "data = bytearray(2 * 1024**3)"})
    assert result.status.value == "error"
    assert "MemoryError" in result.model_text()  # the memory limit held
    without = Host.load(config, plugins=[tools()])
    result = await call_tool(without, "run_python", {"code": "print(1)"})
    assert result.status.value == "blocked"  # no sandbox: the tool refuses to run


async def test_path_arguments_example_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolwire.loop import call_tool

    read_text = _tool_author_block("path_arguments")["read_text"]
    (tmp_path / "a.txt").write_text("inside", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    tools = type("Tools", (), {"toolwire_tools": toolwire.hookimpl(lambda settings: [read_text])})
    host = Host.load(
        Config(ledger=LedgerConfig(enabled=False, path=str(tmp_path / "l"))), plugins=[tools()]
    )
    assert (await call_tool(host, "read_text", {"path": "a.txt"})).content == "inside"
    refused = await call_tool(host, "read_text", {"path": "../a.txt"})
    assert refused.status.value == "blocked"
    assert "outside the allowed roots" in refused.model_text()


async def test_the_run_json_example_shows_what_a_run_writes(tmp_path: Path) -> None:
    import typing

    from toolwire.loop import Outcome
    from toolwire.testing import ScriptedModel

    guide = (ROOT / "docs" / "user-guide.md").read_text(encoding="utf-8")
    example = guide.split("`toolwire run --json` prints the run:", 1)[1].split("```", 2)[1]
    shown = re.findall(r'"outcome": "(\w+)"', example)
    listed = re.findall(r"`(\w+)`", guide.split("A record's `outcome` says", 1)[1].split("\n\n")[0])
    assert set(typing.get_args(Outcome)) <= set(listed)

    @toolwire.tool(side_effects=["read_only"])
    def calculator(expression: str) -> str:
        """Calculate.

        Args:
            expression: What to calculate.
        """
        return "434"

    host = Host.load(Config(ledger=LedgerConfig(enabled=False, path=str(tmp_path / "l"))))
    host.add_tool(calculator)
    model = ScriptedModel(
        script=[{"tool_calls": [{"name": "calculator", "arguments": {"expression": "1"}}]}, "434."]
    )
    async with host:
        run = await toolwire.ToolCallingLoop(host, adapter=model).run("go")
    written = run.to_json()
    assert [record["outcome"] for record in written["tool_calls"]] == shown == ["executed"]
    for key in re.findall(r'"(\w+)":', example.split('"messages"')[0]):
        assert key in written, key
