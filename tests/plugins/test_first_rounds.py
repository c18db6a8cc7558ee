"""A run's first rounds do the work of any other: once the host is made ready (as `toolwire run`
makes it), no round imports a module, and a tool with a plain schema compiles no validator code."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import fastjsonschema
import pytest
from fake_config import fake_config

import toolwire
import toolwire_anthropic._plugin
import toolwire_gemini._plugin
import toolwire_openai._plugin
from toolwire import Host
from toolwire.host._ready import ready_for_runs
from toolwire.testing import (
    FakeAnthropicServer,
    FakeOpenAIChatServer,
    FakeOpenAIResponsesServer,
    tool_call,
)
from toolwire_gemini.testing import FakeGeminiServer

ADAPTERS = [toolwire_openai._plugin, toolwire_anthropic._plugin, toolwire_gemini._plugin]
ROUNDS = 3


@toolwire.tool(side_effects="read_only", idempotent=True)
def add_one(
    expression: Annotated[str, {"pattern": "[0-9]", "maxLength": 40}, "A number."],
) -> str:
    """Add one to a number."""
    return str(int(expression) + 1)


@pytest.mark.parametrize(
    "server_class",
    [FakeOpenAIChatServer, FakeOpenAIResponsesServer, FakeAnthropicServer, FakeGeminiServer],
)
async def test_no_round_imports_a_module_or_compiles_a_plain_validator(
    server_class: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules: list[frozenset[str]] = []

    def respond(request: Any) -> Any:
        modules.append(frozenset(sys.modules))
        if len(modules) <= ROUNDS:
            return tool_call("add_one", {"expression": str(len(modules))})
        return "done"

    from toolwire.tools import _validation

    monkeypatch.setattr(_validation, "_compiled", {})  # no validator of an earlier test
    compiled: list[Any] = []
    compile_schema = fastjsonschema.compile

    def counting(definition: Any, **options: Any) -> Any:
        compiled.append(definition)
        return compile_schema(definition, **options)

    async with server_class(respond) as server:
        ledger = {"path": str(tmp_path / "ledger.sqlite3")}
        host = Host.load(fake_config(server, ledger=ledger), plugins=ADAPTERS)
        host.add_tool(add_one)
        try:
            await ready_for_runs(host)
            monkeypatch.setattr(fastjsonschema, "compile", counting)
            run = await host.run("Add one, three times.")
        finally:
            await host.aclose()
    assert run.stop_reason == "answered", run.detail
    assert [r.result.model_text() for r in run.tool_calls if r.result] == ["2", "3", "4"]
    assert len(modules) == ROUNDS + 1
    assert [sorted(later - modules[0]) for later in modules[1:]] == [[]] * ROUNDS
    assert compiled == []
