"""A finished run is freed as soon as nobody uses it: it leaves no reference cycle for the garbage
collector (whose collections would otherwise grow with every run a process makes), and what a
tool emits after its run is gone still reaches the host's observers."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from loop_support import make_host, plugin, scripted_loop

import toolwire
from toolwire.events import Event
from toolwire.loop import ToolCallRecord
from toolwire.messages import AssistantMessage
from toolwire.testing import tool_call
from toolwire.tools import ToolResult

kept: list[toolwire.ToolContext] = []


@toolwire.tool(allow_duplicates=True)
async def add(a: int, b: int, context: toolwire.ToolContext) -> int:
    """Add two integers (keeping the call's context, as a tool's late task would)."""
    kept.append(context)
    return a + b


@attrs.frozen(kw_only=True)
class Late(Event):
    """An event a tool emits after its run ended."""


@pytest.fixture
def collector_saves_garbage() -> Iterator[None]:
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


async def test_a_finished_run_leaves_no_cycle_for_the_collector(
    tmp_path: Path, collector_saves_garbage: None
) -> None:
    script: list[Any] = [
        AssistantMessage(
            parts=tuple(tool_call("add", {"a": r, "b": i}, id=f"c{r}_{i}") for i in range(2))
        )
        for r in range(3)
    ] + ["done"]
    loop, _ = scripted_loop(make_host(tmp_path, [add]), script)
    await loop.run("add numbers")  # the first run makes what the loop keeps for later ones
    loop, _ = scripted_loop(make_host(tmp_path, [add]), script)
    kept.clear()
    gc.collect()
    gc.garbage.clear()
    run = await loop.run("add numbers")
    assert run.stop_reason == "answered", run.detail
    assert len(run.tool_calls) == 6
    del run
    kept.clear()
    gc.collect()
    left = [type(o).__name__ for o in gc.garbage if isinstance(o, ToolCallRecord | ToolResult)]
    assert left == []
    names = {type(o).__name__ for o in gc.garbage}
    assert "RunState" not in names


async def test_an_event_emitted_after_the_run_is_gone_reaches_the_observers(
    tmp_path: Path,
) -> None:
    observed: list[Event] = []
    watcher = plugin("watcher", toolwire_event=lambda event: observed.append(event))
    loop, _ = scripted_loop(
        make_host(tmp_path, [add], plugins=[watcher]), [tool_call("add", {"a": 1, "b": 2}), "ok"]
    )
    kept.clear()
    run = await loop.run("add numbers")
    assert run.stop_reason == "answered"
    context = kept.pop()
    run_id = run.id
    del run
    gc.collect()
    context.emit(Late(run_id=run_id, round=1))
    assert [e for e in observed if isinstance(e, Late)] == [Late(run_id=run_id, round=1)]
