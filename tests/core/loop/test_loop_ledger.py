"""The tool-effect ledger: rows, snapshots, and resuming after the process was killed."""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from loop_crash_tools import RUN_ID, SCRIPT, make_config, plugin
from loop_support import assert_no_orphans, make_host, run_script
from sqlite_files import sqlite_file
from waiting import until

import toolwire
from toolwire import Host
from toolwire.loop import Approve, ToolCallingLoop, default_ledger_path
from toolwire.testing import ScriptedModel, tool_call

CHILD = Path(__file__).with_name("loop_crash_child.py")


def _effects(workdir: Path) -> list[str]:
    log = workdir / "effects.log"
    return log.read_text().split() if log.exists() else []


def test_resume_after_the_process_was_killed_between_started_and_settled(
    tmp_path: Path,
) -> None:
    (tmp_path / "block").write_text("")
    child = subprocess.Popen([sys.executable, str(CHILD), str(tmp_path)], stderr=subprocess.PIPE)
    try:
        started = [tmp_path / "charge.started", tmp_path / "fetch.started"]
        until(lambda: all(p.exists() for p in started), child, what="the blocking calls")
        # pay settled; charge (not idempotent) started; fetch (idempotent) running; note waits.
        time.sleep(0.05)
    finally:
        child.kill()
        child.wait()
        assert child.stderr is not None
        child.stderr.close()
    assert _effects(tmp_path) == ["pay", "charge", "fetch"]
    (tmp_path / "block").unlink()

    asyncio.run(_resume_in_this_process(tmp_path))


async def _resume_in_this_process(tmp_path: Path) -> None:
    # A new process (this one) resumes the run from the ledger.
    host = Host.load(config=make_config(tmp_path), plugins=[plugin(tmp_path)])
    loop = ToolCallingLoop(host, adapter=ScriptedModel(script=SCRIPT))
    run = loop.load(RUN_ID)
    assert run.stop_reason == "interrupted"
    assert [(d.tool, d.reason) for d in run.deferred] == [("charge", "interrupted")]
    charge_id = run.deferred[0].call_id

    partly = await loop.resume(run)
    # pay was settled: not run again; fetch is idempotent: run again; note never started: run.
    assert _effects(tmp_path) == ["pay", "charge", "fetch", "fetch", "note"]
    assert partly.stop_reason == "deferred"
    assert [d.call_id for d in partly.deferred] == [charge_id]
    outcomes = {r.tool: r.outcome for r in partly.tool_calls}
    assert outcomes == {
        "pay": "recovered",
        "charge": "deferred",
        "fetch": "executed",
        "note": "executed",
    }
    assert_no_orphans(partly)

    done = await loop.resume(partly, {charge_id: Approve()})
    assert _effects(tmp_path) == ["pay", "charge", "fetch", "fetch", "note", "charge"]
    assert done.stop_reason == "answered"
    assert done.text == "All done."
    assert_no_orphans(done, allow_deferred=False)
    assert loop.load(RUN_ID).stop_reason == "answered"


async def test_rows_are_written_before_and_after_a_side_effect(tmp_path: Path) -> None:
    seen: list[tuple[str, ...]] = []
    db_path = tmp_path / "ledger.sqlite3"

    @toolwire.tool
    def send(to: str) -> str:
        """Send a message (not idempotent)."""
        with sqlite_file(db_path) as db:
            seen.extend(db.execute("SELECT call_id, state FROM calls").fetchall())
        return "sent"

    @toolwire.tool(idempotent=True)
    def read(key: str) -> str:
        """Read (idempotent)."""
        return "value"

    host = make_host(tmp_path, [send, read])
    run = await run_script(
        host, [[tool_call("send", {"to": "a"}), tool_call("read", {"key": "k"})], "ok"]
    )
    assert seen == [("call_1_0", "started")]  # durable before the tool ran
    with sqlite_file(db_path) as db:
        rows = sorted(db.execute("SELECT call_id, tool, state, idempotent FROM calls"))
        assert rows == [("call_1_0", "send", "settled", 0), ("call_1_1", "read", "settled", 1)]
        [(head,)] = db.execute("SELECT head FROM runs WHERE run_id = ?", (run.id,))
    assert json.loads(head)["stop_reason"] == "answered"
    assert oct(db_path.stat().st_mode & 0o777) == "0o600"


async def test_a_run_without_side_effects_writes_nothing(tmp_path: Path) -> None:
    @toolwire.tool(idempotent=True)
    def read(key: str) -> str:
        """Read."""
        return "value"

    host = make_host(tmp_path, [read])
    run = await run_script(host, [tool_call("read", {"key": "k"}), "ok"])
    assert run.stop_reason == "answered"
    del host
    gc.collect()
    assert not (tmp_path / "ledger.sqlite3").exists()


async def test_a_ledger_that_cannot_record_refuses_the_call(tmp_path: Path) -> None:
    ran: list[str] = []

    @toolwire.tool
    def act() -> str:
        """Acts."""
        ran.append("x")
        return "acted"

    (tmp_path / "ledger.sqlite3").mkdir()  # a directory where the file should be
    host = make_host(tmp_path, [act])
    run = await run_script(host, [tool_call("act"), "ok"])
    assert ran == []
    assert run.tool_calls[0].result is not None
    assert "tool-effect ledger" in (run.tool_calls[0].result.content or "")


def test_default_ledger_path_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_ledger_path() == tmp_path / "toolwire" / "ledger.sqlite3"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_ledger_path() == tmp_path / "home" / ".local" / "share" / "toolwire" / (
        "ledger.sqlite3"
    )
