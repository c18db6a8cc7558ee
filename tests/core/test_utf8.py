"""``toolwire.utf8``: text with lone surrogates made writable to UTF-8 sinks."""

from __future__ import annotations

import json
import os

from hypothesis import given
from hypothesis import strategies as st

from toolwire.utf8 import has_lone_surrogates, utf8_json, utf8_text

ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()))


@given(
    value=st.recursive(
        ANY_TEXT | st.integers(),
        lambda inner: st.dictionaries(ANY_TEXT, inner) | st.lists(inner),
        max_leaves=8,
    )
)
def test_json_text_encodes_as_utf8_and_reads_back_the_same_value(value: object) -> None:
    text = utf8_json(json.dumps(value, ensure_ascii=False))
    text.encode("utf-8")
    assert json.loads(text) == json.loads(json.dumps(value))


def test_a_file_name_that_is_not_utf8_shows_its_byte() -> None:
    name = os.fsdecode(b"report-\xff.txt")
    assert has_lone_surrogates(name)
    assert utf8_text(name) == "report-\\xff.txt"
    assert utf8_text("a\ud800b") == "a\\ud800b"


@given(text=ANY_TEXT)
def test_text_without_lone_surrogates_comes_back_itself(text: str) -> None:
    shown = utf8_text(text)
    shown.encode("utf-8")
    if not has_lone_surrogates(text):
        assert shown is text
        assert utf8_json(text) is text
