"""Decoding of HTML bytes and normalisation of text documents."""

from __future__ import annotations

import codecs
import re

__all__ = ["check_encoding", "decode_html", "normalize_text_document"]

# Labels whose meaning on the web (WHATWG Encoding Standard) differs from Python's codec of the
# same name, or that Python does not know.
_WEB_ENCODING_LABELS = {
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "iso-8859-9": "cp1254",
    "latin5": "cp1254",
    "iso-8859-11": "cp874",
    "tis-620": "cp874",
    "windows-874": "cp874",
    "gb2312": "gbk",
    "gb_2312": "gbk",
    "x-gbk": "gbk",
    "big5": "big5hkscs",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "windows-31j": "cp932",
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",
    "iso-8859-8-i": "iso8859-8",
    "unicode-1-1-utf-8": "utf-8",
    "x-mac-roman": "mac-roman",
    "macintosh": "mac-roman",
    "x-mac-cyrillic": "mac-cyrillic",
}

# A page cannot declare UTF-16 in an ASCII-readable <meta>: browsers read such a declaration as
# UTF-8 (WHATWG "prescan"), and so do we.
_META_UTF16 = {"utf-16", "utf-16le", "utf-16be", "utf16"}

_DECLARATION = re.compile(
    rb"""<meta[^>]*?charset\s*=\s*["']?\s*([a-z0-9_:.+-]+)"""
    rb"""|<\?xml[^>]*?encoding\s*=\s*["']([a-z0-9_:.+-]+)""",
    re.IGNORECASE,
)
_PRESCAN_BYTES = 8192
_LINE_BREAKS = re.compile(r"\r\n?")


def _codec_name(label: str) -> str | None:
    """Return the Python codec for an encoding label as the web reads it, or None if unknown."""
    key = label.strip().lower()
    name = _WEB_ENCODING_LABELS.get(key, key)
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _declared_encoding(data: bytes) -> str | None:
    """Find the charset a page declares in its first bytes (``<meta>`` or XML declaration)."""
    match = _DECLARATION.search(data, 0, _PRESCAN_BYTES)
    if match is None:
        return None
    label = (match.group(1) or match.group(2)).decode("ascii").lower()
    if label in _META_UTF16:
        return "utf-8"
    return _codec_name(label)


def check_encoding(encoding: str) -> str:
    """Return the Python codec for an encoding label given by a caller.

    :raises ValueError: if the label names no known encoding.
    """
    codec = _codec_name(encoding)
    if codec is None:
        raise ValueError(
            f"unknown encoding {encoding!r} for the HTML bytes: give a label such as "
            "'utf-8', 'windows-1252' or 'shift_jis', or None to detect it from the page"
        )
    return codec


def decode_html(data: bytes, encoding: str | None = None) -> str:
    """Decode HTML bytes to text.

    The order of precedence follows browsers: a byte-order mark, then ``encoding`` (the charset
    of an HTTP ``Content-Type`` header, typically), then a ``<meta charset>`` or
    ``<meta http-equiv="Content-Type">`` declaration near the top of the page, then UTF-8.
    Bytes that are invalid in the chosen encoding become U+FFFD.

    :raises ValueError: if ``encoding`` is not a known encoding label.
    """
    explicit = None if encoding is None else check_encoding(encoding)
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8) :].decode("utf-8", errors="replace")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    chosen = explicit or _declared_encoding(data) or "utf-8"
    return data.decode(chosen, errors="replace")


def normalize_text_document(body: str) -> str:
    """Return a text document with unified line endings.

    Windows (CRLF) and classic Mac (CR) line endings become LF, and a leading byte-order mark
    is dropped; nothing else changes.
    """
    if body.startswith("\ufeff"):
        body = body[1:]
    if "\r" not in body:
        return body
    return _LINE_BREAKS.sub("\n", body)
