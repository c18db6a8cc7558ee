"""Shared pieces of the loop tests: hosts built from tools, scripted runs, transcript checks."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

import toolwire
from toolwire import Config, Host
from toolwire.config import (
    LedgerConfig,
    LoopConfig,
    PolicyConfig,
    ProfileConfig,
    ProviderConfig,
    ToolsConfig,
    TraceConfig,
)
from toolwire.loop import Run, ToolCallingLoop
from toolwire.messages import AssistantMessage, ToolResultMessage
from toolwire.testing import ScriptedModel, ScriptTurn


def plugin(name: str = "loop_tests", **hooks: Any) -> types.SimpleNamespace:
    """A plugin object whose attributes are the given hook functions, marked as hookimpls."""
    marked = {}
    for hook_name, function in hooks.items():
        if not hasattr(function, "toolwire_impl"):
            function = toolwire.hookimpl(function)
        marked[hook_name] = function
    return types.SimpleNamespace(__name__=name, **marked)


def tools_plugin(*tools: toolwire.Tool, name: str = "loop_tests") -> types.SimpleNamespace:
    """A plugin registering ``tools``."""
    return plugin(name, toolwire_tools=lambda settings: list(tools))


def make_host(
    tmp_path: Path,
    tools: Iterable[toolwire.Tool] = (),
    *,
    plugins: Sequence[object] = (),
    loop: LoopConfig | None = None,
    policy: PolicyConfig | None = None,
    provider: ProviderConfig | None = None,
    tools_config: ToolsConfig | None = None,
    profiles: dict[str, ProfileConfig] | None = None,
    ledger: bool = True,
    trace: str | None = None,
) -> Host:
    """A host with the tools registered by one plugin, the ledger under ``tmp_path``."""
    config = Config(
        loop=loop or LoopConfig(),
        policy=policy or PolicyConfig(),
        provider=provider or ProviderConfig(),
        tools=tools_config or ToolsConfig(),
        profiles=profiles or {},
        ledger=LedgerConfig(enabled=ledger, path=str(tmp_path / "ledger.sqlite3")),
        trace=TraceConfig(path=trace),
    )
    return Host.load(config=config, plugins=[tools_plugin(*tools), *plugins])


def scripted_loop(
    host: Host,
    script: Sequence[ScriptTurn] | Callable[..., Any] | None,
    **kwargs: Any,
) -> tuple[ToolCallingLoop, ScriptedModel]:
    """A loop over ``host`` driven by a scripted model."""
    model = ScriptedModel(script=script)
    return ToolCallingLoop(host, adapter=model, **kwargs), model


async def run_script(
    host: Host,
    script: Sequence[ScriptTurn] | Callable[..., Any] | None,
    prompt: str = "go",
    **options: Any,
) -> Run:
    """Run ``prompt`` against a scripted model."""
    loop, _ = scripted_loop(host, script)
    return await loop.run(prompt, **options)


def assert_no_orphans(run: Run, *, allow_deferred: bool = True) -> None:
    """Every local tool call of every turn has exactly one result, right after its turn, in
    call order; only the run's deferred calls may lack one."""
    deferred = {d.call_id for d in run.deferred} if allow_deferred else set()
    messages = list(run.messages)
    for index, message in enumerate(messages):
        if not isinstance(message, AssistantMessage):
            continue
        calls = [c for c in message.tool_calls if not c.provider_executed]
        following: list[ToolResultMessage] = []
        for later in messages[index + 1 :]:
            if not isinstance(later, ToolResultMessage):
                break
            following.append(later)
        expected = [c.id for c in calls if c.id not in deferred]
        assert [r.call_id for r in following] == expected, (
            f"turn {index}: calls {[c.id for c in calls]}, results {[r.call_id for r in following]}"
        )


def kinds(run: Run) -> list[str]:
    """The kinds of the run's events, in order."""
    return [e.kind for e in run.events]


def events_of(run: Run, kind: str) -> list[Any]:
    """The run's events of one kind."""
    return [e for e in run.events if e.kind == kind]


def result_texts(run: Run) -> list[str]:
    """The model text of every tool result of the run, in order."""
    return [m.result.model_text() for m in run.messages if isinstance(m, ToolResultMessage)]


def evolve_loop(**changes: Any) -> LoopConfig:
    """A ``[loop]`` section with changes."""
    return attrs.evolve(LoopConfig(), **changes)


def plain_tool(name: str, **kwargs: Any) -> toolwire.Tool:
    """A tool ``name`` without parameters that answers "NAME done" (``kwargs``: more of
    :meth:`~toolwire.Tool.from_schema`'s options, a resolver say)."""
    return toolwire.Tool.from_schema(
        name=name,
        description=f"The {name} tool.",
        parameters={"type": "object", "properties": {}},
        handler=lambda arguments: f"{name} done",
        **kwargs,
    )


def names_of(functions: Iterable[toolwire.FunctionSpec]) -> list[str]:
    """The names of ``functions``, in order (what a request offered)."""
    return [f.name for f in functions]
