"""Conversations kept in SQLite: their titles, the last run's messages and the page's view log."""

from __future__ import annotations

import builtins
import json
import os
import sqlite3
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from toolwire.sqlite import use_wal
from toolwire.utf8 import utf8_json, utf8_text

DATABASE_FILE_NAME = "webui.sqlite3"
_TITLE_LENGTH = 60
_BUSY_TIMEOUT = 5.0  # seconds a write (or the switch to WAL) waits for another process

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    run TEXT
);
CREATE TABLE IF NOT EXISTS grants (
    conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    scope TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (conversation, scope, value)
);
CREATE TABLE IF NOT EXISTS views (
    conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (conversation, seq)
);
"""


def default_database_path() -> Path:
    """``$XDG_DATA_HOME/toolwire/webui.sqlite3``, else under ``~/.local/share``."""
    base = os.environ.get("XDG_DATA_HOME")
    root = Path(base) if base else Path.home() / ".local" / "share"
    return root / "toolwire" / DATABASE_FILE_NAME


@attrs.frozen(kw_only=True)
class ConversationRecord:
    """One stored conversation: id, title, times (seconds since the epoch) and its last run."""

    id: str
    title: str
    created: float
    updated: float
    run: Mapping[str, Any] | None = None

    def summary(self) -> dict[str, Any]:
        """What the page's conversation list shows."""
        return {"id": self.id, "title": self.title, "updated": self.updated}


class ConversationStore:
    """Conversations in one SQLite file (``":memory:"`` for a store that lives with the process).

    Each conversation keeps the JSON of its last run (whose messages the next turn continues)
    and the log of view messages the page replays when it opens the conversation.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        target = default_database_path() if path is None else path
        if str(target) != ":memory:":
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        self.path = str(target)
        db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT, isolation_level=None)
        try:
            db.execute("PRAGMA foreign_keys = ON")
            use_wal(db, timeout=_BUSY_TIMEOUT)
            db.executescript(_SCHEMA)
        except BaseException:  # a file that is no database, a store locked past the timeout
            db.close()
            raise
        self._db = db

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def create(self, title: str = "New conversation") -> ConversationRecord:
        """A new, empty conversation."""
        now = time.time()
        record = ConversationRecord(
            id=uuid.uuid4().hex, title=utf8_text(title), created=now, updated=now
        )
        self._db.execute(
            "INSERT INTO conversations (id, title, created, updated) VALUES (?, ?, ?, ?)",
            (record.id, record.title, now, now),
        )
        return record

    def list(self) -> list[ConversationRecord]:
        """Every conversation, the most recently updated first."""
        rows = self._db.execute(
            "SELECT id, title, created, updated FROM conversations ORDER BY updated DESC, id"
        ).fetchall()
        return [ConversationRecord(id=r[0], title=r[1], created=r[2], updated=r[3]) for r in rows]

    def get(self, conversation_id: str) -> ConversationRecord | None:
        """The conversation with this id, with its last run, or None."""
        row = self._db.execute(
            "SELECT id, title, created, updated, run FROM conversations WHERE id = ?",
            (conversation_id,),
        ).fetchone()
        if row is None:
            return None
        run = json.loads(row[4]) if row[4] else None
        return ConversationRecord(id=row[0], title=row[1], created=row[2], updated=row[3], run=run)

    def retitle_if_new(self, conversation_id: str, first_prompt: str) -> None:
        """Name a conversation after its first prompt (a title already given stays)."""
        title = utf8_text(" ".join(first_prompt.split()))
        if len(title) > _TITLE_LENGTH:
            title = title[: _TITLE_LENGTH - 1] + "…"
        self._db.execute(
            "UPDATE conversations SET title = ? WHERE id = ? AND run IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM views WHERE conversation = ?)",
            (title or "Untitled", conversation_id, conversation_id),
        )

    def save_run(self, conversation_id: str, run: Mapping[str, Any]) -> None:
        """Keep the JSON of the conversation's last run."""
        self._db.execute(
            "UPDATE conversations SET run = ?, updated = ? WHERE id = ?",
            (utf8_json(json.dumps(run, ensure_ascii=False)), time.time(), conversation_id),
        )

    def append_views(self, conversation_id: str, views: Iterable[Mapping[str, Any]]) -> None:
        """Add view messages to the end of the conversation's log."""
        rows = [utf8_json(json.dumps(v, ensure_ascii=False)) for v in views]
        if not rows:
            return
        with self._db:  # one transaction: a log is never half written
            self._db.execute("BEGIN")
            (last,) = self._db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM views WHERE conversation = ?",
                (conversation_id,),
            ).fetchone()
            self._db.executemany(
                "INSERT INTO views (conversation, seq, data) VALUES (?, ?, ?)",
                [(conversation_id, last + i, data) for i, data in enumerate(rows, 1)],
            )
            self._db.execute(
                "UPDATE conversations SET updated = ? WHERE id = ?", (time.time(), conversation_id)
            )

    def grants(self, conversation_id: str) -> builtins.list[tuple[str, str]]:
        """The conversation's own approval grants, ``(scope, value)`` in the order made."""
        rows = self._db.execute(
            "SELECT scope, value FROM grants WHERE conversation = ? ORDER BY rowid",
            (conversation_id,),
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def set_grants(self, conversation_id: str, grants: Iterable[tuple[str, str]]) -> None:
        """Replace the conversation's own approval grants."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM grants WHERE conversation = ?", (conversation_id,))
            self._db.executemany(
                "INSERT OR IGNORE INTO grants (conversation, scope, value) VALUES (?, ?, ?)",
                [(conversation_id, scope, value) for scope, value in grants],
            )

    def views(self, conversation_id: str) -> Sequence[dict[str, Any]]:
        """The conversation's view log, in order."""
        rows = self._db.execute(
            "SELECT data FROM views WHERE conversation = ? ORDER BY seq", (conversation_id,)
        ).fetchall()
        return [json.loads(r[0]) for r in rows]
