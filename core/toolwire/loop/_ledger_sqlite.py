"""The SQLite backend of the tool-effect ledger: one file (WAL), versioned and migrated."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..sqlite import use_wal
from ._journal import KINDS, RunRecord, assemble, last_round, split
from ._ledger_store import (
    SCHEMA_VERSION,
    CallClaimed,
    CallRow,
    LedgerError,
    SettledRow,
    StartedRow,
    StoredRun,
    Takeover,
    run_claimed,
)

_CALLS = """
CREATE TABLE calls (
    run_id TEXT NOT NULL,
    round INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    idempotent INTEGER NOT NULL,
    -- Not "IN (…)": SQLite checks a list of three or more against a table made per row.
    state TEXT NOT NULL CHECK (state = 'started' OR state = 'settled' OR state = 'deferred'),
    result TEXT,
    started REAL NOT NULL,
    settled REAL,
    attempt INTEGER NOT NULL DEFAULT 1,
    owner TEXT,
    lease REAL,
    PRIMARY KEY (run_id, round, call_id)
);
"""

# Schema 2's calls, as schema 3 copies them: every column but the owner and lease it added.
_CALL_COLUMNS = (
    "run_id, round, call_id, tool, arguments, idempotent, state, result, started, settled, attempt"
)

_RUNS = """
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    head TEXT NOT NULL,
    messages INTEGER NOT NULL,
    tool_calls INTEGER NOT NULL,
    sources INTEGER NOT NULL,
    updated REAL NOT NULL,
    version INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE run_items (
    run_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    seq INTEGER NOT NULL,
    item TEXT NOT NULL,
    PRIMARY KEY (run_id, kind, seq)
) WITHOUT ROWID;
"""

# A call settles from its own started row only: the same attempt by the same owner.
_SETTLE = (
    "INSERT INTO calls (run_id, round, call_id, tool, arguments, idempotent, state, result, "
    "started, settled, attempt, owner) VALUES (?, ?, ?, ?, ?, ?, 'settled', ?, ?, ?, ?, ?) "
    "ON CONFLICT (run_id, round, call_id) DO UPDATE SET state = 'settled', "
    "result = excluded.result, settled = excluded.settled, lease = NULL "
    "WHERE calls.state = 'started' AND calls.attempt = excluded.attempt "
    "AND calls.owner IS excluded.owner"
)

_WAIT = (
    "UPDATE calls SET state = 'deferred', lease = NULL WHERE run_id = ? AND round = ? "
    "AND call_id = ? AND state = 'started' AND attempt = ? AND owner IS ?"
)

_START = (
    "INSERT INTO calls (run_id, round, call_id, tool, arguments, idempotent, state, result, "
    "started, settled, attempt, owner, lease) VALUES (?, ?, ?, ?, ?, ?, 'started', NULL, ?, "
    "NULL, 1, ?, ?) ON CONFLICT (run_id, round, call_id) DO NOTHING"
)

# Taking a call over is a compare-and-set on its row exactly as it was read.
_TAKE_OVER = (
    "UPDATE calls SET attempt = attempt + 1, state = 'started', started = ?, tool = ?, "
    "arguments = ?, owner = ?, lease = ? WHERE run_id = ? AND round = ? AND call_id = ? "
    "AND attempt = ? AND state = ? AND owner IS ? AND lease IS ?"
)

# A run's record is written over only from the version the writer knows (or any, when it
# knows none): one process's view of a run at a time. A writer that knows the version
# updates from it and knows the next one without reading it back (the common case: every
# write of a run after its first).
_RUN = (
    "INSERT INTO runs (run_id, head, messages, tool_calls, sources, updated, version) "
    "VALUES (?, ?, ?, ?, ?, ?, 1) ON CONFLICT (run_id) DO UPDATE SET head = excluded.head, "
    "messages = excluded.messages, tool_calls = excluded.tool_calls, "
    "sources = excluded.sources, updated = excluded.updated, version = runs.version + 1 "
    "RETURNING version"
)
_RUN_FROM = (
    "UPDATE runs SET head = ?, messages = ?, tool_calls = ?, sources = ?, updated = ?, "
    "version = version + 1 WHERE run_id = ? AND version = ?"
)

_CALLS_OF_ROUND = (
    "SELECT call_id, tool, arguments, idempotent, state, result, started, attempt, owner, lease "
    "FROM calls WHERE run_id = ? AND round = ?"
)

_RENEW = (
    "UPDATE calls SET lease = ? WHERE run_id = ? AND round = ? AND call_id = ? "
    "AND state = 'started' AND attempt = ? AND owner = ?"
)


BUSY_TIMEOUT = 5.0  # seconds a write waits for another process's transaction


class SQLiteStore:
    """Ledger rows in a SQLite file (WAL), created readable by its owner only.

    Commits use ``synchronous = NORMAL``: a committed row survives the process being killed
    (what the ledger is for), not necessarily a power cut. Files of older schemas (1: runs
    stored whole; 2: calls without owners) are migrated in place, in one transaction, on first
    use.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.location = str(path)
        self._db: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                fd = os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600)
                os.close(fd)
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            try:
                db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
                use_wal(db, timeout=BUSY_TIMEOUT)
                db.execute("PRAGMA synchronous=NORMAL")
                self._prepare(db)
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    def _prepare(self, db: sqlite3.Connection) -> None:
        """Create the schema, or migrate an older one (checked again under the write lock)."""
        if _version(db) == SCHEMA_VERSION:
            return
        with _Transaction(db, "BEGIN IMMEDIATE"):
            version = _version(db)
            if version > SCHEMA_VERSION:
                raise LedgerError(
                    f"the ledger {self.location!r} has schema version {version}, newer than "
                    f"this toolwire knows ({SCHEMA_VERSION}): upgrade toolwire, or point "
                    "[ledger] path at another file",
                    path="$.ledger.path",
                )
            if version == SCHEMA_VERSION:
                return
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "runs" not in tables:
                _script(db, _CALLS)
                _script(db, _RUNS)
            else:
                if version < 2:
                    _migrate_runs_from_1(db)
                elif "version" not in {r[1] for r in db.execute("PRAGMA table_info(runs)")}:
                    db.execute("ALTER TABLE runs ADD COLUMN version INTEGER NOT NULL DEFAULT 0")
                _migrate_calls_to_3(db, tables)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()

    def start(
        self,
        row: StartedRow,
        settled: Sequence[SettledRow],
        record: RunRecord | None,
        *,
        takeover: Takeover | None,
    ) -> tuple[int, int | None]:
        db = self._connect()
        key = (row.run_id, row.round, row.call_id)
        with _Transaction(db, "BEGIN IMMEDIATE"):
            version = _write(db, settled, record)
            values = (*key, row.tool, row.arguments, int(row.idempotent), row.at)
            if db.execute(_START, (*values, row.owner, row.lease)).rowcount:
                return 1, version
            if takeover is not None:
                found = (takeover.attempt, takeover.state, takeover.owner, takeover.lease)
                moved = (row.at, row.tool, row.arguments, row.owner, row.lease)
                if db.execute(_TAKE_OVER, (*moved, *key, *found)).rowcount:
                    return takeover.attempt + 1, version
            raise _claimed(db, row)

    def write(self, settled: Sequence[SettledRow], record: RunRecord | None) -> int | None:
        if not settled and record is None:
            return None
        db = self._connect()
        with _Transaction(db):
            return _write(db, settled, record)

    def renew(self, calls: Sequence[tuple[str, int, str, int]], owner: str, lease: float) -> None:
        if not calls:
            return
        db = self._connect()
        with _Transaction(db):
            db.executemany(_RENEW, [(lease, *call, owner) for call in calls])

    def calls(self, run_id: str, round: int) -> list[CallRow]:
        rows = self._connect().execute(_CALLS_OF_ROUND, (run_id, round))
        return [call_row(*found) for found in rows]

    def stored_runs(self, run_ids: Sequence[str]) -> set[str]:
        db = self._connect()
        found: set[str] = set()
        for start in range(0, len(run_ids), _IDS_PER_QUERY):
            chunk = run_ids[start : start + _IDS_PER_QUERY]
            marks = ",".join("?" * len(chunk))
            rows = db.execute(f"SELECT run_id FROM runs WHERE run_id IN ({marks})", chunk)
            found.update(row[0] for row in rows)
        return found

    def load_run(self, run_id: str, *, calls: bool = False) -> StoredRun | None:
        db = self._connect()
        # One read transaction (WAL: a snapshot from its first SELECT on) for the head, its
        # rows and its last round's calls. The Ledger's lock keeps every other use of this
        # connection out until it ends.
        with _Transaction(db):
            head = db.execute(
                "SELECT head, messages, tool_calls, sources, version FROM runs WHERE run_id = ?",
                (run_id,),
            ).fetchone()
            if head is None:
                return None
            rows = db.execute(
                "SELECT kind, seq, item FROM run_items WHERE run_id = ?", (run_id,)
            ).fetchall()
            data = assemble(run_id, head[0], (head[1], head[2], head[3]), rows)
            found = db.execute(_CALLS_OF_ROUND, (run_id, last_round(data))) if calls else ()
            return StoredRun(data, head[4], [call_row(*row) for row in found])


