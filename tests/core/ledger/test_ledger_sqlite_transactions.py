"""The SQLite backend's transactions: a write that fails, even at its commit, leaves none open."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from toolwire.loop._ledger_sqlite import _Transaction


def _db(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    # Checked at COMMIT: the only way SQLite refuses the commit itself on demand.
    db.execute(
        "CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER "
        "REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)"
    )
    return db


def test_a_commit_that_fails_is_rolled_back_and_the_connection_stays_usable(
    tmp_path: Path,
) -> None:
    db = _db(tmp_path / "t.sqlite3")
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"), _Transaction(db):
        db.execute("INSERT INTO child (id, parent) VALUES (1, 99)")
    assert not db.in_transaction
    with _Transaction(db):
        db.execute("INSERT INTO parent (id) VALUES (99)")
        db.execute("INSERT INTO child (id, parent) VALUES (1, 99)")
    assert db.execute("SELECT id, parent FROM child").fetchall() == [(1, 99)]


def test_an_error_inside_rolls_back_what_was_written(tmp_path: Path) -> None:
    db = _db(tmp_path / "t.sqlite3")

    def write() -> None:
        with _Transaction(db, "BEGIN IMMEDIATE"):
            db.execute("INSERT INTO parent (id) VALUES (1)")
            raise RuntimeError("the write failed")

    with pytest.raises(RuntimeError):
        write()
    assert not db.in_transaction
    assert db.execute("SELECT count(*) FROM parent").fetchone() == (0,)
