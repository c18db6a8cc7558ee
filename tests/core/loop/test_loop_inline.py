"""A sync tool whose policy says ``inline`` runs on the event loop's thread, and keeps everything
a call in a worker thread has: context variables, progress, cancellation before it starts,
failures as results, and the ledger's ``started`` row committed before it runs. Each behaviour
is checked on both paths."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from pathlib import Path

import pytest
from loop_support import assert_no_orphans, events_of, make_host, result_texts, run_script
from sqlite_files import sqlite_file

import toolwire
from toolwire.testing import tool_call
from toolwire.tools import ToolContext

PATHS = pytest.mark.parametrize("inline", [True, False], ids=["inline", "worker"])
REQUEST = contextvars.ContextVar("REQUEST", default="none")


@PATHS
async def test_an_inline_tool_runs_on_the_loops_thread_and_others_in_a_worker(
    tmp_path: Path, inline: bool
) -> None:
    threads: list[int] = []

    @toolwire.tool(inline=inline)
    def where() -> str:
        """Note the thread."""
        threads.append(threading.get_ident())
        return "noted"

    run = await run_script(make_host(tmp_path, [where]), [tool_call("where"), "done"])
    assert result_texts(run) == ["noted"]
    assert (threads == [threading.get_ident()]) is inline


@PATHS
async def test_progress_and_context_variables_are_those_of_a_worker(
    tmp_path: Path, inline: bool
) -> None:
    seen: list[str] = []

    @toolwire.tool(inline=inline)
    def crunch(context: ToolContext) -> str:
        """Crunch numbers."""
        seen.append(REQUEST.get())
        REQUEST.set("set by the tool")  # in a copy of the caller's context: not the caller's
        context.report_progress("halfway", 0.5)
        return "crunched"

    REQUEST.set("r-17")
    run = await run_script(make_host(tmp_path, [crunch]), [tool_call("crunch"), "done"])
    assert seen == ["r-17"]
    assert REQUEST.get() == "r-17"
    [progress] = events_of(run, "tool_progress")
    assert (progress.message, progress.fraction, progress.call_id) == ("halfway", 0.5, "call_1_0")
    assert progress.name == "crunch"


@PATHS
async def test_a_call_after_the_run_was_cancelled_does_not_start(
    tmp_path: Path, inline: bool
) -> None:
    cancel = asyncio.Event()
    ran: list[str] = []

    @toolwire.tool
    async def stop() -> str:
        """Cancel the run."""
        cancel.set()
        return "stopping"

    @toolwire.tool(inline=inline)
    def later() -> str:
        """Run after stop."""
        ran.append("later")
        return "ran"

    host = make_host(tmp_path, [stop, later])
    run = await run_script(host, [[tool_call("stop"), tool_call("later")], "never"], cancel=cancel)
    assert run.stop_reason == "cancelled"
    assert ran == []
    assert result_texts(run)[1].startswith("Cancelled")
    assert_no_orphans(run, allow_deferred=False)


@PATHS
@pytest.mark.parametrize(
    ("raised", "text"),
    [
        (ValueError("bad input"), "Tool execution failed: ValueError: bad input"),
        (GeneratorExit(), "Tool execution failed: GeneratorExit"),
        (StopIteration("no more"), "Tool execution failed: RuntimeError: coroutine raised"),
    ],
    ids=["error", "generator-exit", "stop-iteration"],
)
async def test_what_the_tool_raises_becomes_its_result(
    tmp_path: Path, inline: bool, raised: BaseException, text: str
) -> None:
    @toolwire.tool(inline=inline)
    def fail() -> str:
        """Fail."""
        raise raised

    @toolwire.tool(inline=inline)
    def after() -> str:
        """Run after the failure."""
        return "still running"

    host = make_host(tmp_path, [fail, after])
    run = await run_script(host, [[tool_call("fail"), tool_call("after")], "done"])
    assert run.stop_reason == "answered"
    failed, ok = result_texts(run)
    assert failed.startswith(text)
    assert ok == "still running"


@PATHS
async def test_the_started_row_is_committed_before_an_inline_call_runs(
    tmp_path: Path, inline: bool
) -> None:
    seen: list[tuple[str, ...]] = []
    db_path = tmp_path / "ledger.sqlite3"

    @toolwire.tool(inline=inline)
    def send(to: str) -> str:
        """Send a message (not idempotent)."""
        with sqlite_file(db_path) as db:
            seen.extend(db.execute("SELECT call_id, state FROM calls").fetchall())
        return "sent"

    run = await run_script(make_host(tmp_path, [send]), [tool_call("send", {"to": "a"}), "ok"])
    assert run.stop_reason == "answered"
    assert seen == [("call_1_0", "started")]
    with sqlite_file(db_path) as db:
        assert list(db.execute("SELECT call_id, state FROM calls")) == [("call_1_0", "settled")]
