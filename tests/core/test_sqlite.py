"""``toolwire.sqlite.use_wal``: the switch to WAL waits for a file another connection holds."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from toolwire.sqlite import use_wal


def test_the_switch_waits_for_the_file_to_be_released(
    tmp_path: Path, hold_new_sqlite_file: Callable[[Path], None]
) -> None:
    path = tmp_path / "new.sqlite3"
    hold_new_sqlite_file(path)
    db = sqlite3.connect(path, isolation_level=None)
    try:
        use_wal(db, timeout=30.0)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        db.close()


def test_a_file_held_past_the_timeout_reports_locked(
    tmp_path: Path, hold_new_sqlite_file: Callable[[Path], None]
) -> None:
    path = tmp_path / "new.sqlite3"
    hold_new_sqlite_file(path)
    db = sqlite3.connect(path, isolation_level=None)
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            use_wal(db, timeout=0.0)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    finally:
        db.close()


@pytest.mark.parametrize("timeout", [-1.0, float("nan")])
def test_a_timeout_that_is_not_seconds_is_refused(timeout: float) -> None:
    db = sqlite3.connect(":memory:")
    try:
        with pytest.raises(ValueError, match=r"timeout must be seconds >= 0, not (-1\.0|nan)"):
            use_wal(db, timeout=timeout)
    finally:
        db.close()
