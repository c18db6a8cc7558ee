"""The SQLite backend's transactions: a write that fails, even at its commit, leaves none open."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolwire.loop._ledger_sqlite import _Transaction


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    """A connection in autocommit mode (as the backend's) to a new file of two tables, closed
    after the test."""
    db = sqlite3.connect(tmp_path / "t.sqlite3", isolation_level=None)
    try:
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
        # Checked at COMMIT: the only way SQLite refuses the commit itself on demand.
        db.execute(
            "CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER "
            "REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
        )
        yield db
    finally:
        db.close()


def test_a_commit_that_fails_is_rolled_back_and_the_connection_stays_usable(
    db: sqlite3.Connection,
) -> None:
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"), _Transaction(db):
        db.execute("INSERT INTO child (id, parent) VALUES (1, 99)")
    assert not db.in_transaction
    with _Transaction(db):
        db.execute("INSERT INTO parent (id) VALUES (99)")
        db.execute("INSERT INTO child (id, parent) VALUES (1, 99)")
    assert db.execute("SELECT id, parent FROM child").fetchall() == [(1, 99)]


def test_an_error_inside_rolls_back_what_was_written(db: sqlite3.Connection) -> None:
    def write() -> None:
        with _Transaction(db, "BEGIN IMMEDIATE"):
            db.execute("INSERT INTO parent (id) VALUES (1)")
            raise RuntimeError("the write failed")

    with pytest.raises(RuntimeError):
        write()
    assert not db.in_transaction
    assert db.execute("SELECT count(*) FROM parent").fetchone() == (0,)
