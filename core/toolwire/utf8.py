"""Text that every UTF-8 sink accepts, when it may hold lone surrogates.

A file name that is not UTF-8 reaches Python as a string with lone surrogates (``os.fsdecode``
writes each byte it cannot decode as ``\\udc80``–``\\udcff``), and so does a JSON ``"\\udcff"``
escape. Such a string cannot be encoded as UTF-8: a SQLite ``TEXT`` column, a file opened with
``encoding="utf-8"`` and an HTTP body all refuse it. Where text is written, it goes through one of
these first:

- :func:`utf8_json` for JSON text: each lone surrogate becomes its ``\\uXXXX`` escape, which any
  JSON reader turns back into the very same string (nothing is lost);
- :func:`utf8_text` for plain text shown to people and models: each surrogate escape becomes the
  byte it stands for, written ``\\xNN`` (``report-\\xff.txt``), any other lone surrogate
  ``\\uXXXX``.

Both return their argument itself when it holds no lone surrogate, which is decided without a
copy (an ASCII test, then one regular expression search).
"""

from __future__ import annotations

import functools
import re

__all__ = ["has_lone_surrogates", "lone_surrogates", "utf8_json", "utf8_text"]


@functools.cache
def lone_surrogates() -> re.Pattern[str]:
    """One lone surrogate (compiled on first use: most texts are ASCII and never need it)."""
    return re.compile("[\ud800-\udfff]")


def has_lone_surrogates(text: str) -> bool:
    """True when ``text`` holds a code point UTF-8 cannot encode (a lone surrogate)."""
    return not text.isascii() and lone_surrogates().search(text) is not None


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match[0]):04x}"


def utf8_json(text: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it) with every lone surrogate
    written as its ``\\uXXXX`` escape: the same JSON value, in text UTF-8 can encode.

    A raw surrogate can only stand inside a JSON string, where the escape means the same.
    """
    if not has_lone_surrogates(text):
        return text
    return lone_surrogates().sub(_escape, text)


def _shown(match: re.Match[str]) -> str:
    point = ord(match[0])
    if 0xDC80 <= point <= 0xDCFF:  # a byte os.fsdecode could not decode
        return f"\\x{point - 0xDC00:02x}"
    return f"\\u{point:04x}"


def utf8_text(text: str) -> str:
    """``text`` with every lone surrogate shown as an escape, so UTF-8 can encode it.

    A byte that a file name held and that is not UTF-8 (``os.fsdecode``'s surrogate escape) is
    shown ``\\xNN``; any other lone surrogate ``\\uXXXX``. Two different names can come out the
    same only when one of them spells such an escape with a real backslash.
    """
    if not has_lone_surrogates(text):
        return text
    return lone_surrogates().sub(_shown, text)
