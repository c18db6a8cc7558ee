"""The tool-effect ledger: rows written before and after each tool runs, and run records."""

from __future__ import annotations

import json
import os
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..config import LedgerConfig
from ..tools._result import ToolResult
from ._codec import result_from_json, result_to_json, stored_json
from ._journal import RunJournal
from ._ledger_sqlite import SQLiteStore
from ._ledger_store import LedgerStore, SettledRow, StartedRow

if TYPE_CHECKING:
    from ._protocol import LoopHost
    from ._run import Run

LEDGER_FILE_NAME = "ledger.sqlite3"


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


_Key = tuple[str, int, str]


class Ledger:
    """Records tool calls and runs, so that a run can be resumed after the process running it
    ended, without running a side effect twice unasked.

    A call of a non-idempotent tool gets a ``started`` row, committed before the tool runs; when
    it ends, a ``settled`` row with its result is committed with the next write of the run (the
    next ``started`` row, the end of the turn, or the end of the run). An idempotent tool gets
    only the ``settled`` row, written lazily: after a crash it is simply run again, so a
    ``started`` row would change nothing. A call has one row: a second ``started`` row for it
    is refused (:class:`~toolwire.loop._ledger_store.CallClaimed`: another process runs it),
    unless this ledger read it as started and never settled and the run approved it again.

    The record of a run (its ``Run.to_json`` without events) is written with the first
    ``started`` row of each turn and when the run ends, as append-only rows: each write stores
    what the run gained since this ledger last wrote it, so its cost does not grow with the run.

    :param store: where the rows go: a SQLite file path, or a backend (see :meth:`open`).
    """

    def __init__(self, store: LedgerStore | str | os.PathLike[str]) -> None:
        if isinstance(store, str | os.PathLike):
            store = SQLiteStore(Path(store))
        self.store: LedgerStore = store
        self._settled: list[tuple[Any, ...]] = []
        self._started: dict[_Key, str] = {}  # a started call's arguments as committed (JSON)
        self._journal = RunJournal()
        self._takeover: dict[_Key, int] = {}

    @classmethod
    def open(cls, config: LedgerConfig) -> Ledger:
        """The ledger ``[ledger]`` configures: PostgreSQL for a ``url``, else a SQLite file.

        :raises LedgerError: for a ``url`` when psycopg is not installed (``toolwire[postgres]``).
        """
        if config.url:
            from ._ledger_postgres import PostgresStore

            return cls(PostgresStore(config.url))
        return cls(SQLiteStore(ledger_path(config)))

    @property
    def location(self) -> str:
        """Where the rows are (a path, or a URL without its password), for messages."""
        return self.store.location

    @property
    def path(self) -> Path | None:
        """The SQLite file, when the ledger is one."""
        return self.store.path if isinstance(self.store, SQLiteStore) else None

    def close(self) -> None:
        """Write what is pending and close the connection (reopened on the next use)."""
        try:
            if self._settled:
                self.flush()
        finally:
            self.store.close()

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
        snapshot: Run | None = None,
    ) -> None:
        """Commit that a call is about to run, with the pending settled rows and the run's
        record (``snapshot``) when given.

        :raises CallClaimed: when the call has a row already that this ledger may not take over.
        """
        key = (run_id, round, call_id)
        row = StartedRow(
            run_id=run_id,
            round=round,
            call_id=call_id,
            tool=tool,
            arguments=stored_json(arguments),
            idempotent=idempotent,
            at=time.time(),
        )
        record = self._journal.record(snapshot) if snapshot is not None else None
        settled = self._pending_rows()
        self.store.start(row, settled, record, takeover=self._takeover.get(key))
        self._takeover.pop(key, None)
        self._settled.clear()
        self._started[key] = row.arguments
        if record is not None:
            self._journal.remember(record)

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
        """Record the outcome of a call that ran (committed with the next write; encoded then,
        the arguments of a call that has its ``started`` row as they were committed there)."""
        encoded = self._started.pop((run_id, round, call_id), None)
        self._settled.append(
            (run_id, round, call_id, tool, arguments, encoded, idempotent, result, time.time())
        )

    def discard(self, run_id: str) -> None:
        """Drop the pending settled rows of a run that ended without needing them."""
        self._settled = [row for row in self._settled if row[0] != run_id]
        self._forget_started(run_id)
        self._journal.forget(run_id)

    def wrote(self, run_id: str) -> bool:
        """Whether this ledger wrote a record of the run since it last stored the run whole
        (so its stored record must be brought up to its end)."""
        return self._journal.knows(run_id)

    @property
    def pending(self) -> bool:
        """Whether settled rows wait for the next commit."""
        return bool(self._settled)

    def flush(self, *, snapshot: Run | None = None) -> None:
        """Commit the pending settled rows (and the record of the run ``snapshot``) now."""
        if not self._settled and snapshot is None:
            return
        record = self._journal.record(snapshot) if snapshot is not None else None
        self.store.write(self._pending_rows(), record)
        self._settled.clear()
        if record is not None:
            self._journal.remember(record)

    def _pending_rows(self) -> list[SettledRow]:
        return [
            SettledRow(
                run_id=run_id,
                round=round,
                call_id=call_id,
                tool=tool,
                arguments=stored_json(arguments) if encoded is None else encoded,
                idempotent=idempotent,
                result=stored_json(result_to_json(result)),
                at=at,
            )
            for run_id, round, call_id, tool, arguments, encoded, idempotent, result, at in (
                self._settled
            )
        ]

    def _forget_started(self, run_id: str) -> None:
        """Drop the kept arguments of a run's calls that started and will not settle here."""
        if self._started:
            self._started = {k: v for k, v in self._started.items() if k[0] != run_id}

    def entries(self, run_id: str, round: int) -> dict[str, LedgerEntry]:
        """Every call of one round of a run that reached the ledger, by call id."""
        if self._settled:
            self.flush()
        out: dict[str, LedgerEntry] = {}
        for row in self.store.calls(run_id, round):
            if not row.settled:
                self._takeover[(run_id, round, row.call_id)] = row.attempt
            out[row.call_id] = LedgerEntry(
                call_id=row.call_id,
                round=round,
                tool=row.tool,
                arguments=json.loads(row.arguments),
                idempotent=row.idempotent,
                settled=row.settled,
                result=result_from_json(json.loads(row.result)) if row.result else None,
                started_at=None if row.settled else row.started,
            )
        return out

    # -- runs ------------------------------------------------------------------------------

    def save_run(self, run: Run) -> None:
        """Store a run as it ended (with the pending settled rows); a later resume of it writes
        it whole once more."""
        try:
            self.flush(snapshot=run)
        finally:
            self._journal.forget(run.id)
            self._forget_started(run.id)

    def load_run(self, run_id: str) -> dict[str, Any] | None:
        """The run as last stored (``Run.to_json(events=False)``), or None when unknown."""
        return self.store.load_run(run_id)


_shared: weakref.WeakKeyDictionary[Any, Ledger] = weakref.WeakKeyDictionary()


def ledger_for(host: LoopHost) -> Ledger | None:
    """The ledger of a host as ``[ledger]`` configures it (None when disabled).

    One per host, kept open across its runs (opening and closing a connection costs a WAL
    checkpoint or a login each time) and closed when the host is garbage-collected.
    """
    config = host.config.ledger
    if not config.enabled:
        return None
    ledger = _shared.get(host)
    if ledger is None:
        ledger = Ledger.open(config)
        _shared[host] = ledger
        weakref.finalize(host, ledger.close)
    return ledger
