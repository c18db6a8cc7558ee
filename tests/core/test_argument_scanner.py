"""The streaming argument reader: any split of any JSON object gives its keys and values."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from toolwire.events import ArgumentScanner

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def read(pieces: list[str]) -> dict[str, str]:
    scanner = ArgumentScanner()
    shown: dict[str, str] = {}
    for piece in pieces:
        for key, text in scanner.feed(piece):
            if text is None:
                assert key not in shown
                shown[key] = ""
            else:
                shown[key] += text
    return shown


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@given(
    st.dictionaries(st.text(), _values, max_size=5),
    st.lists(st.integers(min_value=0), max_size=12),
    st.booleans(),
    st.booleans(),
)
def test_every_split_shows_each_key_once_with_its_value(
    arguments: dict[str, Any], cuts: list[int], ascii_only: bool, spaced: bool
):
    text = json.dumps(
        arguments, ensure_ascii=ascii_only, separators=(", ", ": ") if spaced else (",", ":")
    )
    shown = read(split(text, cuts))
    assert list(shown) == list(arguments)
    for key, value in arguments.items():
        if isinstance(value, str):
            assert shown[key] == value
        else:
            # Other values come as their JSON text, as written by the model.
            assert json.loads(shown[key]) == value


def test_escapes_and_surrogate_pairs_split_anywhere_decode():
    text = json.dumps({"s": 'a"b\\c\n😀é\t/'}, ensure_ascii=True)
    for cut in range(len(text) + 1):
        assert read([text[:cut], text[cut:]]) == {"s": 'a"b\\c\n😀é\t/'}


def test_what_is_not_an_object_shows_nothing():
    assert read(['["a", "b"]']) == {}
    assert read(["plain text"]) == {}
