"""``json_value`` and ``json_value_of_bytes`` read JSON exactly as ``json.loads`` does: the same
values, the same errors."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest

from toolwire._json.fast import json_value, json_value_of_bytes
from toolwire.adapters import ProviderError, event_object, parse_arguments

TEXTS = [
    '{"a":1}',
    '{"choices":[{"index":0,"delta":{"content":"hi"}}],"usage":null}',
    "123456789012345678901234567890",  # past 64 bits: an int, never a float
    "-0",
    "1e400",
    '"\\ud800"',  # a lone surrogate escape
    '"caf\\u00e9 \u00e9"',
    "[]",
    "true",
    "null",
    " {} ",
    '{"a":1}\n',
    "\t[1]",
    '{"a":1} x',
    '{"a":1}{"b":2}',
    "",
    " ",
    "[1,2",
    "[1,]",
    '{"a" 1}',
    "nul",
    "\ufeff{}",
    '"unterminated',
    "[" * 100_000,
]


def _outcome(text: str | bytes, read: Any) -> tuple[str, Any]:
    try:
        value = read(text)
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)
    return "value", value


BODIES = [
    *(text.encode("utf-8", "surrogatepass") for text in TEXTS),
    b'{"a":"\xed\xa0\x80"}',  # a surrogate's UTF-8, which json.loads lets through
    b'{"a":"\xff"}',  # not UTF-8
    b"\xef\xbb\xbf{}",  # UTF-8 with a byte-order mark
    b"\xef\xbb",
    b"\x00",
    b"{\x00",
    b"1\x00\x00\x00",
    *('{"a": ["\u00e9"]}'.encode(codec) for codec in ("utf-16", "utf-16-le", "utf-16-be")),
    *('{"a": ["\u00e9"]}'.encode(codec) for codec in ("utf-32", "utf-32-le", "utf-32-be")),
    *("[]".encode(codec) for codec in ("utf-16-le", "utf-16-be")),
]


CASES = [
    *(pytest.param(json_value, text, id=f"text-{i}") for i, text in enumerate(TEXTS)),
    *(pytest.param(json_value_of_bytes, body, id=f"bytes-{i}") for i, body in enumerate(BODIES)),
]


@pytest.mark.parametrize(("read", "document"), CASES)
def test_the_fast_readers_read_as_json_loads(
    read: Callable[[Any], Any], document: str | bytes
) -> None:
    expected = _outcome(document, json.loads)
    got = _outcome(document, read)
    assert got == expected
    if expected[0] == "value":
        assert type(got[1]) is type(expected[1])


def test_json_value_reads_the_constants_json_loads_takes() -> None:
    assert math.isnan(json_value("NaN"))
    assert json_value("-Infinity") == -math.inf


def test_an_event_that_is_not_one_object_is_still_refused() -> None:
    assert event_object('{"type":"ping"}', "x") == {"type": "ping"}
    assert event_object(' {"type":"ping"}\n', "x") == {"type": "ping"}
    for data, says in [
        ('{"a":1} trailing', "is not JSON"),
        ("[1]", "is a JSON array, not an object"),
        ("", "is not JSON"),
    ]:
        with pytest.raises(ProviderError, match=says):
            event_object(data, "x")


def test_call_arguments_parse_as_before() -> None:
    assert parse_arguments('{"n": 12345678901234567890}') == ({"n": 12345678901234567890}, None)
    value, reason = parse_arguments('{"n": 1} {"m": 2}')
    assert value is None
    assert reason is not None
    assert "Extra data" in reason
    assert parse_arguments("[1]") == (None, "the arguments are a JSON array, not an object")
