"""The spans and numbers a call's arguments may copy from the user's words."""

from __future__ import annotations

import json

import pytest

from toolwire_llamacpp._copies import MAX_SPANS, Copies


def spans(text: str) -> set[str]:
    return {json.loads(s) for s in Copies.from_texts([text]).spans}


@pytest.mark.parametrize(
    ("text", "whole", "cut"),
    [
        ("What is 17.5% of 2480?", "17.5% of 2480", "17.5%"),
        ("What's 15 percent of 80?", "15 percent of 80", "15 percent"),
        ("What is 2 to the 20th power?", "2 to the 20th power", "2 to the 20th"),
        ("What is the square root of 1764?", "the square root of 1764", "root of 1764"),
        ("What is 9:00 in New York in London time?", "New York", "New"),
        ("How many square feet is 20 square meters?", "square feet", "feet"),
        ("Add 123, 456 and 789.", "Add 123, 456 and 789", "123, 456"),
        ("What is 30 degrees Celsius in Fahrenheit?", "30 degrees Celsius", "30 degrees"),
    ],
)
def test_spans_do_not_cut_a_phrase(text: str, whole: str, cut: str) -> None:
    found = spans(text)
    assert whole in found
    assert cut not in found


def test_edges_are_trimmed_and_bare_numbers_left_to_numbers() -> None:
    found = spans('Convert "5 miles" to kilometers?')
    assert "kilometers" in found
    assert "kilometers?" not in found
    assert "5" not in found
    assert Copies.from_texts(['Convert "5 miles" to kilometers?']).numbers == ("5",)


def test_a_long_message_keeps_the_shortest_spans() -> None:
    long = " ".join(f"word{i}" for i in range(200))
    copies = Copies.from_texts([long])
    assert len(copies.spans) == MAX_SPANS
    assert '"word0"' in copies.spans


def test_spans_remember_the_words_they_were_taken_from() -> None:
    copies = Copies.from_texts(["How many pounds is 3 kg?", "and kg again"])
    assert copies.places['"3 kg"'] == (frozenset({4, 5}),)
    assert copies.places['"kg"'] == (frozenset({5}), frozenset({8}))
    assert copies.apart('"3 kg"', '"pounds"')
    assert copies.apart('"3 kg"', '"kg"')  # the second message wrote it again
    assert not copies.apart('"How many pounds"', '"pounds"')
    assert copies.apart('"unknown"', '"pounds"')


@pytest.mark.parametrize(
    ("text", "kept", "gone"),
    [
        ("How much is a 15% tip on a $80 bill?", "15% tip on a $80 bill", "15%"),
        ("When it is 8:30 in Berlin, what time is it in Tokyo?", "8:30 in Berlin", "Berlin"),
        ("What do 4 coffees at 3.75 each cost?", "4 coffees at 3.75 each", "3.75 each"),
    ],
)
def test_numbers_together_keep_every_number_of_the_question_in_one_span(
    text: str, kept: str, gone: str
) -> None:
    found = {json.loads(s) for s in Copies.from_texts([text], numbers_together=True).spans}
    assert kept in found
    if any(ch.isdigit() for ch in gone):
        assert gone not in found  # a span with some of the numbers only
    else:
        assert gone in found  # spans without a number are left alone
    assert gone in spans(text)  # off, every span stays


def test_numbers_together_read_the_last_turn_and_give_way_when_no_span_holds_them_all() -> None:
    earlier = "Convert 5 miles to km."
    found = {
        json.loads(s)
        for s in Copies.from_texts([earlier, "What about 7 kg in lb?"], numbers_together=True).spans
    }
    assert "7 kg" in found
    assert "5 miles" not in found
    # Numbers further apart than the longest span: every span stays.
    far = "1 " + "word " * 20 + "2"
    assert "1 word" in {
        json.loads(s) for s in Copies.from_texts([far], numbers_together=True).spans
    }
