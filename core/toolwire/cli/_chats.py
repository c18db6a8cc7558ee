"""The conversations of ``toolwire chat``: one JSON file each, next to the ledger.

A conversation file holds its id, title, times and the last run's JSON (its messages continue
the conversation; sensitive arguments are redacted, events left out). Files are written to a
temporary name and renamed into place, so a crash never leaves half a conversation, and are
created readable by their owner only: they hold what was said.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs

from ..config import LedgerConfig
from ..loop._ledger import ledger_path

CHATS_DIR_NAME = "chats"
_ID = re.compile(r"[0-9a-f]{12}")
_TITLE_LENGTH = 60


class ChatStoreError(Exception):
    """A conversation that does not exist or cannot be read; the message says which and why."""


def chats_directory(config: LedgerConfig) -> Path:
    """Where conversations live: ``chats/`` beside the ledger file (``[ledger] path``, else
    ``$XDG_DATA_HOME/toolwire``)."""
    return ledger_path(config).parent / CHATS_DIR_NAME


@attrs.frozen(kw_only=True)
class Conversation:
    """One saved conversation: ``run`` is the last run's JSON (None before the first turn);
    ``grants`` the approval grants made for it, ``(scope, value)`` pairs."""

    id: str
    title: str
    created: float
    updated: float
    run: dict[str, Any] | None = None
    grants: tuple[tuple[str, str], ...] = ()


def _title(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _TITLE_LENGTH else text[: _TITLE_LENGTH - 1] + "…"


class ChatStore:
    """The conversations in ``directory`` (created, owner-only, on first save)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def history_file(self) -> Path:
        """The line-editing history shared by every conversation."""
        return self.directory / "history"

    def new(self) -> Conversation:
        """A new, unsaved conversation with a fresh id."""
        now = time.time()
        return Conversation(id=secrets.token_hex(6), title="", created=now, updated=now)

    def save(
        self, conversation: Conversation, run: dict[str, Any], first_text: str
    ) -> Conversation:
        """Store ``run`` as the conversation's last run; returns the updated record."""
        saved = attrs.evolve(
            conversation,
            title=conversation.title or _title(first_text),
            updated=time.time(),
            run=run,
        )
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = json.dumps(attrs.asdict(saved), ensure_ascii=False, default=str)
        fd, temporary = tempfile.mkstemp(dir=self.directory, prefix=".chat-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:  # mkstemp creates it 0600
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self._path(saved.id))
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return saved

    def _path(self, conversation_id: str) -> Path:
        return self.directory / f"{conversation_id}.json"

    def load(self, conversation_id: str) -> Conversation:
        """The conversation with this id.

        :raises ChatStoreError: when there is none, or its file cannot be read.
        """
        if not _ID.fullmatch(conversation_id):
            raise ChatStoreError(
                f"{conversation_id!r} is not a conversation id (12 hexadecimal digits, as "
                f"`toolwire chat --list` shows them){self._known()}"
            )
        path = self._path(conversation_id)
        if not path.is_file():
            raise ChatStoreError(
                f"no conversation {conversation_id!r} in {self.directory}{self._known()}"
            )
        return self._read(path)

    def _read(self, path: Path) -> Conversation:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            run = data.get("run")
            if run is not None and not isinstance(run, dict):
                raise TypeError(f"'run' is a {type(run).__name__}, expected an object")
            grants = tuple((str(g[0]), str(g[1])) for g in data.get("grants") or ())
            return Conversation(
                id=str(data["id"]),
                title=str(data.get("title") or ""),
                created=float(data["created"]),
                updated=float(data["updated"]),
                run=run,
                grants=grants,
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            raise ChatStoreError(f"cannot read the conversation in {path}: {exc}") from None

    def conversations(self) -> list[Conversation]:
        """Every readable conversation, most recently updated first (unreadable files are
        left out; :meth:`load` names what is wrong with one)."""
        found = []
        if self.directory.is_dir():
            for path in self.directory.glob("*.json"):
                if not _ID.fullmatch(path.stem):
                    continue
                try:
                    found.append(self._read(path))
                except ChatStoreError:
                    continue
        return sorted(found, key=lambda c: c.updated, reverse=True)

    def last(self) -> Conversation:
        """The most recently updated conversation.

        :raises ChatStoreError: when there is none.
        """
        found = self.conversations()
        if not found:
            raise ChatStoreError(
                f"no saved conversation in {self.directory} to continue; start one with "
                "`toolwire chat`"
            )
        return found[0]

    def _known(self) -> str:
        found = self.conversations()[:5]
        if not found:
            return "; there are no saved conversations"
        return "; recent conversations: " + ", ".join(f"{c.id} ({c.title!r})" for c in found)
