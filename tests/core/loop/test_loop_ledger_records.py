"""Run records in the ledger: append-only rows, the same JSON back, schema versions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from loop_support import make_host, scripted_loop
from sqlite_files import sqlite_file

import toolwire
from toolwire.loop import Approve, Ledger, LedgerError, Run
from toolwire.loop._journal import LedgerCorrupt, RunJournal
from toolwire.loop._ledger_store import SCHEMA_VERSION
from toolwire.messages import ToolResultMessage, UserMessage
from toolwire.testing import tool_call
from toolwire.tools import ToolResult

# The schema toolwire wrote before run records were split into rows (version 1, no user_version).
SCHEMA_1 = """
CREATE TABLE runs (run_id TEXT PRIMARY KEY, snapshot TEXT NOT NULL, updated REAL NOT NULL);
CREATE TABLE calls (
    run_id TEXT NOT NULL, round INTEGER NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL,
    arguments TEXT NOT NULL, idempotent INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('started', 'settled')), result TEXT,
    started REAL NOT NULL, settled REAL, PRIMARY KEY (run_id, round, call_id)
);
"""


def _tools(log: list[str]) -> list[toolwire.Tool]:
    @toolwire.tool(allow_duplicates=True)
    def note(text: str) -> str:
        """Write a note."""
        log.append(text)
        return f"noted {text}"

    @toolwire.tool(requires_approval=True)
    def send(to: str) -> str:
        """Send a message."""
        log.append(f"send {to}")
        return "sent"

    return [note, send]


SCRIPT = [
    *[tool_call("note", {"text": str(i)}) for i in range(5)],
    [tool_call("note", {"text": "x"}), tool_call("send", {"to": "bob"})],
    "done",
]


async def test_the_stored_record_is_the_runs_json(tmp_path: Path) -> None:
    log: list[str] = []
    host = make_host(tmp_path, _tools(log))
    loop, _ = scripted_loop(host, SCRIPT)
    deferred = await loop.run("take notes", system_prompt="be brief")
    assert deferred.stop_reason == "deferred"
    assert loop.ledger is not None
    assert loop.ledger.load_run(deferred.id) == deferred.to_json(events=False)
    done = await loop.resume(deferred, {deferred.deferred[0].call_id: Approve()})
    assert done.stop_reason == "answered"
    assert loop.ledger.load_run(done.id) == done.to_json(events=False)
    assert loop.load(done.id).to_json(events=False) == done.to_json(events=False)
    assert log == ["0", "1", "2", "3", "4", "x", "send bob"]


def test_each_write_carries_only_what_the_run_gained() -> None:
    journal = RunJournal()
    run = Run(id="r", messages=(UserMessage("hi"),), stop_reason="interrupted")
    first = journal.record(run)
    assert [(k, s) for k, s, _ in first.rows] == [("messages", 0)]
    assert first.truncate == ("messages", "tool_calls", "sources")
    journal.remember(first)
    for i in range(1, 200):
        result = ToolResultMessage(call_id=f"c{i}", name="note", result=ToolResult.ok("ok"))
        run = Run(id="r", messages=(*run.messages, result), stop_reason="interrupted")
        record = journal.record(run)
        assert [(k, s) for k, s, _ in record.rows] == [("messages", i)]
        assert record.truncate == ()
        journal.remember(record)
    # A tail replaced (the results after a resumed turn) is written again from where it changed.
    replaced = ToolResultMessage(call_id="c199", name="note", result=ToolResult.ok("again"))
    shorter = Run(id="r", messages=(*run.messages[:150], replaced), stop_reason="interrupted")
    record = journal.record(shorter)
    assert [(k, s) for k, s, _ in record.rows] == [("messages", 150)]
    assert record.truncate == ("messages",)
    journal.forget("r")
    assert len(journal.record(shorter).rows) == 151  # nothing remembered: written whole


async def test_a_ledger_file_of_schema_1_is_migrated_and_still_resumes(tmp_path: Path) -> None:
    log: list[str] = []
    host = make_host(tmp_path / "new", _tools(log))
    loop, _ = scripted_loop(host, SCRIPT)
    deferred = await loop.run("take notes")
    assert deferred.stop_reason == "deferred"
    old = tmp_path / "ledger.sqlite3"  # written the way toolwire wrote schema 1
    with sqlite_file(old) as db:
        db.executescript(SCHEMA_1)
        db.execute(
            "INSERT INTO runs VALUES (?, ?, 0)",
            (deferred.id, json.dumps(deferred.to_json(events=False), ensure_ascii=False)),
        )
        db.execute(
            "INSERT INTO calls VALUES ('other', 1, 'c1', 'send', '{}', 0, 'started', NULL, 1, NULL)"
        )
    host = make_host(tmp_path, _tools(log))
    loop, _ = scripted_loop(host, SCRIPT)
    loaded = loop.load(deferred.id)
    assert loaded.to_json(events=False) == deferred.to_json(events=False)
    with sqlite_file(old) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert tables == {"calls", "runs", "run_items"}
        assert db.execute("SELECT attempt FROM calls").fetchall() == [(1,)]
    done = await loop.resume(loaded, {loaded.deferred[0].call_id: Approve()})
    assert done.stop_reason == "answered"
    assert log.count("send bob") == 1


SCHEMA_2_CALLS = """
CREATE TABLE calls (
    run_id TEXT NOT NULL, round INTEGER NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL,
    arguments TEXT NOT NULL, idempotent INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('started', 'settled')), result TEXT,
    started REAL NOT NULL, settled REAL, attempt INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (run_id, round, call_id)
);
"""


async def test_a_ledger_file_of_schema_2_is_migrated_and_its_interrupted_call_asks_again(
    tmp_path: Path,
) -> None:
    """A schema 2 file (calls without owners) left by a process killed while the approved
    ``send`` ran: migrated in place, the call is interrupted (no owner holds it) and runs
    again on a decision given on that request."""
    log: list[str] = []
    loop, _ = scripted_loop(make_host(tmp_path, _tools(log)), SCRIPT)
    deferred = await loop.run("take notes")
    [request] = deferred.deferred
    assert loop.ledger is not None
    loop.ledger.close()
    path = tmp_path / "ledger.sqlite3"
    with sqlite_file(path) as db:
        db.execute("DROP TABLE calls")
        db.executescript(SCHEMA_2_CALLS)
        db.execute("ALTER TABLE runs DROP COLUMN version")
        db.execute(
            "INSERT INTO calls VALUES (?, 6, ?, 'send', '{\"to\": \"bob\"}', 0, 'started', "
            "NULL, 1, NULL, 1)",
            (deferred.id, request.call_id),
        )
        db.execute("PRAGMA user_version = 2")
    loop, _ = scripted_loop(make_host(tmp_path, _tools(log)), SCRIPT)
    loaded = loop.load(deferred.id)
    with sqlite_file(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert db.execute("SELECT state, attempt, owner, lease FROM calls").fetchall() == [
            ("started", 1, None, None)
        ]
    [interrupted] = loaded.deferred
    assert (interrupted.reason, interrupted.attempt) == ("interrupted", 2)
    assert interrupted.detail.startswith("approved, send started at ")
    stale = await loop.resume(deferred, {request.call_id: Approve()})
    assert stale.stop_reason == "deferred"
    assert log.count("send bob") == 0
    done = await loop.resume(loaded, {request.call_id: Approve()})
    assert done.stop_reason == "answered"
    assert log.count("send bob") == 1


def test_a_ledger_file_from_a_newer_toolwire_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    with sqlite_file(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(LedgerError, match=r"schema version 99, newer than this toolwire knows"):
        Ledger(path).load_run("r")


async def test_a_run_with_missing_rows_is_reported_not_half_loaded(tmp_path: Path) -> None:
    log: list[str] = []
    host = make_host(tmp_path, _tools(log))
    loop, _ = scripted_loop(host, SCRIPT)
    run = await loop.run("take notes")
    with sqlite_file(tmp_path / "ledger.sqlite3") as db:
        db.execute("DELETE FROM run_items WHERE kind = 'messages' AND seq = 3")
    with pytest.raises(LedgerCorrupt, match=rf"holds \d+ of the \d+ messages of run '{run.id}'"):
        loop.load(run.id)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("UPDATE runs SET head = 'not json'", r"the head of run '.*' in the ledger is not valid"),
        ("UPDATE runs SET head = '[1, 2]'", r"the head of run '.*' in the ledger is not a JSON"),
        ("UPDATE run_items SET item = '{' WHERE seq = 1", r"messages item 1 of run '.*' in the"),
        ("UPDATE runs SET head = '{}'", r"holds run '.*' in a form this toolwire cannot read"),
    ],
)
async def test_a_damaged_record_is_reported_naming_the_run(
    tmp_path: Path, change: str, message: str
) -> None:
    host = make_host(tmp_path, _tools([]))
    loop, _ = scripted_loop(host, SCRIPT)
    run = await loop.run("take notes")
    with sqlite_file(tmp_path / "ledger.sqlite3") as db:
        db.execute(change)
    with pytest.raises(LedgerCorrupt, match=message):
        loop.load(run.id)
