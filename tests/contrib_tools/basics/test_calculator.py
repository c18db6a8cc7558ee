"""The calculator: answers, percent notation, bounds, and refusals naming the offending part."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire_basics import CalculationError, calculator, evaluate
from toolwire_basics._calculator import MAX_EXPONENT, format_number


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("7 // 2", 3),
        ("7 % 3", 1),
        ("7 % (-3)", -2),
        ("-2 ** 2", -4),
        ("2 ** -1", 0.5),
        ("2^10", 1024),
        ("3 × 4 ÷ 6", 2),
        ("17.5% * 2480", 434),
        ("17.5% of 2480", 434),
        ("2480 * 17.5%", 434),
        ("(10 + 5)%", 0.15),
        ("50%", 0.5),
        ("sqrt(16) + abs(-3)", 7),
        ("round(2.567, 2)", 2.57),
        ("round(2.5)", 2),
        ("round(1234, -2)", 1200),
        ("min(3, 1, 2) + max(4, 5)", 6),
        ("log(8, 2)", 3),
        ("ln(e)", 1),
        ("log10(1000)", 3),
        ("floor(-1.5) + ceil(1.2)", 0),
        ("factorial(5)", 120),
        ("gcd(12, 18) + lcm(4, 6)", 18),
        ("hypot(3, 4)", 5),
        ("degrees(pi)", 180),
        ("1e3 + 0.5", 1000.5),
    ],
)
def test_evaluates(expression: str, expected: float) -> None:
    assert evaluate(expression) == pytest.approx(expected)


def test_integers_stay_exact() -> None:
    assert evaluate("2 ** 200") == 2**200
    assert evaluate("factorial(25)") == math.factorial(25)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (434.0, "434"),
        (0.1 + 0.2, "0.3"),
        (1 / 3, "0.333333333333"),
        (2**70, str(2**70)),
        (1e20, "1e20"),
        (1.5e-7, "1.5e-7"),
        (-0.0, "0"),
    ],
)
def test_format_number(value: float, shown: str) -> None:
    assert format_number(value) == shown


@pytest.mark.parametrize(
    ("expression", "fragments"),
    [
        ("", ["empty"]),
        ("1/0", ["division by zero", "'1/0'"]),
        ("5 % 0", ["division by zero"]),
        ("0 ** -1", ["division by zero"]),
        ("x + 1", ["unknown name 'x'", "pi, e, tau", "functions are those of the tool's"]),
        ("sqroot(16)", ["unknown function 'sqroot'", "did you mean 'sqrt'?"]),
        ("PI * 2", ["names are lowercase: 'pi'"]),
        ("SQRT(4)", ["unknown function 'SQRT'", "names are lowercase: 'sqrt'"]),
        ("sqrt", ["'sqrt' is a function", "sqrt(x)"]),
        ("sqrt(-1)", ["'sqrt(-1)'", "domain of sqrt()"]),
        ("log(0)", ["domain of log()"]),
        ("max()", ["'max()' passes 0 arguments", "max(a, b, …)"]),
        ("sqrt(1, 2)", ["passes 2 arguments"]),
        ("round(2.5, ndigits=1)", ["positional arguments"]),
        ("factorial(171)", ["at most 170"]),
        ("factorial(2.5)", ["whole number"]),
        ("2 ** 100000", ["exponent 100000", str(MAX_EXPONENT)]),
        ("9 ** 9 ** 9", ["exponent"]),
        ("10 ** 400", ["digits"]),
        ("10 ** 299 * 100", ["more than 300 digits"]),
        ("1e308 * 10", ["not a finite number"]),
        ("(-8) ** (1/3)", ["negative number to a fractional power"]),
        ("2 +", ["not a valid arithmetic expression"]),
        ("2 3", ["column 3"]),
        ("2,480 * 3", ["commas", "2480"]),
        ("50% + 10", ["ambiguous", "50/100 + 10"]),
        ("2 + 2 = 4", ["'='"]),
        ("x = 4", ["'='"]),
        ("1 < 2", ["comparisons"]),
        ("True + 1", ["not a number"]),
        ("'a' * 3", ["a string"]),
        ("(1).real", ["attribute access"]),
        ("[1, 2]", ["lists"]),
        ("lambda: 1", ["lambda"]),
        ("__import__('os')", ["unknown function '__import__'"]),
        ("__import__('os').system('true')", ["cannot be called"]),
        ("6 & 3", ["not supported"]),
        ("~5", ["'~'"]),
        ("1j * 2", ["not a number"]),
        ("1" * 501, ["501 characters", "at most 500"]),
        ("+".join(["1"] * 200), ["parts", "at most 300"]),
    ],
)
def test_refusals_name_the_problem(expression: str, fragments: list[str]) -> None:
    with pytest.raises(CalculationError) as info:
        evaluate(expression)
    for fragment in fragments:
        assert fragment in str(info.value)


@pytest.mark.parametrize(
    "expression",
    ["2 +* 3 and so on, with many more words after the mistake", "x + 1", "sqroot(2)", "a.b(1)"],
)
def test_a_refusal_is_short_enough_to_read_again_at_each_retry(expression: str) -> None:
    # A small model reads every refusal of a question again at each retry: the functions are
    # listed once, in the tool's description, not in each refusal.
    with pytest.raises(CalculationError) as info:
        evaluate(expression)
    assert len(str(info.value)) <= 240
    assert "factorial" not in str(info.value)


_leaves = st.integers(min_value=-50, max_value=50).map(lambda n: (f"({n})", Fraction(n)))


def _combine(children: st.SearchStrategy[tuple[str, Fraction]]) -> st.SearchStrategy:
    def build(op: str, a: tuple[str, Fraction], b: tuple[str, Fraction]) -> tuple[str, Fraction]:
        value = {"+": a[1] + b[1], "-": a[1] - b[1], "*": a[1] * b[1]}[op]
        return f"({a[0]} {op} {b[0]})", value

    return st.builds(build, st.sampled_from("+-*"), children, children)


@settings(max_examples=200, deadline=None)
@given(st.recursive(_leaves, _combine, max_leaves=12))
def test_integer_arithmetic_is_exact(case: tuple[str, Fraction]) -> None:
    expression, expected = case
    assert evaluate(expression) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789+-*/%^().,e xpisqrtlogabs_[]'\"=<>&|~", max_size=40))
def test_any_text_gives_a_number_or_a_refusal(text: str) -> None:
    try:
        value = evaluate(text)
    except CalculationError as exc:
        message = str(exc)
        value = 0
    else:
        message = "no refusal"
    assert message
    assert isinstance(value, int | float)
    assert not isinstance(value, bool)


async def test_tool_answers_with_the_expression_and_value() -> None:
    result = await calculator.invoke({"expression": "17.5% of 2480"})
    assert result.is_ok
    assert result.content == "17.5% of 2480 = 434"
    assert result.artifacts["value"] == pytest.approx(434)


async def test_tool_refusal_is_an_error_result_the_model_can_read() -> None:
    result = await calculator.invoke({"expression": "sqrt(2 * x)"})
    assert result.is_failure
    assert result.content is not None
    assert result.content.startswith("Cannot evaluate the expression: unknown name 'x'")
    assert "Tool execution failed" not in result.content


async def test_a_calculation_without_a_number_is_refused_before_it_runs() -> None:
    result = await calculator.invoke({"expression": "how much is that"})
    assert result.is_failure
    assert "expression" in result.model_text()
    assert "pattern" in result.model_text() or "match" in result.model_text()
    assert (await calculator.invoke({"expression": "2 * pi"})).is_ok


def test_a_word_problem_past_the_length_limit_is_refused_before_it_is_read() -> None:
    # Read as a word problem, this text is 1 + 2; its length alone refuses it, so no evaluation
    # reads more than MAX_EXPRESSION_LENGTH characters (the tool runs on the event loop).
    text = "minus " * 100 + "1 and 2"
    with pytest.raises(CalculationError, match=f"{len(text)} characters long; at most 500"):
        evaluate(text)
    assert evaluate(text[-100:]) == 3


def test_the_calculator_runs_inline() -> None:
    assert calculator.policy.inline
    assert calculator.policy.timeout is None