_IDS_PER_QUERY = 500
"""Run ids asked for in one statement (SQLite allows 999 parameters before 3.32)."""


def _script(db: sqlite3.Connection, sql: str) -> None:
    """Each statement of ``sql`` inside the open transaction (``executescript`` would commit)."""
    for statement in sql.split(";"):
        if statement.strip():
            db.execute(statement)


def _version(db: sqlite3.Connection) -> int:
    version: int = db.execute("PRAGMA user_version").fetchone()[0]
    return version


def _write(
    db: sqlite3.Connection, settled: Sequence[SettledRow], record: RunRecord | None
) -> int | None:
    if settled:
        done = [settle_values(s) for s in settled if s.state == "settled"]
        if done:
            db.executemany(_SETTLE, done)
        if len(done) < len(settled):
            db.executemany(_WAIT, [wait_values(s) for s in settled if s.state == "deferred"])
    if record is None:
        return None
    run_id = record.run_id
    expected = record.expected
    if expected is None:
        version: int = db.execute(
            _RUN, (run_id, record.head, *record.lengths, time.time())
        ).fetchone()[0]
    elif db.execute(
        _RUN_FROM, (record.head, *record.lengths, time.time(), run_id, expected)
    ).rowcount:
        version = expected + 1
    else:
        raise run_claimed(run_id, expected)
    for kind in record.truncate:
        length = record.lengths[KINDS.index(kind)]
        db.execute(
            "DELETE FROM run_items WHERE run_id = ? AND kind = ? AND seq >= ?",
            (run_id, kind, length),
        )
    if record.rows:
        db.executemany(
            "INSERT OR REPLACE INTO run_items (run_id, kind, seq, item) VALUES (?, ?, ?, ?)",
            [(run_id, kind, seq, item) for kind, seq, item in record.rows],
        )
    return version


