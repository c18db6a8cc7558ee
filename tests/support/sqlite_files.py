"""Opening a SQLite file from a test: a connection closed when the block ends.

``with sqlite3.connect(path) as db:`` commits (or rolls back) at the end of the block but does not
close the connection; left to the collector, Python 3.13 reports it as an unclosed database
(``ResourceWarning``), which this suite's warnings-as-errors turns into a failure of whatever
test the collector happens to run in.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def sqlite_file(path: str | Path) -> Iterator[sqlite3.Connection]:
    """A connection to the SQLite file at ``path`` for the block: what the block wrote is
    committed when it ends (rolled back when it raises), and the connection is closed either
    way."""
    db = sqlite3.connect(path)
    try:
        with db:
            yield db
    finally:
        db.close()
