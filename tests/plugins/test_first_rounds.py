"""A run's first rounds do the work of any other, streamed or not: once the host is made ready
(as `toolwire run` makes it), no round imports a module, compiles code (a class's generated
methods, a named tuple, a validator), makes a class or compiles a regular expression."""

from __future__ import annotations

import builtins
import importlib
import sys
from collections.abc import Callable
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
# Where a pattern the `re` module's cache has not seen is compiled.
RE_COMPILER = importlib.import_module("re._compiler")


@toolwire.tool(side_effects="read_only", idempotent=True)
def add_one(
    expression: Annotated[str, {"pattern": "[0-9]", "maxLength": 40}, "A number."],
) -> str:
    """Add one to a number."""
    return str(int(expression) + 1)


class _Made:
    """What the process makes once the first request has arrived: each entry names what was
    made (``"compile"``, ``"exec"``, ``"eval"``, ``"class"``, ``"regex"``, ``"schema"``) and the
    thing."""

    def __init__(self) -> None:
        self.open = False
        self.made: list[tuple[str, str]] = []

    def counting(self, kind: Callable[[Any], tuple[str, str]], original: Callable[..., Any]) -> Any:
        def made(*args: Any, **kwargs: Any) -> Any:
            if self.open:
                self.made.append(kind(args))
            return original(*args, **kwargs)

        return made


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    "server_class",
    [FakeOpenAIChatServer, FakeOpenAIResponsesServer, FakeAnthropicServer, FakeGeminiServer],
)
async def test_no_round_imports_compiles_or_makes_what_a_later_round_would_not(
    server_class: Any, stream: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules: list[frozenset[str]] = []
    made = _Made()

    def respond(request: Any) -> Any:
        modules.append(frozenset(sys.modules))
        made.open = True
        if len(modules) <= ROUNDS:
            return tool_call("add_one", {"expression": str(len(modules))})
        return "done"

    from toolwire.tools import _validation

    monkeypatch.setattr(_validation, "_compiled", {})  # no validator of an earlier test

    async with server_class(respond) as server:
        ledger = {"path": str(tmp_path / "ledger.sqlite3")}
        config = fake_config(server, ledger=ledger, provider={"stream": stream})
        host = Host.load(config, plugins=ADAPTERS)
        host.add_tool(add_one)
        try:
            await ready_for_runs(host)
            # Code compiled from text (attrs' and dataclasses' generated methods, named
            # tuples, forward references), classes made, patterns and schemas compiled.
            for name, kind in [
                ("compile", lambda a: ("compile", str(a[1]))),
                ("exec", lambda a: ("exec", str(a[0])[:80])),
                ("eval", lambda a: ("eval", str(a[0])[:80])),
                ("__build_class__", lambda a: ("class", str(a[1]))),
            ]:
                monkeypatch.setattr(builtins, name, made.counting(kind, getattr(builtins, name)))
            regex = made.counting(lambda a: ("regex", repr(a[0])), RE_COMPILER.compile)
            monkeypatch.setattr(RE_COMPILER, "compile", regex)
            schema = made.counting(lambda a: ("schema", repr(a[0])), fastjsonschema.compile)
            monkeypatch.setattr(fastjsonschema, "compile", schema)
            run = await host.run("Add one, three times.")
        finally:
            made.open = False
            monkeypatch.undo()
            await host.aclose()
        assert [server.wants_stream(r) for r in server.requests] == [stream] * (ROUNDS + 1)
    assert run.stop_reason == "answered", run.detail
    assert [r.result.model_text() for r in run.tool_calls if r.result] == ["2", "3", "4"]
    assert len(modules) == ROUNDS + 1
    assert [sorted(later - modules[0]) for later in modules[1:]] == [[]] * ROUNDS
    assert made.made == []
