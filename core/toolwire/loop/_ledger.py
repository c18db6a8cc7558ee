"""The tool-effect ledger: rows written before and after each tool runs, and run records."""

from __future__ import annotations

import json
import os
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import attrs

from ..config import LedgerConfig
from ..tools._result import ToolResult
from ._codec import ResultForms, result_from_json, stored_json
from ._journal import RunJournal, RunRecord, last_round
from ._lease import KEEPER, LEASE_SECONDS, owner_alive, this_owner
from ._ledger_sqlite import SQLiteStore
from ._ledger_store import (
    CallClaimed,
    CallRow,
    LedgerStore,
    RunClaimed,
    SettledRow,
    StartedRow,
    Takeover,
)

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
    """What the ledger knows about one call: started only, waiting for a decision after it
    started, or settled with its result."""

    call_id: str
    round: int
    tool: str
    arguments: Mapping[str, Any]
    idempotent: bool
    settled: bool
    result: ToolResult | None = None
    started_at: float | None = None
    """When the call started (seconds since the epoch; None for a row written settled)."""
    attempt: int = 1
    """How many times the call started (each approval of an interrupted call starts it again)."""
    owner: str | None = None
    """The process that started it last (``host/machine/pid/start``), None when unknown."""
    running: bool = False
    """Its owner, a live process, still runs it and keeps its lease: it is not interrupted."""
    deferred: bool = False
    """It started, then asked for a decision (``ApprovalRequired``, ``CallDeferred``) before it
    took effect: it waits for that decision, and is not running."""

    @property
    def interrupted(self) -> bool:
        """It started, never settled, and nobody runs it any more (a lapsed lease)."""
        return not self.settled and not self.running and not self.deferred


_Key = tuple[str, int, str]


class _Started(NamedTuple):
    """A call this ledger started and holds: its arguments as committed (JSON), its attempt and
    the owner it was started as."""

    arguments: str
    attempt: int
    owner: str


_Pending = tuple[
    Literal["settled", "deferred"],
    str,
    int,
    str,
    str,
    Mapping[str, Any],
    "_Started | None",
    bool,
    "ToolResult | None",
    float,
]
"""How a call ended, committed with the ledger's next write: state, run id, round, call id,
tool, arguments, how it started here (None: it did not), idempotent, result, when."""


