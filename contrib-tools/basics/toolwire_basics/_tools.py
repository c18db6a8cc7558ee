"""The offline tools: a calculator, the current time, time-zone and unit conversion.

Each tool imports its implementation when it is first called: building the tools (to list or
offer them) loads only this module, the argument patterns and the relevance tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import toolwire
from toolwire import ToolResult

from ._patterns import CALCULATION_PATTERN, NO_NUMBER_PATTERN, QUANTITY_PATTERN, TIME_PATTERN
from ._relevance import offer_when_relevant

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from ._clock import TimeAndPlace
    from ._units import Quantity, Unit


def _sentence(exc: Exception) -> str:
    text = str(exc)
    return text[:1].upper() + text[1:]


# Descriptions carry no sample values: small models copy examples and defaults into their calls.
# The calculator runs inline (on the event loop, without a worker thread's hand-off): its limits
# (MAX_EXPRESSION_LENGTH and the others of _calculator) bound any evaluation to a few
# milliseconds, a usual one to about a tenth of one.
@toolwire.tool(side_effects="read_only", idempotent=True, inline=True, resolver=offer_when_relevant)
def calculator(
    expression: Annotated[
        str,
        {"pattern": CALCULATION_PATTERN},
        "The calculation, in the user's own words or as an expression. Words of arithmetic are "
        "understood (percent of, times, divided by, plus, minus, squared, cubed, to the power "
        "of, square root of, average of, factorial), and so are numbers, + - * / // % ** (^ also "
        "means power), parentheses, a trailing % for percent, the constants pi, e, tau and the "
        "functions sqrt, cbrt, abs, round, min, max, exp, log (natural, or log(x, base)), ln, "
        "log10, log2, sin, cos, tan (radians), asin, acos, atan, atan2, sinh, cosh, tanh, "
        "degrees, radians, hypot, floor, ceil, trunc, factorial, gcd, lcm.",
    ],
) -> ToolResult:
    """Evaluate a calculation exactly and return its value.

    Use it for any arithmetic instead of working it out in your head. No variables: write the
    numbers themselves.
    """
    from ._calculator import CalculationError, evaluate, format_number

    try:
        value = evaluate(expression)
    except CalculationError as exc:
        return ToolResult.error(f"Cannot evaluate the expression: {exc}")
    shown = format_number(value)
    return ToolResult.ok(f"{expression.strip()} = {shown}", artifacts={"value": value})


@toolwire.tool(side_effects="read_only", idempotent=True, resolver=offer_when_relevant)
def current_time(
    timezone: Annotated[
        str | None,
        "The place the user asked about, as they named it (a city, a country or an IANA time "
        "zone name). Leave it out when they named none: the time is then given in UTC.",
    ] = None,
) -> ToolResult:
    """Tell the current date, time and weekday in a place or time zone."""
    from ._clock import TimeZoneError, describe, find_zone, names_no_place, now_in

    try:
        zone = find_zone("UTC" if names_no_place(timezone) else str(timezone))
    except TimeZoneError as exc:
        return ToolResult.error(_sentence(exc))
    moment = now_in(zone)
    return ToolResult.ok(
        f"It is {describe(moment)} in {zone.key}.", artifacts={"iso": moment.isoformat()}
    )


# The time and its place are one argument, so which zone the time is in is never in doubt.
@toolwire.tool(side_effects="read_only", idempotent=True, resolver=offer_when_relevant)
def convert_time(
    time: Annotated[
        str,
        {"pattern": TIME_PATTERN},
        "The time to convert together with the place whose clock shows it, as the user wrote "
        "them, in either order: a time of day (24-hour HH:MM, with am/pm, noon or midnight) for "
        "today, or a date and time written YYYY-MM-DD HH:MM, and that place (a city, a country "
        "or an IANA time zone).",
    ],
    to_timezone: Annotated[
        str,
        {"pattern": NO_NUMBER_PATTERN},
        "The place (city, country or IANA time zone) whose clock the user asks about: the "
        "other place of the question, never the time's own.",
    ],
) -> ToolResult:
    """Convert a date and time from one time zone to another (daylight saving time included)."""
    from ._clock import (
        TimeZoneError,
        describe,
        is_ambiguous,
        now_in,
        parse_wall_time,
        read_time_and_place,
    )

    try:
        written = read_time_and_place(time)
        if written.zone is None:
            # The time's words name only the place to convert into ("13:00 -> Rome"): the
            # place whose clock shows it is the other one given.
            source, target = _zone_of_time(written, to_timezone)
        else:
            source = written.zone
            target = _zone_asked(written, to_timezone)
        local = parse_wall_time(written.time, source, today=now_in(source).date())
        converted = local.astimezone(target)
        ambiguous = is_ambiguous(local)
    except TimeZoneError as exc:
        return ToolResult.error(_sentence(exc))
    except OverflowError:
        return ToolResult.error(
            f"{time!r} in {source.key} cannot be converted to {target.key}: it lies at the edge "
            "of the calendar (years 1 to 9999), where the other zone's time does not exist. "
            "Give a time between the years 2 and 9998."
        )
    text = f"{describe(local)} in {source.key} is {describe(converted)} in {target.key}."
    if ambiguous:
        text += (
            f" Note: {local:%Y-%m-%d %H:%M} occurs twice in {source.key} (the clocks go back); "
            "this is the first occurrence."
        )
    return ToolResult.ok(text, artifacts={"iso": converted.isoformat()})


def _zone_of_time(written: TimeAndPlace, to_timezone: str) -> tuple[ZoneInfo, ZoneInfo]:
    """The zones from and into, for a time whose words name only the zone asked for."""
    from ._clock import TimeZoneError, find_zone

    target = written.target
    assert target is not None  # read_time_and_place names it when it names no other
    source = find_zone(to_timezone)
    if source.key == target.key:
        raise TimeZoneError(
            f"the time {written.time!r} is to be converted into {target.key}, and "
            f"{to_timezone!r} (to_timezone) is that place too; give the place whose clock shows "
            "the time with it"
        )
    return source, target


def _zone_asked(written: TimeAndPlace, to_timezone: str) -> ZoneInfo:
    """The zone to convert into: ``to_timezone``, or the second place of the time's own words
    (``9:00 in New York in London time``) when ``to_timezone`` is unknown or the time's zone."""
    from ._clock import TimeZoneError, find_zone

    try:
        target = find_zone(to_timezone)
    except TimeZoneError:
        if written.target is None:
            raise
        return written.target
    assert written.zone is not None
    if target.key != written.zone.key:
        return target
    if written.target is not None:
        return written.target
    raise TimeZoneError(
        f"the place {to_timezone!r} (to_timezone) is the one whose clock shows the time "
        f"({written.zone.key}); give the other place the user named, the one to convert into"
    )


