"""The contract between the tool-effect ledger and its storage backends (SQLite, PostgreSQL)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import attrs

from ..config import ConfigError
from ._journal import RunRecord

SCHEMA_VERSION = 2
"""The ledger schema this toolwire writes. 1: a run stored whole as one snapshot; 2: a run as
a head and append-only item rows, and calls with an attempt counter."""


class LedgerError(ConfigError):
    """The ledger cannot be used as ``[ledger]`` configures it (a missing driver, a schema from a
    newer toolwire); the message names the setting and what to do."""


class CallClaimed(RuntimeError):
    """Another process started this call first: it must not run here too."""


@attrs.frozen(kw_only=True)
class StartedRow:
    """A ``started`` row: a call about to run (``arguments`` as JSON)."""

    run_id: str
    round: int
    call_id: str
    tool: str
    arguments: str
    idempotent: bool
    at: float


@attrs.frozen(kw_only=True)
class SettledRow:
    """A ``settled`` row: a call that ran, with its result (both as JSON)."""

    run_id: str
    round: int
    call_id: str
    tool: str
    arguments: str
    idempotent: bool
    result: str
    at: float


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


class LedgerStore(Protocol):
    """Storage of the ledger's rows. Every method is one transaction; the backends share one
    contract test suite (``tests/core/ledger``).

    Calls are keyed by ``(run_id, round, call_id)`` and have at most one row, which goes from
    ``started`` to ``settled`` once: a second settlement of the same call changes nothing.
    """

    location: str
    """Where the rows are, for messages (a path, or a URL without its password)."""

    def start(
        self,
        row: StartedRow,
        settled: Sequence[SettledRow],
        record: RunRecord | None,
        *,
        takeover: int | None,
    ) -> None:
        """Commit ``settled``, ``record`` and the ``started`` row of a call together.

        The call must have no row yet, or, with ``takeover``, a ``started`` row at that attempt
        (a fresh decision to run again a call whose process ended): its attempt goes up by one.

        :raises CallClaimed: when the call has a row and may not be taken over (another process
            started it, or took it over first); nothing is committed then.
        """
        ...

    def write(self, settled: Sequence[SettledRow], record: RunRecord | None) -> None:
        """Commit ``settled`` rows (a call already settled keeps its row) and ``record``."""
        ...

    def calls(self, run_id: str, round: int) -> list[CallRow]:
        """Every call row of one round of a run."""
        ...

    def load_run(self, run_id: str) -> dict[str, Any] | None:
        """The run as last written (``Run.to_json(events=False)``), or None."""
        ...

    def close(self) -> None:
        """Release the connection (the next use opens it again)."""
        ...
