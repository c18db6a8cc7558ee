"""The batch output file: one JSON line per finished run, appended safely, read back on restart."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TextIO

import attrs

from .._json.fast import json_text
from ..utf8 import utf8_json

_RECORD_START = b'{"id":'
"""How every record line begins (``id`` is a record's first key)."""


class BatchOutputError(Exception):
    """The output file cannot be used (unreadable, or a complete line that is not a record)."""


@attrs.frozen(kw_only=True)
class OutputState:
    """What an existing output file holds: the ids written, and whether a torn line was cut."""

    ids: frozenset[str]
    dropped_partial: bool


def scan_output(path: Path, *, input: Path | None = None) -> OutputState:
    """Read the ids already in ``path``, then cut a half-written last line off the file.

    A line is complete once its newline is written (each record is written as one line with
    its newline); text after the last newline is what a killed process left half-written. The
    whole file is checked before anything is cut: every complete line must be a JSON object with
    a string ``id``, and the text after the last newline must begin as a record does
    (``{"id":``), else the file is not a batch output and :class:`BatchOutputError` says so,
    leaving it as it was. ``input``, when given, must not be the same file (also through a link).
    """
    if not path.exists():
        return OutputState(ids=frozenset(), dropped_partial=False)
    if input is not None and _same_file(path, input):
        raise BatchOutputError(
            f"the output file {str(path)!r} is the input file {str(input)!r}; records would be "
            "appended to the jobs and read back as done: choose another --out"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BatchOutputError(f"the output file {str(path)!r} cannot be read: {exc}") from None
    end = data.rfind(b"\n") + 1
    ids: set[str] = set()
    for number, raw in enumerate(data[:end].splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BatchOutputError(
                f"{path}:{number}: not a JSON line ({exc}); the file is not a batch output, "
                "choose another --out or fix the line"
            ) from None
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise BatchOutputError(
                f"{path}:{number}: a record without a string 'id'; the file is not a batch "
                "output, choose another --out or fix the line"
            )
        ids.add(record["id"])
    partial = data[end:]
    if partial and not (partial.startswith(_RECORD_START) or _RECORD_START.startswith(partial)):
        number = data.count(b"\n") + 1
        raise BatchOutputError(
            f"{path}:{number}: the last line is neither a record nor the start of one (it has no "
            "newline and does not begin with '{\"id\":'); the file is not a batch output, choose "
            "another --out"
        )
    if partial:
        with path.open("r+b") as handle:
            handle.truncate(end)
    return OutputState(ids=frozenset(ids), dropped_partial=bool(partial))


def _same_file(one: Path, other: Path) -> bool:
    """True when both paths name one file (through links, hard links included)."""
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


class OutputWriter:
    """Appends records to the output file, one ``write`` of one whole line each, flushed at once.

    A record reaches the operating system complete with its newline before the next run's
    record is written, so killing the process leaves at most one torn line (which
    :func:`scan_output` drops on the next start).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: TextIO | None = path.open("a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        """Append one record and flush it to the file."""
        if self._handle is None:
            raise BatchOutputError(f"the output file {str(self.path)!r} is closed")
        # orjson: a record line costs a few microseconds rather than a tenth of a millisecond.
        line = utf8_json(json_text(record))
        self._handle.write(line + "\n")
        self._handle.flush()

    def close(self) -> None:
        """Flush to disk (``fsync``) and close."""
        handle, self._handle = self._handle, None
        if handle is not None:
            try:
                handle.flush()
                os.fsync(handle.fileno())
            finally:
                handle.close()
