"""SQLite files that several processes open at once: switching a file to WAL without failing."""

from __future__ import annotations

import sqlite3
import time

__all__ = ["use_wal"]


def use_wal(db: sqlite3.Connection, *, timeout: float) -> None:
    """Switch the database of ``db`` to WAL, waiting up to ``timeout`` seconds for the file.

    The switch needs the file to itself, and SQLite reports "database is locked" at once, without
    waiting for the connection's busy timeout, when another connection holds a lock on it: the
    workers of a batch (or of a Ray cluster) opening one new file together. The switch is retried
    until ``timeout`` has passed, then the last "locked" error is raised. A file already in WAL
    switches at once; any other error is raised as it comes.

    :param db: an open connection, outside a transaction.
    :param timeout: seconds to keep trying, as long as a write on the file would wait.
    :raises ValueError: ``timeout`` is negative or not a number.
    """
    if not timeout >= 0:  # also refuses NaN
        raise ValueError(f"use_wal: timeout must be seconds >= 0, not {timeout!r}")
    deadline = time.monotonic() + timeout
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
