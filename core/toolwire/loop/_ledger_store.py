"""The contract between the tool-effect ledger and its storage backends (SQLite, PostgreSQL)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple, Protocol

import attrs

from ..config import ConfigError
from ._journal import RunRecord

SCHEMA_VERSION = 3
"""The ledger schema this toolwire writes. 1: a run stored whole as one snapshot; 2: a run as
a head and append-only item rows, and calls with an attempt counter; 3: a started call's owner
and lease, and calls that wait for a decision after they started (state ``deferred``)."""


class LedgerError(ConfigError):
    """The ledger cannot be used as ``[ledger]`` configures it (a missing driver, a schema from a
    newer toolwire); the message names the setting and what to do."""


class CallClaimed(RuntimeError):
    """Another process started this call first: it must not run here too."""


class RunClaimed(RuntimeError):
    """Another process wrote the run since this one read or wrote it: a run is driven by one
    process at a time, and this one's view of it is not stored."""


def run_claimed(run_id: str, expected: int) -> RunClaimed:
    """The refusal of a write of a run another process wrote meanwhile."""
    return RunClaimed(
        f"run {run_id!r} was written by another process after this one read it (version "
        f"{expected}): a run is driven by one process at a time, and this one's view of it is "
        "not stored"
    )


class StartedRow(NamedTuple):
    """A ``started`` row: a call about to run (``arguments`` as JSON), by ``owner`` (a process,
    see :class:`~toolwire.loop._lease.Owner`) whose lease lasts until ``lease``. (A tuple: one
    is made for every call with side effects.)"""

    run_id: str
    round: int
    call_id: str
    tool: str
    arguments: str
    idempotent: bool
    at: float
    owner: str
    lease: float


class SettledRow(NamedTuple):
    """What a call that ran ends as: ``settled`` with its result (both as JSON), or ``deferred``
    (it asked for a decision while it ran; ``result`` None). A call that has a ``started`` row
    ends so only from that row: the same ``attempt`` by the same ``owner``. (A tuple: one is
    made for every call that ran.)"""

    run_id: str
    round: int
    call_id: str
    tool: str
    arguments: str
    idempotent: bool
    result: str | None
    at: float
    attempt: int = 1
    owner: str | None = None
    state: Literal["settled", "deferred"] = "settled"


@attrs.frozen(kw_only=True)
class Takeover:
    """A call's row as a ledger read it, to start the call again from: a ``started`` row whose
    owner let it go or whose lease lapsed, or a ``deferred`` one. Taking it over is a
    compare-and-set on exactly these values."""

    attempt: int
    state: str
    owner: str | None
    lease: float | None


@attrs.frozen(kw_only=True)
class CallRow:
    """A call as a backend returns it (``arguments`` and ``result`` as JSON)."""

    call_id: str
    tool: str
    arguments: str
    idempotent: bool
    settled: bool
    result: str | None
    started: float | None
    attempt: int
    state: str = "settled"
    owner: str | None = None
    lease: float | None = None

    def as_found(self) -> Takeover:
        """The row as read, for a takeover."""
        return Takeover(attempt=self.attempt, state=self.state, owner=self.owner, lease=self.lease)


class StoredRun(NamedTuple):
    """A run as a backend read it: its JSON (``Run.to_json(events=False)``), its version, and,
    when asked for, the rows of the calls of its last round, all from one read snapshot."""

    data: dict[str, Any]
    version: int
    calls: list[CallRow]


class LedgerStore(Protocol):
    """Storage of the ledger's rows. Every method is one transaction; the backends share one
    contract test suite (``tests/core/ledger``).

    Calls are keyed by ``(run_id, round, call_id)`` and have at most one row. Every change of
    a row that has a ``started`` state is a compare-and-set: ``started`` to ``settled`` or
    ``deferred`` by its owner at its attempt, once; ``started`` (lapsed) or ``deferred`` to
    ``started`` at the next attempt, from the row exactly as read; a lease renewed by its owner.
    """

    location: str
    """Where the rows are, for messages (a path, or a URL without its password)."""

    def start(
        self,
        row: StartedRow,
        settled: Sequence[SettledRow],
        record: RunRecord | None,
        *,
        takeover: Takeover | None,
    ) -> tuple[int, int | None]:
        """Commit ``settled``, ``record`` and the ``started`` row of a call together; the
        call's attempt, and the run's version when ``record`` was written.

        The call must have no row yet (attempt 1), or, with ``takeover``, a row exactly as
        ``takeover`` found it: its attempt goes up by one and ``row``'s owner holds it.

        :raises CallClaimed: when the call has a row and may not be taken over (another process
            started it, or took it over first); nothing is committed then.
        :raises RunClaimed: when ``record`` expects a version of the run that is not the stored
            one; nothing is committed then.
        """
        ...

    def write(self, settled: Sequence[SettledRow], record: RunRecord | None) -> int | None:
        """Commit ``settled`` rows and ``record``; the run's version when ``record`` was
        written. A call that was settled already keeps its row; a call started elsewhere since
        (another attempt, another owner) keeps that row.

        :raises RunClaimed: as :meth:`start`.
        """
        ...

    def renew(self, calls: Sequence[tuple[str, int, str, int]], owner: str, lease: float) -> None:
        """Extend to ``lease`` the lease of each call ``(run id, round, call id, attempt)``
        that ``owner`` still holds at that attempt."""
        ...

    def calls(self, run_id: str, round: int) -> list[CallRow]:
        """Every call row of one round of a run."""
        ...

    def load_run(self, run_id: str, *, calls: bool = False) -> StoredRun | None:
        """The run as last written (``Run.to_json(events=False)``) and its version (one more
        with each write), or None; with ``calls``, also every call row of its last round (its
        ``rounds``, :func:`~toolwire.loop._journal.last_round`). All of it is read in one
        snapshot: a write another process commits meanwhile (the run's next round, a call of
        it started) is in none of it or in all of it."""
        ...

    def stored_runs(self, run_ids: Sequence[str]) -> set[str]:
        """Those of ``run_ids`` that have a run written (one query, for a batch's jobs)."""
        ...

    def close(self) -> None:
        """Release the connection (the next use opens it again)."""
        ...
