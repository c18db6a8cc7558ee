"""The PostgreSQL backend of the tool-effect ledger: one database shared by many workers.

Imported only when ``[ledger] url`` is set; its driver, psycopg 3, comes with
``toolwire[postgres]``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..config._secrets import without_password
from ._journal import KINDS, RunRecord, assemble, last_round
from ._ledger_sqlite import call_row, claimed, settle_values, wait_values
from ._ledger_store import (
    SCHEMA_VERSION,
    CallRow,
    LedgerError,
    SettledRow,
    StartedRow,
    StoredRun,
    Takeover,
    run_claimed,
)

if TYPE_CHECKING:
    import psycopg

T = TypeVar("T")

_LOCK = 0x746F6F6C77697265  # "toolwire": serialises schema creation between workers

# Each version's statements take the schema from the one before; PostgreSQL ledgers start at
# version 2, the first with run records as rows. Version 3: owners, leases, deferred calls.
_MIGRATIONS: dict[int, tuple[str, ...]] = {
    2: (
        """CREATE TABLE toolwire_calls (
            run_id text NOT NULL,
            round integer NOT NULL,
            call_id text NOT NULL,
            tool text NOT NULL,
            arguments text NOT NULL,
            idempotent boolean NOT NULL,
            state text NOT NULL CHECK (state IN ('started', 'settled')),
            result text,
            started double precision NOT NULL,
            settled double precision,
            attempt integer NOT NULL DEFAULT 1,
            PRIMARY KEY (run_id, round, call_id)
        )""",
        """CREATE TABLE toolwire_runs (
            run_id text PRIMARY KEY,
            head text NOT NULL,
            messages integer NOT NULL,
            tool_calls integer NOT NULL,
            sources integer NOT NULL,
            updated double precision NOT NULL
        )""",
        """CREATE TABLE toolwire_run_items (
            run_id text NOT NULL,
            kind text NOT NULL,
            seq integer NOT NULL,
            item text NOT NULL,
            PRIMARY KEY (run_id, kind, seq)
        )""",
    ),
    3: (
        "ALTER TABLE toolwire_calls ADD COLUMN owner text",
        "ALTER TABLE toolwire_calls ADD COLUMN lease double precision",
        "ALTER TABLE toolwire_calls DROP CONSTRAINT toolwire_calls_state_check",
        "ALTER TABLE toolwire_calls ADD CONSTRAINT toolwire_calls_state_check "
        "CHECK (state IN ('started', 'settled', 'deferred'))",
        "ALTER TABLE toolwire_runs ADD COLUMN version integer NOT NULL DEFAULT 0",
    ),
}

# The statements of the SQLite backend, in PostgreSQL's words (see there).
_SETTLE = (
    "INSERT INTO toolwire_calls (run_id, round, call_id, tool, arguments, idempotent, state, "
    "result, started, settled, attempt, owner) VALUES (%s, %s, %s, %s, %s, %s, 'settled', %s, "
    "%s, %s, %s, %s) ON CONFLICT (run_id, round, call_id) DO UPDATE SET state = 'settled', "
    "result = excluded.result, settled = excluded.settled, lease = NULL "
    "WHERE toolwire_calls.state = 'started' AND toolwire_calls.attempt = excluded.attempt "
    "AND toolwire_calls.owner IS NOT DISTINCT FROM excluded.owner"
)

_WAIT = (
    "UPDATE toolwire_calls SET state = 'deferred', lease = NULL WHERE run_id = %s AND round = %s "
    "AND call_id = %s AND state = 'started' AND attempt = %s AND owner IS NOT DISTINCT FROM %s"
)

_START = (
    "INSERT INTO toolwire_calls (run_id, round, call_id, tool, arguments, idempotent, state, "
    "result, started, settled, attempt, owner, lease) VALUES (%s, %s, %s, %s, %s, %s, "
    "'started', NULL, %s, NULL, 1, %s, %s) ON CONFLICT (run_id, round, call_id) DO NOTHING"
)

_TAKE_OVER = (
    "UPDATE toolwire_calls SET attempt = attempt + 1, state = 'started', started = %s, "
    "tool = %s, arguments = %s, owner = %s, lease = %s WHERE run_id = %s AND round = %s "
    "AND call_id = %s AND attempt = %s AND state = %s AND owner IS NOT DISTINCT FROM %s "
    "AND lease IS NOT DISTINCT FROM %s"
)

_RUN = (
    "INSERT INTO toolwire_runs (run_id, head, messages, tool_calls, sources, updated, version) "
    "VALUES (%s, %s, %s, %s, %s, %s, 1) ON CONFLICT (run_id) DO UPDATE SET "
    "head = excluded.head, messages = excluded.messages, tool_calls = excluded.tool_calls, "
    "sources = excluded.sources, updated = excluded.updated, "
    "version = toolwire_runs.version + 1 "
    "WHERE %s::integer IS NULL OR toolwire_runs.version = %s RETURNING version"
)

_CALLS_OF_ROUND = (
    "SELECT call_id, tool, arguments, idempotent, state, result, started, attempt, owner, lease "
    "FROM toolwire_calls WHERE run_id = %s AND round = %s"
)

_RENEW = (
    "UPDATE toolwire_calls SET lease = %s WHERE run_id = %s AND round = %s AND call_id = %s "
    "AND state = 'started' AND attempt = %s AND owner = %s"
)


class PostgresStore:
    """Ledger rows in a PostgreSQL database (tables ``toolwire_*``), for workers on many
    machines. Concurrent workers get the same contract as SQLite: a call's ``started`` row is
    inserted once (``ON CONFLICT DO NOTHING``), taken over only by compare-and-set on the row
    as read (attempt, state, owner, lease) under the row's lock, and settled or deferred once,
    by its owner at its attempt. The schema is created on first use (under an advisory lock)
    and its version kept in ``toolwire_ledger_schema``.

    :raises LedgerError: when psycopg is not installed (``pip install 'toolwire[postgres]'``).
    """

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise LedgerError(
                f"[ledger] url = {without_password(url)!r} needs the PostgreSQL driver psycopg, "
                "which is not installed: pip install 'toolwire[postgres]' (or remove url to use "
                "the SQLite ledger)",
                path="$.ledger.url",
            ) from None
        self._psycopg = psycopg
        self._url = url
        self.location = without_password(url)
        self._db: psycopg.Connection[Any] | None = None

    def _connect(self) -> psycopg.Connection[Any]:
        if self._db is None or self._db.closed:
            db = self._psycopg.connect(self._url, autocommit=True, connect_timeout=10)
            try:
                self._prepare(db)
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    def _prepare(self, db: psycopg.Connection[Any]) -> None:
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
            db.execute("CREATE TABLE IF NOT EXISTS toolwire_ledger_schema (version integer)")
            row = db.execute("SELECT max(version) FROM toolwire_ledger_schema").fetchone()
            version = row[0] if row is not None and row[0] is not None else 0
            if version > SCHEMA_VERSION:
                raise LedgerError(
                    f"the ledger {self.location!r} has schema version {version}, newer than "
                    f"this toolwire knows ({SCHEMA_VERSION}): upgrade toolwire",
                    path="$.ledger.url",
                )
            for target in sorted(_MIGRATIONS):
                if target > version:
                    for statement in _MIGRATIONS[target]:
                        db.execute(statement)
                    db.execute("INSERT INTO toolwire_ledger_schema VALUES (%s)", (target,))

    def _use(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """``work`` on the connection; a connection that broke is dropped, to reconnect next."""
        db = self._connect()
        try:
            return work(db)
        except self._psycopg.OperationalError:
            self.close()
            raise

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
        key = (row.run_id, row.round, row.call_id)

        def work(db: psycopg.Connection[Any]) -> tuple[int, int | None]:
            with db.transaction():
                version = _write(db, settled, record)
                values = (*key, row.tool, row.arguments, row.idempotent, row.at)
                if db.execute(_START, (*values, row.owner, row.lease)).rowcount:
                    return 1, version
                if takeover is not None:
                    found = (takeover.attempt, takeover.state, takeover.owner, takeover.lease)
                    moved = (row.at, row.tool, row.arguments, row.owner, row.lease)
                    if db.execute(_TAKE_OVER, (*moved, *key, *found)).rowcount:
                        return takeover.attempt + 1, version
                found_row = db.execute(
                    "SELECT state, attempt FROM toolwire_calls WHERE run_id = %s AND round = %s "
                    "AND call_id = %s",
                    key,
                ).fetchone()
                state, attempt = found_row if found_row is not None else ("gone", 0)
                raise claimed(row, state, attempt)

        return self._use(work)

    def write(self, settled: Sequence[SettledRow], record: RunRecord | None) -> int | None:
        if not settled and record is None:
            return None

        def work(db: psycopg.Connection[Any]) -> int | None:
            with db.transaction():
                return _write(db, settled, record)

        return self._use(work)

    def renew(self, calls: Sequence[tuple[str, int, str, int]], owner: str, lease: float) -> None:
        if not calls:
            return

        def work(db: psycopg.Connection[Any]) -> None:
            with db.transaction(), db.cursor() as cursor:
                cursor.executemany(_RENEW, [(lease, *call, owner) for call in calls])

        self._use(work)

    def calls(self, run_id: str, round: int) -> list[CallRow]:
        def work(db: psycopg.Connection[Any]) -> list[CallRow]:
            rows = db.execute(_CALLS_OF_ROUND, (run_id, round)).fetchall()
            return [call_row(*found) for found in rows]

        return self._use(work)

    def stored_runs(self, run_ids: Sequence[str]) -> set[str]:
        def work(db: psycopg.Connection[Any]) -> set[str]:
            rows = db.execute(
                "SELECT run_id FROM toolwire_runs WHERE run_id = ANY(%s)", (list(run_ids),)
            ).fetchall()
            return {row[0] for row in rows}

        return self._use(work)

    def load_run(self, run_id: str, *, calls: bool = False) -> StoredRun | None:
        def work(db: psycopg.Connection[Any]) -> StoredRun | None:
            # One snapshot (REPEATABLE READ: taken at the first SELECT) for the head, its rows
            # and its last round's calls.
            with db.transaction():
                db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                head = db.execute(
                    "SELECT head, messages, tool_calls, sources, version FROM toolwire_runs "
                    "WHERE run_id = %s",
                    (run_id,),
                ).fetchone()
                if head is None:
                    return None
                rows = db.execute(
                    "SELECT kind, seq, item FROM toolwire_run_items WHERE run_id = %s",
                    (run_id,),
                ).fetchall()
                data = assemble(run_id, head[0], (head[1], head[2], head[3]), rows)
                found = (
                    db.execute(_CALLS_OF_ROUND, (run_id, last_round(data))).fetchall()
                    if calls
                    else []
                )
            return StoredRun(data, head[4], [call_row(*row) for row in found])

        return self._use(work)


def _write(
    db: psycopg.Connection[Any], settled: Sequence[SettledRow], record: RunRecord | None
) -> int | None:
    with db.cursor() as cursor:
        if settled:
            done = [settle_values(s) for s in settled if s.state == "settled"]
            waiting = [wait_values(s) for s in settled if s.state == "deferred"]
            if done:
                cursor.executemany(_SETTLE, done)
            if waiting:
                cursor.executemany(_WAIT, waiting)
        if record is None:
            return None
        run_id = record.run_id
        expected = record.expected
        stored = cursor.execute(
            _RUN, (run_id, record.head, *record.lengths, time.time(), expected, expected)
        ).fetchone()
        if stored is None:
            assert expected is not None
            raise run_claimed(run_id, expected)
        for kind in record.truncate:
            cursor.execute(
                "DELETE FROM toolwire_run_items WHERE run_id = %s AND kind = %s AND seq >= %s",
                (run_id, kind, record.lengths[KINDS.index(kind)]),
            )
        if record.rows:
            cursor.executemany(
                "INSERT INTO toolwire_run_items (run_id, kind, seq, item) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (run_id, kind, seq) DO UPDATE SET item = excluded.item",
                [(run_id, kind, seq, item) for kind, seq, item in record.rows],
            )
        version: int = stored[0]
        return version
