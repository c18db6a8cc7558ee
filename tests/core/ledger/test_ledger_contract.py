"""The ledger contract, run against each backend (SQLite and a real PostgreSQL server)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest
from sqlite_files import sqlite_file

from toolwire.config import LedgerConfig
from toolwire.loop import CallClaimed, Ledger, LedgerError, Run
from toolwire.loop._ledger_store import SCHEMA_VERSION, RunClaimed, StartedRow
from toolwire.messages import ToolResultMessage, UserMessage
from toolwire.tools import ToolResult

RACE_CHILD = Path(__file__).with_name("ledger_race_child.py")
OpenLedger = Callable[[], Ledger]


def _start(ledger: Ledger, call_id: str, run_id: str = "run_1") -> None:
    ledger.started(run_id, 1, call_id, "charge", {"amount": 7}, idempotent=False)


def _settle(ledger: Ledger, call_id: str, text: str, *, idempotent: bool = False) -> None:
    ledger.settled(
        "run_1", 1, call_id, "charge", {"amount": 7}, ToolResult.ok(text), idempotent=idempotent
    )


def test_a_call_goes_from_started_to_settled(open_ledger: OpenLedger) -> None:
    ledger, other = open_ledger(), open_ledger()
    before = time.time()
    _start(ledger, "c1")
    [entry] = other.entries("run_1", 1).values()
    assert (entry.call_id, entry.tool, entry.settled, entry.result) == ("c1", "charge", False, None)
    assert entry.arguments == {"amount": 7}
    assert entry.started_at is not None
    assert before - 1 <= entry.started_at <= time.time() + 1
    _settle(ledger, "c1", "charged")
    assert ledger.pending
    assert not other.entries("run_1", 1)["c1"].settled  # settled rows wait for the next write
    ledger.flush()
    settled = other.entries("run_1", 1)["c1"]
    assert settled.settled
    assert settled.started_at is None
    assert settled.result == ToolResult.ok("charged")


def test_an_idempotent_call_gets_only_a_settled_row(open_ledger: OpenLedger) -> None:
    ledger = open_ledger()
    _settle(ledger, "c1", "read", idempotent=True)
    ledger.flush()
    entry = open_ledger().entries("run_1", 1)["c1"]
    assert entry.settled
    assert entry.idempotent
    assert entry.result == ToolResult.ok("read")


def test_a_call_settles_once(open_ledger: OpenLedger) -> None:
    ledger = open_ledger()
    _start(ledger, "c1")
    _settle(ledger, "c1", "first")
    ledger.flush()
    _settle(ledger, "c1", "second")
    ledger.flush()
    assert open_ledger().entries("run_1", 1)["c1"].result == ToolResult.ok("first")


def test_a_call_started_elsewhere_is_refused_and_nothing_is_committed(
    open_ledger: OpenLedger,
) -> None:
    first, second = open_ledger(), open_ledger()
    _start(first, "c1")
    _start(second, "c0")
    _settle(second, "c0", "done")
    with pytest.raises(CallClaimed, match=r"call 'c1' of run 'run_1' \(round 1, charge\) is "):
        _start(second, "c1")
    assert second.pending  # the settled row of c0 was rolled back with the refused start
    assert not open_ledger().entries("run_1", 1)["c0"].settled
    second.flush()
    assert open_ledger().entries("run_1", 1)["c0"].settled


def test_a_call_that_never_settled_is_taken_over_once(open_ledger: OpenLedger) -> None:
    crashed = open_ledger()
    _start(crashed, "c1")
    crashed.close()  # as its process ending does: it holds the call no more
    one, two = open_ledger(), open_ledger()
    assert not one.entries("run_1", 1)["c1"].settled
    assert not two.entries("run_1", 1)["c1"].settled
    _start(one, "c1")  # a fresh approval, after reading the row
    with pytest.raises(CallClaimed, match=r"already started \(attempt 2\)"):
        _start(two, "c1")  # read the same row: too late
    with pytest.raises(CallClaimed):
        _start(open_ledger(), "c1")  # never read it: no takeover
    _settle(one, "c1", "charged")
    one.flush()
    assert open_ledger().entries("run_1", 1)["c1"].result == ToolResult.ok("charged")


def test_a_call_its_owner_runs_is_running_and_is_not_taken_over(
    open_ledger: OpenLedger,
) -> None:
    owner, other = open_ledger(), open_ledger()
    _start(owner, "c1")
    [entry] = other.entries("run_1", 1).values()
    assert (entry.running, entry.interrupted, entry.attempt) == (True, False, 1)
    with pytest.raises(CallClaimed, match=r"already started \(attempt 1\)"):
        _start(other, "c1")
    _settle(owner, "c1", "charged")
    owner.flush()  # settled: its owner lets it go
    entry = other.entries("run_1", 1)["c1"]
    assert (entry.settled, entry.running) == (True, False)


@pytest.mark.parametrize(("lease", "running"), [(3600.0, True), (-1.0, False)])
def test_an_owner_on_another_machine_holds_a_call_while_its_lease_lasts(
    open_ledger: OpenLedger, lease: float, running: bool
) -> None:
    """Nothing tells whether a process elsewhere lives but the lease it keeps renewing."""
    ledger = open_ledger()
    now = time.time()
    row = StartedRow(
        run_id="run_1",
        round=1,
        call_id="c1",
        tool="charge",
        arguments='{"amount": 7}',
        idempotent=False,
        at=now,
        owner="worker-9/other-boot.1/4242/777",
        lease=now + lease,
    )
    assert ledger.store.start(row, [], None, takeover=None) == (1, None)
    entry = open_ledger().entries("run_1", 1)["c1"]
    assert (entry.running, entry.owner) == (running, "worker-9/other-boot.1/4242/777")
    taker = open_ledger()
    taker.entries("run_1", 1)
    if running:
        with pytest.raises(CallClaimed):
            _start(taker, "c1")
    else:
        assert taker.started("run_1", 1, "c1", "charge", {}, idempotent=False, after=1) == 2


def test_a_former_owner_cannot_settle_a_call_taken_over(open_ledger: OpenLedger) -> None:
    first = open_ledger()
    _start(first, "c1")
    first.close()
    second = open_ledger()
    second.entries("run_1", 1)
    _start(second, "c1")  # attempt 2
    first.settled("run_1", 1, "c1", "charge", {}, ToolResult.ok("late"), idempotent=False)
    first.flush()
    entry = open_ledger().entries("run_1", 1)["c1"]
    assert (entry.settled, entry.attempt, entry.running) == (False, 2, True)
    _settle(second, "c1", "charged")
    second.flush()
    assert open_ledger().entries("run_1", 1)["c1"].result == ToolResult.ok("charged")


def test_a_call_that_asked_while_it_ran_waits_and_starts_again_from_there(
    open_ledger: OpenLedger,
) -> None:
    ledger = open_ledger()
    _start(ledger, "c1")
    ledger.waiting("run_1", 1, "c1", "charge", {"amount": 7})
    assert open_ledger().entries("run_1", 1)["c1"].running  # until committed, it is held
    ledger.flush()
    other = open_ledger()
    entry = other.entries("run_1", 1)["c1"]
    assert (entry.deferred, entry.running, entry.settled, entry.interrupted) == (
        True,
        False,
        False,
        False,
    )
    with pytest.raises(CallClaimed, match="may not start again"):
        other.started("run_1", 1, "c1", "charge", {}, idempotent=False, after=2)
    with pytest.raises(CallClaimed):
        other.started("run_1", 1, "c1", "charge", {}, idempotent=False, after=0)
    assert other.started("run_1", 1, "c1", "charge", {}, idempotent=False, after=1) == 2


def test_a_running_call_keeps_its_lease_alive(ledger_config: LedgerConfig) -> None:
    """The lease keeper renews a held call's lease each third of it (waited for by watching
    the row, for at most a minute)."""
    ledger = Ledger(Ledger.open(ledger_config).store, lease_seconds=0.9)
    try:
        _start(ledger, "c1")
        [first] = ledger.store.calls("run_1", 1)
        deadline = time.monotonic() + 60
        while ledger.store.calls("run_1", 1)[0].lease == first.lease:
            assert time.monotonic() < deadline, "the lease was never renewed"
            time.sleep(0.05)
        assert ledger.store.calls("run_1", 1)[0].lease > first.lease  # type: ignore[operator]
    finally:
        ledger.close()


def test_a_run_written_by_another_process_since_it_was_read_is_not_overwritten(
    open_ledger: OpenLedger,
) -> None:
    """Two processes resuming one run: the view of the one that writes second is refused, and
    how its calls ended is kept all the same."""
    first = Run(id="run_1", messages=(UserMessage("hi"),), stop_reason="deferred")
    open_ledger().save_run(first)
    one, two = open_ledger(), open_ledger()
    assert one.load_run("run_1") == two.load_run("run_1")
    one.save_run(attrs.evolve(first, stop_reason="answered", text="by one"))
    _start(two, "c1")
    _settle(two, "c1", "charged by two")
    with pytest.raises(RunClaimed, match=r"run 'run_1' was written by another process"):
        two.save_run(attrs.evolve(first, stop_reason="answered", text="by two"))
    reader = open_ledger()
    assert reader.load_run("run_1") == attrs.evolve(
        first, stop_reason="answered", text="by one"
    ).to_json(events=False)
    assert reader.entries("run_1", 1)["c1"].result == ToolResult.ok("charged by two")


def test_a_run_record_reads_back_as_the_runs_json(open_ledger: OpenLedger) -> None:
    ledger = open_ledger()
    assert ledger.load_run("run_1") is None
    messages: tuple[UserMessage | ToolResultMessage, ...] = (UserMessage("hi"),)
    run = Run(id="run_1", messages=messages, stop_reason="interrupted")
    for i in range(30):
        _start(ledger, f"c{i}")
        ledger.started("run_1", 1, f"d{i}", "note", {}, idempotent=False, snapshot=run)
        result = ToolResultMessage(call_id=f"c{i}", name="charge", result=ToolResult.ok(str(i)))
        run = Run(id="run_1", messages=(*run.messages, result), stop_reason="interrupted")
        assert open_ledger().load_run("run_1") is not None
    ledger.save_run(run)
    assert open_ledger().load_run("run_1") == run.to_json(events=False)
    # Written again whole by another ledger (a resume elsewhere), shorter: no rows left over.
    shorter = Run(id="run_1", messages=run.messages[:3], stop_reason="deferred", rounds=2)
    open_ledger().save_run(shorter)
    assert open_ledger().load_run("run_1") == shorter.to_json(events=False)


def test_the_runs_stored_among_many_ids_are_found_in_one_query(open_ledger: OpenLedger) -> None:
    ledger = open_ledger()
    asked = [f"run_{i}" for i in range(1200)]  # more than one statement's worth on SQLite
    assert ledger.stored_runs(asked) == set()
    for run_id in ("run_3", "run_777", "run_1199", "elsewhere"):
        ledger.save_run(Run(id=run_id, messages=(UserMessage("hi"),), stop_reason="answered"))
    assert open_ledger().stored_runs(asked) == {"run_3", "run_777", "run_1199"}
    assert open_ledger().stored_runs([]) == set()


def test_the_schema_is_created_on_first_use_with_its_version(
    open_ledger: OpenLedger, backend: str, ledger_config: LedgerConfig
) -> None:
    assert open_ledger().load_run("none") is None
    assert _schema_version(backend, ledger_config) == SCHEMA_VERSION
    open_ledger().load_run("none")  # opened again: nothing to do
    assert _schema_version(backend, ledger_config) == SCHEMA_VERSION


def test_a_schema_from_a_newer_toolwire_is_refused(
    open_ledger: OpenLedger, backend: str, ledger_config: LedgerConfig
) -> None:
    open_ledger().load_run("none")
    _set_schema_version(backend, ledger_config, 99)
    with pytest.raises(LedgerError, match=r"has schema version 99, newer than this toolwire"):
        open_ledger().load_run("none")


@pytest.mark.parametrize(
    ("children", "when"), [(2, "open-first"), (4, "open-at-go")], ids=["open", "fresh"]
)
def test_processes_racing_for_the_same_calls_run_each_once(
    ledger_config: LedgerConfig,
    open_ledger: OpenLedger,
    tmp_path: Path,
    children: int,
    when: str,
) -> None:
    """``fresh``: every process opens the ledger at the same moment, before anyone created it
    (a batch's workers starting together); none may fail to open it."""
    location = ledger_config.url or str(ledger_config.path)
    effects = tmp_path / "effects.log"
    calls = 20
    go = time.time() + 3
    command = [sys.executable, str(RACE_CHILD), location, "run_race", str(calls), str(effects)]
    running = [
        subprocess.Popen([*command, str(go), when], stderr=subprocess.PIPE) for _ in range(children)
    ]
    for child in running:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err.decode()
    lines = effects.read_text().split("\n")[:-1]
    ran = sorted(line.split()[0] for line in lines)
    assert ran == sorted(f"call_{i}" for i in range(calls))  # each exactly once
    entries = open_ledger().entries("run_race", 1)
    assert len(entries) == calls
    assert all(e.settled for e in entries.values())
    for line in lines:
        call_id, pid = line.split()
        assert entries[call_id].result == ToolResult.ok(f"charged by {pid}")


def _schema_version(backend: str, config: LedgerConfig) -> int:
    if backend == "postgresql":
        import psycopg

        assert config.url is not None
        with psycopg.connect(config.url) as db:
            row = db.execute("SELECT max(version) FROM toolwire_ledger_schema").fetchone()
            assert row is not None
            return int(row[0])
    assert config.path is not None
    with sqlite_file(config.path) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def _set_schema_version(backend: str, config: LedgerConfig, version: int) -> None:
    if backend == "postgresql":
        import psycopg

        assert config.url is not None
        with psycopg.connect(config.url) as db:
            db.execute("INSERT INTO toolwire_ledger_schema VALUES (%s)", (version,))
        return
    assert config.path is not None
    with sqlite_file(config.path) as db:
        db.execute(f"PRAGMA user_version = {int(version)}")


def test_a_new_sqlite_ledger_opened_while_another_process_holds_it_waits(
    tmp_path: Path, hold_new_sqlite_file: Callable[[Path], None]
) -> None:
    """Switching a new file to WAL needs it to itself, and SQLite reports "locked" at once
    when it cannot have it: opening waits instead, as a write waits for another's."""
    path = tmp_path / "ledger.sqlite3"
    hold_new_sqlite_file(path)
    ledger = Ledger.open(LedgerConfig(path=str(path)))
    try:
        assert ledger.entries("run_1", 1) == {}
    finally:
        ledger.close()
    with sqlite_file(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
