"""The tool-effect ledger: SQLite rows written before and after each tool runs; run snapshots."""

from __future__ import annotations

import json
import os
import sqlite3
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..config import LedgerConfig
from ..tools._result import ToolResult
from ._codec import result_from_json, result_to_json

if TYPE_CHECKING:
    from ._protocol import LoopHost

LEDGER_FILE_NAME = "ledger.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    snapshot TEXT NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (
    run_id TEXT NOT NULL,
    round INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    idempotent INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('started', 'settled')),
    result TEXT,
    started REAL NOT NULL,
    settled REAL,
    PRIMARY KEY (run_id, round, call_id)
);
"""


def default_ledger_path() -> Path:
    """``$XDG_DATA_HOME/toolwire/ledger.sqlite3``, else under ``~/.local/share``."""
    base = os.environ.get("XDG_DATA_HOME")
    root = Path(base) if base else Path.home() / ".local" / "share"
    return root / "toolwire" / LEDGER_FILE_NAME


def ledger_path(config: LedgerConfig) -> Path:
    """The ledger file named by ``[ledger] path`` (``~`` expanded), or the default one."""
    return Path(config.path).expanduser() if config.path else default_ledger_path()


@attrs.frozen(kw_only=True)
class LedgerEntry:
    """What the ledger knows about one call: started only, or settled with its result."""

    call_id: str
    round: int
    tool: str
    arguments: Mapping[str, Any]
    idempotent: bool
    settled: bool
    result: ToolResult | None = None
    started_at: float | None = None
    """When the call started (seconds since the epoch; None for a row written settled)."""


class Ledger:
    """A SQLite file (WAL) recording tool calls and run snapshots, so a run can be resumed after
    the process running it ended, without running a side effect twice unasked.

    A call of a non-idempotent tool gets a ``started`` row, committed before the tool runs; when
    it ends, a ``settled`` row with its result is committed with the next write of the run (the
    next ``started`` row, the end of the turn, or the end of the run). An idempotent tool gets
    only the ``settled`` row, written lazily: after a crash it is simply run again, so a
    ``started`` row would change nothing. The snapshot of a run (its ``Run.to_json`` without
    events) is written with the first ``started`` row of each turn and when the run ends.

    The file holds conversations and the arguments calls ran with, so it is created readable by
    its owner only. Commits use ``synchronous = NORMAL``: a committed row survives the process
    being killed (what the ledger is for), not necessarily a power cut.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        self._settled: list[tuple[Any, ...]] = []

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                fd = os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600)
                os.close(fd)
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("PRAGMA busy_timeout=5000")
                db.executescript(_SCHEMA)
            except sqlite3.Error:
                db.close()
                raise
            self._db = db
        return self._db

    def close(self) -> None:
        """Write what is pending and close the connection (reopened on the next use)."""
        try:
            if self._settled:
                self.flush()
        finally:
            db, self._db = self._db, None
            if db is not None:
                db.close()

    # -- calls -----------------------------------------------------------------------------

    def started(
        self,
        run_id: str,
        round: int,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        idempotent: bool,
        snapshot: str | None = None,
    ) -> None:
        """Commit that a call is about to run, with the pending settled rows and a snapshot."""
        db = self._connect()
        now = time.time()
        row = (run_id, round, call_id, tool, _dumps(arguments), int(idempotent), now)
        with _transaction(db):
            self._write_pending(db, snapshot=(run_id, snapshot) if snapshot else None, now=now)
            db.execute(
                "INSERT OR REPLACE INTO calls (run_id, round, call_id, tool, arguments, "
                "idempotent, state, result, started, settled) "
                "VALUES (?, ?, ?, ?, ?, ?, 'started', NULL, ?, NULL)",
                row,
            )

    def settled(
        self,
        run_id: str,
        round: int,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        result: ToolResult,
        *,
        idempotent: bool,
    ) -> None:
        """Record the outcome of a call that ran (committed with the next write; encoded then)."""
        self._settled.append(
            (run_id, round, call_id, tool, arguments, idempotent, result, time.time())
        )

    def discard(self, run_id: str) -> None:
        """Drop the pending settled rows of a run that ended without needing them."""
        self._settled = [row for row in self._settled if row[0] != run_id]

    @property
    def pending(self) -> bool:
        """Whether settled rows wait for the next commit."""
        return bool(self._settled)

    def flush(self, *, snapshot: tuple[str, str] | None = None) -> None:
        """Commit the pending settled rows (and a snapshot ``(run_id, json)``) now."""
        if not self._settled and snapshot is None:
            return
        db = self._connect()
        with _transaction(db):
            self._write_pending(db, snapshot=snapshot, now=time.time())

    def _write_pending(
        self, db: sqlite3.Connection, *, snapshot: tuple[str, str | None] | None, now: float
    ) -> None:
        if snapshot is not None and snapshot[1] is not None:
            db.execute(
                "INSERT OR REPLACE INTO runs (run_id, snapshot, updated) VALUES (?, ?, ?)",
                (snapshot[0], snapshot[1], now),
            )
        if self._settled:
            db.executemany(
                "INSERT INTO calls (run_id, round, call_id, tool, arguments, idempotent, state, "
                "result, started, settled) VALUES (?, ?, ?, ?, ?, ?, 'settled', ?, ?, ?) "
                "ON CONFLICT (run_id, round, call_id) DO UPDATE SET state = 'settled', "
                "result = excluded.result, settled = excluded.settled",
                [
                    (
                        run_id,
                        round,
                        call_id,
                        tool,
                        _dumps(arguments),
                        int(idempotent),
                        _dumps(result_to_json(result)),
                        at,
                        at,
                    )
                    for run_id, round, call_id, tool, arguments, idempotent, result, at in (
                        self._settled
                    )
                ],
            )
            self._settled.clear()

    def entries(self, run_id: str, round: int) -> dict[str, LedgerEntry]:
        """Every call of one round of a run that reached the ledger, by call id."""
        if self._settled:
            self.flush()
        rows = self._connect().execute(
            "SELECT call_id, tool, arguments, idempotent, state, result, started FROM calls "
            "WHERE run_id = ? AND round = ?",
            (run_id, round),
        )
        out: dict[str, LedgerEntry] = {}
        for call_id, tool, arguments, idempotent, state, result, started in rows:
            out[call_id] = LedgerEntry(
                call_id=call_id,
                round=round,
                tool=tool,
                arguments=json.loads(arguments),
                idempotent=bool(idempotent),
                settled=state == "settled",
                result=result_from_json(json.loads(result)) if result else None,
                started_at=started if state == "started" else None,
            )
        return out

    # -- runs ------------------------------------------------------------------------------

    def save_run(self, run_id: str, snapshot: str) -> None:
        """Store the latest snapshot of a run (with the pending settled rows)."""
        self.flush(snapshot=(run_id, snapshot))

    def load_run(self, run_id: str) -> dict[str, Any] | None:
        """The latest snapshot of a run, or None when the ledger has none."""
        row = (
            self._connect()
            .execute("SELECT snapshot FROM runs WHERE run_id = ?", (run_id,))
            .fetchone()
        )
        if row is None:
            return None
        data: dict[str, Any] = json.loads(row[0])
        return data


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


_shared: weakref.WeakKeyDictionary[Any, Ledger] = weakref.WeakKeyDictionary()


def ledger_for(host: LoopHost) -> Ledger | None:
    """The ledger of a host as ``[ledger]`` configures it (None when disabled).

    One per host, kept open across its runs (opening and closing a WAL database costs a
    checkpoint each time) and closed when the host is garbage-collected.
    """
    config = host.config.ledger
    if not config.enabled:
        return None
    ledger = _shared.get(host)
    if ledger is None:
        ledger = Ledger(ledger_path(config))
        _shared[host] = ledger
        weakref.finalize(host, ledger.close)
    return ledger


class _transaction:
    """``BEGIN`` … ``COMMIT`` (``ROLLBACK`` on error) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN")

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")
