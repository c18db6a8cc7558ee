"""Stopping a reply that loops: what is passed on, what is held back, and what is dropped."""

from __future__ import annotations

import pytest

from toolwire_llamacpp._repeats import RepeatStop


def _feed(stop: RepeatStop, pieces: list[str]) -> tuple[str, int]:
    """The text passed on, and how many pieces were fed before the loop was seen."""
    out = []
    for count, piece in enumerate(pieces, 1):
        out.append(stop.feed(piece))
        if stop.repeated:
            return "".join(out), count
    out.append(stop.flush())
    return "".join(out), len(pieces)


def test_text_that_never_repeats_is_passed_on_whole_and_late_by_the_window() -> None:
    stop = RepeatStop(3)
    assert [stop.feed(p) for p in ["a", "b", "c", "d", "e"]] == ["", "", "", "a", "b"]
    assert stop.flush() == "cde"
    assert not stop.repeated


def test_a_loop_stops_and_keeps_the_text_before_the_repeat() -> None:
    preamble = ["103", " dollars", " bill", " +"]
    loop = [" 18", "%", " tip", " =", " 103", ".18", " dollars", " bill", " +"]
    text, fed = _feed(RepeatStop(4), preamble + loop * 20)
    # The loop started after "103": one turn of it is kept.
    assert text == "103 dollars bill + 18% tip = 103.18"
    # Seen one window into the second turn of the loop, not at the token limit.
    assert fed == 1 + len(loop) + 4


@pytest.mark.parametrize("window", [1, 2, 5, 16])
def test_a_loop_shorter_or_longer_than_the_window_keeps_one_turn_of_it(window: int) -> None:
    text, _ = _feed(RepeatStop(window), ["2345 is", " 7", " *"] * 30)
    assert text == "2345 is 7 *"


def test_a_repeat_shorter_than_the_window_is_text() -> None:
    pieces = ["The", " sum", " is", " 4", ".", " The", " sum", " is", " 4", "!", " Done"]
    text, fed = _feed(RepeatStop(5), pieces)
    assert text == "".join(pieces)
    assert fed == len(pieces)


def test_nothing_is_passed_on_after_the_loop_is_seen() -> None:
    stop = RepeatStop(1)
    assert stop.feed("a") == ""
    assert stop.feed("a") == "a"
    assert stop.repeated
    assert stop.feed("b") == ""
    assert stop.flush() == ""


def test_the_window_is_at_least_one_piece() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        RepeatStop(0)
