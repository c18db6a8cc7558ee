"""Arithmetic as people write it, read by the calculator."""

from __future__ import annotations

import math

import pytest

from toolwire_basics import CalculationError, calculator, evaluate
from toolwire_basics._words import from_words


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("17.5% of 2480", 434),
        ("15 percent of 80", 12),
        ("37 times 43", 1591),
        ("256 multiplied by 12", 3072),
        ("Multiply 128 by 64", 8192),
        ("1024 divided by 16", 64),
        ("Divide 945 by 7", 135),
        ("4821 plus 3967", 8788),
        ("10000 minus 3457", 6543),
        ("Add 123, 456 and 789", 1368),
        ("the sum of 250 and 175", 425),
        ("subtract 3 from 10", 7),
        ("2 to the 20th power", 2**20),
        ("3 to the power of 7", 3**7),
        ("2 raised to the power of 10", 1024),
        ("15 squared", 225),
        ("12 cubed", 1728),
        ("the square root of 1764", 42),
        ("square root of (40 + 9)", 7),
        ("the cube root of 27", 3),
        ("the average of 4, 8, 15, 16, 23 and 42", 18),
        ("the mean of 10, 20 and 60", 30),
        ("5 factorial", 120),
        ("3 items at 4.25 each", 12.75),
        ("5 tickets for $12.50 apiece", 62.5),
        ("4 books costing 7.99 each", 31.96),
        ("81 divided by 9 plus 6", 15),
        ("What is 45 percent of 1200?", 540),
        ("3 x 4", 12),
    ],
)
def test_words_of_arithmetic(text: str, value: float) -> None:
    assert math.isclose(evaluate(text), value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a 15% tip on a $80 bill", 12),
        ("tip 20 percent of 45.50", 9.1),
        ("a €45.50 bill with a 15% tip", 52.325),
        ("the bill is $80. What do I pay in all with a 18% tip", 94.4),
        ("a $120 jacket is 25% off", 90),
        ("$40 after a 60% discount", 16),
        ("how much do I save with 70% off a €270 TV", 189),
        ("11 pizzas for the team and they're $33.50 ea", 368.5),
        ("6 hours at $19/hour", 114),
        ("7.5 hours a day for 5 days", 37.5),
        ("split $120 between 4 people", 30),
        ("the rent is 1500 and there are 3 of us / person", 500),
        ("what percent of 40 is 24", 60),
        ("24 out of 40 as a percentage", 60),
        ("take 37 away from 205", 168),
        ("the difference between 123 and 500", 377),
        ("I had 900 points and lost 123, how many are left", 777),
        ("born in 1990, how old will I turn in 2025", 35),
        ("3 x $33.49", 100.47),
        ("120 minus 20%", 96),
        ("avg of 41, 9, 16, 55, 89", 42),
        ("30, 88 and 41. wat's my avarage", 53),
        ("1529 and 1765 for me", 3294),
        ("€129.25 if I go with 20 percent", 25.85),
        ("sqrt 121", 11),
        ("80 + 15%", 92),
    ],
)
def test_everyday_word_problems_by_their_shape(text: str, value: float) -> None:
    assert math.isclose(evaluate(text), value)


@pytest.mark.parametrize(
    "text",
    [
        "the price of 3 apples",  # one number: nothing to combine
        "3 apples, 4 pears and 5 plums each",  # more numbers than the shape takes
        "15% of something",
    ],
)
def test_a_word_problem_of_no_known_shape_is_refused(text: str) -> None:
    with pytest.raises(CalculationError):
        evaluate(text)


def test_notation_without_words_is_left_as_written() -> None:
    assert from_words("(3 + 4) ** 2 / 7") == "(3 + 4) ** 2 / 7"
    assert from_words("sqrt(2) * pi") == "sqrt(2) * pi"


def test_words_that_are_not_arithmetic_are_still_refused() -> None:
    with pytest.raises(CalculationError, match="is not a valid arithmetic expression"):
        evaluate("the price of 3 apples")


async def test_the_tool_reports_the_words_it_was_given() -> None:
    result = await calculator.invoke({"expression": "2 to the 20th power"})
    assert result.is_ok
    assert result.content == "2 to the 20th power = 1048576"
