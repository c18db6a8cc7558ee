"""A tool adds its own events to the run's stream (``ToolContext.emit``), from its coroutine or
from the worker thread a plain function runs in."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import attrs
from loop_support import make_host, plugin, scripted_loop

import toolwire
from toolwire.events import Event


@attrs.frozen(kw_only=True)
class RowsFetched(Event):
    """A tool's own event: how many rows a query fetched."""

    call_id: str
    rows: int


@toolwire.tool(side_effects=["read_only"])
async def query(sql: Annotated[str, "The query."], context: toolwire.ToolContext) -> str:
    """Run a query."""
    context.emit(
        RowsFetched(run_id=context.run_id, round=context.round, call_id=context.call_id, rows=3)
    )
    return "3 rows"


@toolwire.tool(side_effects=["read_only"])
def export(table: Annotated[str, "The table."], context: toolwire.ToolContext) -> str:
    """Export a table (a plain function: it runs in a worker thread)."""
    context.emit(
        RowsFetched(run_id=context.run_id, round=context.round, call_id=context.call_id, rows=7)
    )
    return "exported"


async def test_a_tools_events_reach_the_run_its_stream_and_observers(tmp_path: Path) -> None:
    observed: list[Event] = []
    watcher = plugin("watcher", toolwire_event=lambda event: observed.append(event))
    host = make_host(tmp_path, [query, export], plugins=[watcher])
    script = [
        {
            "tool_calls": [
                {"name": "query", "arguments": {"sql": "select 1"}},
                {"name": "export", "arguments": {"table": "t"}},
            ]
        },
        "done",
    ]
    try:
        loop, _ = scripted_loop(host, script)
        stream = loop.stream("go")
        streamed = [event async for event in stream]
    finally:
        await host.aclose()
    assert stream.run is not None
    for events in (stream.run.events, streamed, observed):
        fetched = [e for e in events if isinstance(e, RowsFetched)]
        assert [(e.kind, e.rows, e.round) for e in fetched] == [
            ("rows_fetched", 3, 1),
            ("rows_fetched", 7, 1),
        ]
        calls = [e.call_id for e in events if e.kind == "tool_started"]
        assert [e.call_id for e in fetched] == calls


async def test_emit_outside_a_run_does_nothing() -> None:
    context = toolwire.ToolContext(tool=query, call_id="c", run_id="r", round=0)
    context.emit(RowsFetched(run_id="r", call_id="c", rows=1))