def _claimed(db: sqlite3.Connection, row: StartedRow) -> CallClaimed:
    found = db.execute(
        "SELECT state, attempt FROM calls WHERE run_id = ? AND round = ? AND call_id = ?",
        (row.run_id, row.round, row.call_id),
    ).fetchone()
    state, attempt = found if found is not None else ("gone", 0)
    return claimed(row, state, attempt)


def claimed(row: StartedRow, state: str, attempt: int) -> CallClaimed:
    """The refusal of a ``started`` row for a call that already has one."""
    return CallClaimed(
        f"call {row.call_id!r} of run {row.run_id!r} (round {row.round}, {row.tool}) is "
        f"already {state} (attempt {attempt}) by another process; it does not run twice"
    )


def call_row(
    call_id: str,
    tool: str,
    arguments: str,
    idempotent: Any,
    state: str,
    result: str | None,
    started: float | None,
    attempt: int,
    owner: str | None,
    lease: float | None,
) -> CallRow:
    """A call row from its columns, as both backends select them."""
    return CallRow(
        call_id=call_id,
        tool=tool,
        arguments=arguments,
        idempotent=bool(idempotent),
        settled=state == "settled",
        result=result,
        started=started,
        attempt=attempt,
        state=state,
        owner=owner,
        lease=lease,
    )


def settle_values(s: SettledRow) -> tuple[Any, ...]:
    """The parameters of a settled row's upsert, in both backends' column order."""
    return (
        s.run_id,
        s.round,
        s.call_id,
        s.tool,
        s.arguments,
        s.idempotent,
        s.result,
        s.at,
        s.at,
        s.attempt,
        s.owner,
    )


def wait_values(s: SettledRow) -> tuple[Any, ...]:
    """The parameters of the update of a call that waits for a decision after it started."""
    return (s.run_id, s.round, s.call_id, s.attempt, s.owner)


def _migrate_runs_from_1(db: sqlite3.Connection) -> None:
    """Schema 1 → 2: each whole-run snapshot becomes a head and item rows."""
    db.execute("ALTER TABLE runs RENAME TO runs_v1")
    _script(db, _RUNS)
    for run_id, snapshot, updated in db.execute(
        "SELECT run_id, snapshot, updated FROM runs_v1"
    ).fetchall():
        head, lengths, rows = split(json.loads(snapshot))
        db.execute(
            "INSERT INTO runs (run_id, head, messages, tool_calls, sources, updated) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, head, *lengths, updated),
        )
        db.executemany(
            "INSERT INTO run_items (run_id, kind, seq, item) VALUES (?, ?, ?, ?)",
            [(run_id, kind, seq, item) for kind, seq, item in rows],
        )
    db.execute("DROP TABLE runs_v1")


def _migrate_calls_to_3(db: sqlite3.Connection, tables: set[str]) -> None:
    """Schemas 1 and 2 → 3: calls get an owner and a lease (none for the rows there are: no
    process holds them) and may be ``deferred``; schema 1's calls get attempts too. The table
    is made anew, since SQLite cannot change a column's check. (Runs get their version where
    their table is made or migrated.)"""
    if "calls" not in tables:
        _script(db, _CALLS)
        return
    columns = {r[1] for r in db.execute("PRAGMA table_info(calls)")}
    kept = _CALL_COLUMNS if "attempt" in columns else _CALL_COLUMNS.removesuffix(", attempt")
    db.execute("ALTER TABLE calls RENAME TO calls_v2")
    _script(db, _CALLS)
    db.execute(f"INSERT INTO calls ({kept}) SELECT {kept} FROM calls_v2")  # fixed column names
    db.execute("DROP TABLE calls_v2")


class _Transaction:
    """``BEGIN`` … ``COMMIT`` (``ROLLBACK`` on error, also when the commit itself fails) on an
    autocommit connection. A class rather than a generator: it wraps every ledger write."""

    __slots__ = ("begin", "db")

    def __init__(self, db: sqlite3.Connection, begin: str = "BEGIN") -> None:
        self.db = db
        self.begin = begin

    def __enter__(self) -> None:
        self.db.execute(self.begin)

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        db = self.db
        if kind is None:
            try:
                db.execute("COMMIT")
                return
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        db.execute("ROLLBACK")
