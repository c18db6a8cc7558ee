"""Unit conversion: exact definitions, names and symbols, and refusals listing the valid units."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire_basics import UnitError, convert_units
from toolwire_basics._units import convert, dimensions, find_unit, units, units_of


@pytest.mark.parametrize(
    ("value", "source", "target", "expected"),
    [
        (1, "in", "cm", 2.54),
        (1, "mile", "km", 1.609344),
        (5, "km", "mi", 3.106855961),
        (1, "lb", "g", 453.59237),
        (1, "gallon", "l", 3.785411784),
        (1, "imp gal", "l", 4.54609),
        (100, "°C", "°F", 212),
        (32, "F", "C", 0),
        (0, "K", "celsius", -273.15),
        (-40, "degrees Celsius", "degrees Fahrenheit", -40),
        (60, "mph", "km/h", 96.56064),
        (1, "knot", "m/s", 0.514444444),
        (1, "GiB", "MB", 1073.741824),
        (8, "Mbit", "MB", 1),
        (1, "KB", "bytes", 1000),
        (2, "hours", "minutes", 120),
        (1, "acre", "m²", 4046.8564224),
        (1, "sq ft", "m^2", 0.09290304),
        (1, "kWh", "MJ", 3.6),
        (1, "atm", "psi", 14.695948775513),
        (1, "hp", "W", 745.69987158),
        (180, "deg", "rad", 3.14159265359),
        (1, "kilometres", "meters", 1000),
        (3, "feet", "inches", 36),
    ],
)
def test_converts(value: float, source: str, target: str, expected: float) -> None:
    result, _, _ = convert(value, source, target)
    assert result == pytest.approx(expected, rel=1e-9)


def test_every_name_is_unique_and_found() -> None:
    for unit in units():
        for name in (unit.symbol, unit.name, unit.plural_name, *unit.aliases):
            assert find_unit(name) is unit, name


@given(st.sampled_from(units()), st.floats(min_value=-1e6, max_value=1e6))
def test_round_trip(unit, value: float) -> None:  # type: ignore[no-untyped-def]
    base = next(u for u in units() if u.dimension == unit.dimension and u is not unit)
    if unit.dimension == "temperature" and unit.to_base(value) < 0:
        return
    there, _, _ = convert(value, unit.symbol, base.symbol)
    back, _, _ = convert(there, base.symbol, unit.symbol)
    assert back == pytest.approx(value, rel=1e-9, abs=1e-6)


@pytest.mark.parametrize(
    ("source", "target", "fragments"),
    [
        ("kg", "m", ["cannot convert kilograms (mass) to metres (length)", "Units of mass:", "lb"]),
        ("furlong", "m", ["unknown unit 'furlong'", "length:", "temperature:"]),
        ("kilometre", "mille", ["unknown unit 'mille'", "Did you mean", "'mile'"]),
        ("ton", "kg", ["'ton' is ambiguous", "'t' (tonne)", "'short ton'"]),
        ("mb", "kB", ["'mb' is ambiguous", "megabyte", "megabit"]),
        ("", "m", ["the unit is empty"]),
    ],
)
def test_refusals(source: str, target: str, fragments: list[str]) -> None:
    with pytest.raises(UnitError) as info:
        convert(1, source, target)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_below_absolute_zero_is_refused() -> None:
    with pytest.raises(UnitError, match="below absolute zero"):
        convert(-300, "°C", "K")


def test_the_overview_names_every_dimension() -> None:
    with pytest.raises(UnitError) as info:
        find_unit("parsec")
    for dimension in dimensions():
        assert f"{dimension}:" in str(info.value)


async def test_an_unknown_unit_to_convert_into_lists_the_amounts_kind_only() -> None:
    # Every unit of every kind is some 370 tokens a model reads again at each retry.
    result = await convert_units.invoke({"quantity": "350 f", "into_unit": "can you help"})
    assert result.is_failure
    assert result.content == "Unknown unit 'can you help'. Units of temperature: °C, °F, K, °R"
    # An unknown unit of the amount, converted into a known one: that one's kind.
    result = await convert_units.invoke({"quantity": "30 miles an hour", "into_unit": "km/h"})
    assert result.content is not None
    assert result.content.startswith("Unknown unit 'miles an hour'. Did you mean")
    assert result.content.endswith(f"Units of speed: {units_of('speed')}")
    with pytest.raises(UnitError) as info:
        convert(1, "km", "furlongs")
    assert str(info.value).endswith(f"Units of length: {units_of('length')}")
    assert "mass:" not in str(info.value)


async def test_tool_result_names_both_units() -> None:
    result = await convert_units.invoke({"quantity": "5 km", "into_unit": "mi"})
    assert result.is_ok
    assert result.content == "5 kilometres (km) = 3.10685596119 miles (mi)"
    assert result.artifacts == {"value": pytest.approx(3.10685596), "unit": "mi"}


async def test_tool_uses_singular_for_one() -> None:
    result = await convert_units.invoke({"quantity": "1 ft", "into_unit": "in"})
    assert result.content == "1 foot (ft) = 12 inches (in)"


async def test_tool_refusal() -> None:
    result = await convert_units.invoke({"quantity": "1 kg", "into_unit": "km"})
    assert result.is_failure
    assert result.content is not None
    assert result.content.startswith("Cannot convert kilograms (mass) to kilometres (length)")


@pytest.mark.parametrize(
    ("value", "source", "target", "fragment"),
    [
        (1e308, "km", "mm", "too large to express in millimetres"),
        (float("inf"), "km", "mi", "not a finite number"),
        (float("nan"), "kg", "lb", "not a finite number"),
    ],
)
def test_a_result_that_is_not_a_finite_number_is_refused(
    value: float, source: str, target: str, fragment: str
) -> None:
    with pytest.raises(UnitError, match=fragment):
        convert(value, source, target)


async def test_the_tool_never_answers_infinity() -> None:
    result = await convert_units.invoke({"quantity": "1e308 km", "into_unit": "mm"})
    assert result.status.value == "error"
    assert "inf" not in (result.content or "").split()


@pytest.mark.parametrize(
    ("spoken", "symbol"),
    [("cups", "cup"), ("a day", "d"), ("an hour", "h"), ("the week", "wk"), ("in miles", "mi")],
)
def test_units_as_people_write_them(spoken: str, symbol: str) -> None:
    from toolwire_basics._units import find_unit

    assert find_unit(spoken).symbol == symbol


def test_a_quantity_copied_with_its_unit_is_read_as_the_unit() -> None:
    from toolwire_basics._units import find_unit

    assert find_unit("30 cm").symbol == "cm"
    assert find_unit("3 weeks").symbol == "wk"


@pytest.mark.parametrize(
    ("text", "value", "unit", "target"),
    [
        ("5 miles", 5, "miles", None),
        ("Convert 5 miles to kilometers", 5, "miles", "kilometers"),
        ("what is 10 km in miles?", 10, "km", "miles"),
        ("How many kilometres is 5 miles", 5, "miles", "kilometres"),
        ("how many seconds are there in a week", 1, "week", "seconds"),
        ("How many square feet is 20 square meters", 20, "square meters", "square feet"),
        ("an hour", 1, "hour", None),
        ("minutes are in a day", 1, "day", "minutes"),
        ("many pounds is 3 kg", 3, "kg", "pounds"),
        ("Convert 5 miles", 5, "miles", None),
        ("2,480.5 kg into pounds", 2480.5, "kg", "pounds"),
        ("-40 °C as °F", -40, "°C", "°F"),
        (".5 l", 0.5, "l", None),
        ("12 inches = ? cm", 12, "inches", "cm"),
    ],
)
def test_a_quantity_is_read_as_people_write_it(
    text: str, value: float, unit: str, target: str | None
) -> None:
    from toolwire_basics._units import Quantity, parse_quantity

    assert parse_quantity(text) == Quantity(value, unit, target)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("miles", "holds no number"), ("convert 5", "names no unit after its number")],
)
def test_a_quantity_without_amount_or_unit_is_refused(text: str, fragment: str) -> None:
    from toolwire_basics._units import parse_quantity

    with pytest.raises(UnitError, match=fragment):
        parse_quantity(text)


@pytest.mark.parametrize(
    ("quantity", "into_unit", "expected"),
    [
        # The unit written with the number is the one converted from, whatever into_unit says.
        ("5 miles", "kilometers", "5 miles (mi) = 8.04672 kilometres (km)"),
        ("Convert 5 miles to kilometers", "miles", "5 miles (mi) = 8.04672 kilometres (km)"),
        ("How many kilometres is 5 miles", "kilometres", "5 miles (mi) = 8.04672 kilometres (km)"),
        ("a week", "seconds", "1 week (wk) = 604800 seconds (s)"),
        ("5 miles to km", "kg", "5 miles (mi) = 8.04672 kilometres (km)"),
        ("5 miles in km", "Convert", "5 miles (mi) = 8.04672 kilometres (km)"),
        ("minutes are in a day", "many", "1 day (d) = 1440 minutes (min)"),
        ("30 cm", "many inches is", "30 centimetres (cm) = 11.811023622 inches (in)"),
    ],
)
async def test_the_tool_takes_the_amount_with_its_unit(
    quantity: str, into_unit: str, expected: str
) -> None:
    result = await convert_units.invoke({"quantity": quantity, "into_unit": into_unit})
    assert result.is_ok, result.content
    assert result.content == expected


async def test_converting_into_the_amounts_own_unit_is_refused() -> None:
    result = await convert_units.invoke({"quantity": "5 miles", "into_unit": "mi"})
    assert result.is_failure
    assert result.content == (
        "The unit 'mi' (into_unit) is the one the quantity 'miles' is already in; give the "
        "other unit the user named, the one to convert into"
    )


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"quantity": "miles", "into_unit": "km"}, "quantity"),
        ({"quantity": "5 miles", "into_unit": "8 km"}, "into_unit"),
    ],
)
async def test_the_schema_asks_for_a_number_in_the_quantity_only(
    arguments: dict[str, str], field: str
) -> None:
    from toolwire.tools import ArgumentsInvalid

    with pytest.raises(ArgumentsInvalid) as refused:
        convert_units.validate(arguments)
    assert field in str(refused.value)


@pytest.mark.parametrize(
    ("written", "symbol"),
    [
        ("sq m", "m2"),
        ("sq km", "km2"),
        ("sq miles", "mi2"),
        ("square km", "km2"),
        ("kms", "km"),
        ("kgs", "kg"),
        ("fluid ounces", "fl oz"),
    ],
)
def test_short_squares_and_plurals_the_table_does_not_list(written: str, symbol: str) -> None:
    assert find_unit(written).symbol == symbol
