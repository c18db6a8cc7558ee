"""JSON written by orjson, with the standard encoder's answer wherever orjson refuses a value.

orjson writes a conversation's request body or a run's JSON several times faster than the
standard encoder (an order of magnitude with indentation, which the standard library writes in
Python). It refuses what JSON has no form for (an integer past 64 bits, a lone surrogate, a key
that is not a string): those values get exactly what the standard encoder made of them before.
A float that is not finite is written ``null`` (the standard encoder writes ``NaN``, which no
JSON reader accepts).

Reading stays with the standard library (orjson reads integers past 64 bits as floats, and
refuses ``NaN``, lone surrogate escapes, byte-order marks, UTF-16 and nesting past 1024), called
at its C scanner directly for the one small text of each streamed event and for a whole answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

import orjson

__all__ = ["json_bytes", "json_text", "json_value", "json_value_of_bytes"]

# The standard decoder's own C scanner: what json.loads runs after two regex matches and three
# Python calls that a text without surrounding whitespace does not need.
# (typeshed does not declare the decoder's scanner attribute.)
_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def json_bytes(value: Any) -> bytes:
    """``value`` as compact JSON in UTF-8, for a request body.

    :raises TypeError: for a value JSON has no form for (as :func:`json.dumps` raises it).
    """
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value).encode("ascii")


def json_text(value: Any, *, indent: bool = False) -> str:
    """``value`` as JSON text for people and pipes: non-ASCII as it is, anything without a JSON
    form as its ``str``, indented by two spaces with ``indent``."""
    # Dates and dataclasses go to ``str`` too, as with the standard encoder.
    option = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
    if indent:
        option |= orjson.OPT_INDENT_2
    try:
        return orjson.dumps(value, default=str, option=option).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value, ensure_ascii=False, indent=2 if indent else None, default=str)


def json_value(text: str) -> Any:
    """The value of the JSON text ``text``: exactly what :func:`json.loads` returns or raises.

    A text that is one value with nothing around it (what servers send per event) is read by the
    scanner alone; any other (whitespace around the value, no value, trailing data) is read by
    :func:`json.loads`, which returns or raises as it always does.
    """
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:
        return json.loads(text)
    return value if end == len(text) else json.loads(text)


# json.loads guesses the encoding of bytes from their start: a byte-order mark (UTF-32, UTF-16,
# UTF-8 with BOM, opening with one of these bytes) or a zero byte among the first two (UTF-16 or
# UTF-32 without one). Any other start is UTF-8 to it.
_NOT_PLAIN_UTF8: Final = (b"\x00", b"\xef", b"\xfe", b"\xff")


def json_value_of_bytes(raw: bytes) -> Any:
    """The value of the JSON document ``raw``: exactly what :func:`json.loads` returns or raises.

    Bytes that json.loads takes for UTF-8 (no byte-order mark, no zero byte in the first two) are
    decoded as it decodes them and read by :func:`json_value`, without the encoding guess and
    the calls around the scanner; any others are read by :func:`json.loads`.
    """
    if raw[:1] in _NOT_PLAIN_UTF8 or raw[1:2] == b"\x00":
        return json.loads(raw)
    return json_value(raw.decode("utf-8", "surrogatepass"))