class Ledger:
    """Records tool calls and runs, so that a run can be resumed after the process running it
    ended, without running a side effect twice unasked.

    A call of a non-idempotent tool gets a ``started`` row, committed before the tool runs,
    owned by this process with a lease this process keeps alive until the call's end is
    committed (:mod:`toolwire.loop._lease`); when the call ends, a ``settled`` row with its
    result (or, when it asked for a decision while it ran, ``deferred``) is committed with the
    next write of the run (the next ``started`` row, the end of the turn, or the end of the run).
    An idempotent tool gets only the ``settled`` row, written lazily: after a crash it is simply
    run again, so a ``started`` row would change nothing. A call has one row: a second
    ``started`` row for it is refused (:class:`~toolwire.loop._ledger_store.CallClaimed`:
    another process runs it), unless this ledger read it as nobody's any more (interrupted, or
    waiting for a decision) and the run approved it again; that takeover is a compare-and-set
    on the row as read.

    The record of a run (its ``Run.to_json`` without events) is written with the first
    ``started`` row of each turn and when the run ends, as append-only rows: each write stores
    what the run gained since this ledger last wrote it, so its cost does not grow with the run.

    :param store: where the rows go: a SQLite file path, or a backend (see :meth:`open`).
    :param lease_seconds: how long a started call's lease lasts between two renewals (renewed
        each third of it while the call runs).
    """

    def __init__(
        self, store: LedgerStore | str | os.PathLike[str], *, lease_seconds: float = LEASE_SECONDS
    ) -> None:
        if isinstance(store, str | os.PathLike):
            store = SQLiteStore(Path(store))
        self.store: LedgerStore = store
        self.lease_seconds = lease_seconds
        self.heartbeat = lease_seconds / 3
        self._lock = threading.RLock()  # the lease keeper's thread renews through the store too
        self._pending: list[_Pending] = []
        self._started: dict[_Key, _Started] = {}  # calls started here whose end is not committed
        self._journal = RunJournal()
        self._takeover: dict[_Key, Takeover] = {}
        self._watched: str | None = None  # the owner (process) whose keeper renews the leases
        self._versions: dict[str, int] = {}  # each run's stored version this ledger last saw
        self._forms = ResultForms()  # the results' JSON forms of the last write

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
        """Write what is pending, stop keeping the leases of calls still unsettled, and close
        the connection (reopened on the next use)."""
        with self._lock:
            try:
                if self._pending:
                    self.flush()
            finally:
                self._let_go(list(self._started))
                self._forms = ResultForms()
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
        after: int | None = None,
    ) -> int:
        """Commit that a call is about to run, owned by this process, with the pending rows and
        the run's record (``snapshot``) when given; the call's attempt (how many times it has
        started, this time included).

        ``after`` is how many times the call had started when the decision that allows this
        start was asked for: 0, its first start (it must have no row); else the row this ledger
        last read for it (:meth:`entries`), nobody's any more, must be at that attempt. None:
        the first start, or the next after the row read so.

        :raises CallClaimed: when the call has a row already that this ledger may not take over.
        :raises RunClaimed: when ``snapshot`` follows a version of the run another process has
            written over since (nothing is committed then).
        """
        key = (run_id, round, call_id)
        takeover = self._takeover_for(key, after, tool)
        owner = this_owner()
        now = time.time()
        row = StartedRow(
            run_id,
            round,
            call_id,
            tool,
            stored_json(arguments),
            idempotent,
            now,
            owner,
            now + self.lease_seconds,
        )
        with self._lock:
            forms = self._forms = ResultForms(self._forms)
            record = self._record(snapshot, forms) if snapshot is not None else None
            pending = self._pending_rows(forms) if self._pending else ()
            started, version = self.store.start(row, pending, record, takeover=takeover)
            if self._takeover:
                self._takeover.pop(key, None)
            if pending:
                self._committed()
            self._started[key] = _Started(row.arguments, started, owner)
            if record is not None:
                self._stored(record, version)
        if self._watched != owner:  # the first start in this process (or in a forked child)
            KEEPER.watch(self)
            self._watched = owner
        return started

    def _takeover_for(self, key: _Key, after: int | None, tool: str) -> Takeover | None:
        """The row read for ``key`` that a start may take over: the one at attempt ``after`` when
        ``after`` is given; None for a first start.

        :raises CallClaimed: when ``after`` names a restart and no such row was read."""
        takeover = self._takeover.get(key) if self._takeover else None
        if after is None or (takeover is not None and takeover.attempt == after):
            return takeover
        if after > 0:
            run_id, round, call_id = key
            raise CallClaimed(
                f"call {call_id!r} of run {run_id!r} (round {round}, {tool}) may not start "
                f"again: the decision allowing it answered a request made after start "
                f"{after}, and the ledger read no such row nobody runs; it does not run twice"
            )
        return None

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
        started = self._started.get((run_id, round, call_id))
        at = time.time()
        self._pending.append(
            ("settled", run_id, round, call_id, tool, arguments, started, idempotent, result, at)
        )

    def waiting(
        self, run_id: str, round: int, call_id: str, tool: str, arguments: Mapping[str, Any]
    ) -> None:
        """Record that a call that started asked for a decision before it took effect (its row
        becomes ``deferred``, committed with the next write): it is not running any more, and
        an approval starts it again. Nothing for a call this ledger did not start."""
        started = self._started.get((run_id, round, call_id))
        if started is not None:
            at = time.time()
            self._pending.append(
                ("deferred", run_id, round, call_id, tool, arguments, started, False, None, at)
            )

    def discard(self, run_id: str) -> None:
        """Drop the pending rows of a run that ended without needing them."""
        self._pending = [row for row in self._pending if row[1] != run_id]
        self._forget_started(run_id)
        self._journal.forget(run_id)
        self._versions.pop(run_id, None)

    def wrote(self, run_id: str) -> bool:
        """Whether this ledger wrote a record of the run since it last stored the run whole
        (so its stored record must be brought up to its end)."""
        return self._journal.knows(run_id)

    @property
    def pending(self) -> bool:
        """Whether rows wait for the next commit."""
        return bool(self._pending)

    def flush(self, *, snapshot: Run | None = None) -> None:
        """Commit the pending rows (and the record of the run ``snapshot``) now.

        :raises RunClaimed: when another process wrote the run since this ledger read or wrote
            it: the record is not written (the pending rows are).
        """
        if not self._pending and snapshot is None:
            return
        with self._lock:
            forms = self._forms = ResultForms(self._forms)
            record = self._record(snapshot, forms)
            try:
                version = self.store.write(self._pending_rows(forms), record)
            except RunClaimed:
                # Another process drives the run: this one's view of it is not stored, but how
                # its calls ended is.
                if self._pending:
                    self.store.write(self._pending_rows(forms), None)
                    self._committed()
                raise
            self._committed()
            self._stored(record, version)

    def _record(self, snapshot: Run | None, forms: ResultForms) -> RunRecord | None:
        """The write of ``snapshot`` (None: none), following the version of it last seen."""
        if snapshot is None:
            return None
        return self._journal.record(snapshot, self._versions.get(snapshot.id), forms)

    def _stored(self, record: RunRecord | None, version: int | None) -> None:
        if record is not None and version is not None:
            self._journal.remember(record)
            self._versions[record.run_id] = version

    def _pending_rows(self, forms: ResultForms) -> list[SettledRow]:
        """The pending rows as the store writes them (results in the write's ``forms``)."""
        return [
            SettledRow(
                run_id,
                round,
                call_id,
                tool,
                stored_json(arguments) if started is None else started.arguments,
                idempotent,
                stored_json(forms(result)) if result is not None else None,
                at,
                started.attempt if started is not None else 1,
                started.owner if started is not None else None,
                state,
            )
            for state, run_id, round, call_id, tool, arguments, started, idempotent, result, at in (
                self._pending
            )
        ]

    def _committed(self) -> None:
        """The pending rows were committed: the calls they end are let go."""
        held = self._started
        for pending in self._pending:
            if pending[6] is not None:
                held.pop((pending[1], pending[2], pending[3]), None)
        self._pending.clear()

    def _let_go(self, keys: list[_Key]) -> None:
        """Stop holding these calls (their leases are no longer renewed)."""
        with self._lock:
            for key in keys:
                self._started.pop(key, None)

    def holds(self, key: _Key) -> bool:
        """Whether this ledger holds the call ``key``: it committed its ``started`` row and not
        yet how it ended."""
        return key in self._started

    def _forget_started(self, run_id: str) -> None:
        """Let go of a run's calls that started and will not settle here."""
        if self._started:
            self._let_go([k for k in self._started if k[0] == run_id])

    def renew(self) -> None:
        """Extend the leases of the calls this ledger holds (the lease keeper's heartbeat)."""
        with self._lock:
            owner = this_owner()
            calls = [(*key, s.attempt) for key, s in self._started.items() if s.owner == owner]
            if calls:
                self.store.renew(calls, owner, time.time() + self.lease_seconds)

    def entries(self, run_id: str, round: int) -> dict[str, LedgerEntry]:
        """Every call of one round of a run that reached the ledger, by call id; for a call that
        started and never settled, whether its owner still runs it."""
        if self._pending:
            self.flush()
        with self._lock:
            rows = self.store.calls(run_id, round)
        return self._entries(run_id, round, rows)

    def _entries(self, run_id: str, round: int, rows: list[CallRow]) -> dict[str, LedgerEntry]:
        """The rows of one round's calls as entries, each row remembered as read (a takeover
        starts from it)."""
        out: dict[str, LedgerEntry] = {}
        for row in rows:
            key = (run_id, round, row.call_id)
            running = row.state == "started" and owner_alive(row.owner, row.lease, key)
            if row.state != "settled" and not running:
                self._takeover[key] = row.as_found()
            else:
                self._takeover.pop(key, None)
            out[row.call_id] = LedgerEntry(
                call_id=row.call_id,
                round=round,
                tool=row.tool,
                arguments=json.loads(row.arguments),
                idempotent=row.idempotent,
                settled=row.settled,
                result=result_from_json(json.loads(row.result)) if row.result else None,
                started_at=None if row.settled else row.started,
                attempt=row.attempt,
                owner=row.owner,
                running=running,
                deferred=row.state == "deferred",
            )
        return out

    # -- runs ------------------------------------------------------------------------------

    def save_run(self, run: Run) -> None:
        """Store a run as it ended (with the pending rows); a later resume of it writes it whole
        once more."""
        try:
            self.flush(snapshot=run)
        finally:
            self._journal.forget(run.id)
            self._versions.pop(run.id, None)
            self._forget_started(run.id)

    def stored_runs(self, run_ids: Sequence[str]) -> set[str]:
        """Those of ``run_ids`` the ledger holds a run of, in one query (a batch asks this once
        for all its jobs rather than loading each)."""
        with self._lock:
            return self.store.stored_runs(run_ids)

    def load_run(self, run_id: str) -> dict[str, Any] | None:
        """The run as last stored (``Run.to_json(events=False)``), or None when unknown."""
        with self._lock:
            found = self.store.load_run(run_id)
        if found is None:
            return None
        self._versions[run_id] = found.version
        return found.data

    def load_turn(self, run_id: str) -> tuple[dict[str, Any], dict[str, LedgerEntry]] | None:
        """The run as last stored (as :meth:`load_run`) and every call of its last round (as
        :meth:`entries`), read in one snapshot, or None when unknown: what another process
        commits meanwhile (the run's next round and the calls it starts) is in neither or in
        both, never rows written after the record they are read with."""
        if self._pending:
            self.flush()
        with self._lock:
            found = self.store.load_run(run_id, calls=True)
        if found is None:
            return None
        self._versions[run_id] = found.version
        return found.data, self._entries(run_id, last_round(found.data), found.calls)


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
