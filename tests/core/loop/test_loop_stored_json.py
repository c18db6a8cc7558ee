"""The JSON text the ledger stores: what it reads back as, for every kind of value a row holds."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import math

import pytest

from toolwire.loop._codec import stored_json


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int


def test_json_values_read_back_as_they_were_written() -> None:
    value = {"naïve": "日本", "n": [1, 2.5, None, True, False], "nested": {"k": []}}
    text = stored_json(value)
    assert "日本" in text  # not escaped
    assert json.loads(text) == value


def test_values_without_a_json_form_are_stored_as_their_str() -> None:
    when = dt.datetime(2024, 3, 31, 12, 0)
    stored = json.loads(stored_json({"when": when, "p": Point(1), "s": {3}, 4: "int key"}))
    assert stored == {"when": str(when), "p": "Point(x=1)", "s": "{3}", "4": "int key"}


def test_what_the_fast_encoder_refuses_gets_the_standard_encoders_answer() -> None:
    big = 2**80
    assert json.loads(stored_json({"big": big})) == {"big": big}
    # A lone surrogate gets its escape: text UTF-8 can hold, the same value read back.
    assert stored_json("\ud800") == '"\\ud800"'
    assert json.loads(stored_json("\ud800")) == "\ud800"


def test_a_float_that_is_not_finite_is_stored_as_null() -> None:
    stored = json.loads(stored_json({"a": math.nan, "b": math.inf, "c": 1.0}))
    assert stored == {"a": None, "b": None, "c": 1.0}


def test_enum_members_are_stored_as_their_values() -> None:
    assert json.loads(stored_json({"c": Colour.RED})) == {"c": "red"}


def test_without_orjson_the_standard_encoder_writes_the_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from toolwire.loop import _codec

    monkeypatch.setitem(sys.modules, "orjson", None)  # import orjson now raises ImportError
    monkeypatch.setattr(_codec, "_fast_json", None)
    value = {"a": [1, "é"], "when": dt.date(2024, 1, 2)}
    assert stored_json(value) == json.dumps(value, ensure_ascii=False, default=str)