# The amount and its unit are one argument, so the direction of a conversion is never in doubt:
# the unit written with the number is the one converted from.
@toolwire.tool(side_effects="read_only", idempotent=True, resolver=offer_when_relevant)
def convert_units(
    quantity: Annotated[
        str,
        {"pattern": QUANTITY_PATTERN},
        "The amount to convert together with its unit, as the user wrote it: the number (or "
        "'a', 'an', 'one') and the unit written after it. Words around it may come along.",
    ],
    into_unit: Annotated[
        str,
        {"pattern": NO_NUMBER_PATTERN},
        "The unit the user wants the amount expressed in, as they wrote it (a symbol, a name "
        "or a plural): the other unit of the question, never the amount's own.",
    ],
) -> ToolResult:
    """Convert an amount from its unit into another unit of the same kind.

    Kinds: length, mass, volume, temperature, speed, data size, duration, area, energy,
    pressure, power and angle.

    US customary volumes (cup, pint, gallon) are the US ones; imperial units are named so.
    """
    from ._calculator import format_number
    from ._units import UnitError, convert, find_unit, parse_quantity

    try:
        amount = parse_quantity(quantity)
        source = find_unit(amount.unit, _kind_of(into_unit))
        target = _into(amount, source, into_unit)
        result, source, target = convert(amount.value, source.symbol, target.symbol)
    except UnitError as exc:
        return ToolResult.error(_sentence(exc))
    value = amount.value
    left = format_number(value)
    right = format_number(result)
    left_name = source.name if value == 1 else source.plural_name
    right_name = target.name if result == 1 else target.plural_name
    return ToolResult.ok(
        f"{left} {left_name} ({source.symbol}) = {right} {right_name} ({target.symbol})",
        artifacts={"value": result, "unit": target.symbol},
    )


def _kind_of(into_unit: str) -> str | None:
    """The dimension of the unit ``into_unit`` names, if it names one: an unknown unit of the
    quantity is then refused with the units of that kind only."""
    from ._units import UnitError, asked_unit, find_unit

    for name in (into_unit, asked_unit(into_unit)):
        try:
            return find_unit(name).dimension if name else None
        except UnitError:
            continue
    return None


def _into(amount: Quantity, source: Unit, into_unit: str) -> Unit:
    """The unit to convert into: ``into_unit`` (``many inches is`` read as ``inches``), or else
    the unit the quantity's own words ask for (``5 miles to km``), whichever first is a unit of
    the amount's kind other than its own.

    :raises UnitError: about ``into_unit`` when neither is.
    """
    from ._units import UnitError, asked_unit, find_unit

    for name in (into_unit, asked_unit(into_unit), amount.target):
        if not name:
            continue
        try:
            target = find_unit(name)
        except UnitError:
            continue
        if target != source and target.dimension == source.dimension:
            return target
    target = find_unit(into_unit, source.dimension)
    if target == source:
        raise UnitError(
            f"the unit {into_unit!r} (into_unit) is the one the quantity {amount.unit!r} is "
            "already in; give the other unit the user named, the one to convert into"
        )
    return target
