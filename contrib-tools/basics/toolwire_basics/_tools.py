"""The offline tools: a calculator, the current time, time-zone and unit conversion."""

from __future__ import annotations

from typing import Annotated

import toolwire
from toolwire import ToolResult

from ._calculator import CalculationError, evaluate, format_number
from ._clock import TimeZoneError, describe, find_zone, is_ambiguous, now_in, parse_wall_time
from ._relevance import offer_when_relevant
from ._units import UnitError, convert


def _sentence(exc: Exception) -> str:
    text = str(exc)
    return text[:1].upper() + text[1:]


# Descriptions carry no sample values: small models copy examples and defaults into their calls.
@toolwire.tool(side_effects="read_only", idempotent=True, resolver=offer_when_relevant)
def calculator(
    expression: Annotated[
        str,
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
    try:
        zone = find_zone(timezone or "UTC")
    except TimeZoneError as exc:
        return ToolResult.error(_sentence(exc))
    moment = now_in(zone)
    return ToolResult.ok(
        f"It is {describe(moment)} in {zone.key}.", artifacts={"iso": moment.isoformat()}
    )


@toolwire.tool(side_effects="read_only", idempotent=True, resolver=offer_when_relevant)
def convert_time(
    time: Annotated[
        str,
        "The wall-clock time as the user wrote it: a time of day (24-hour HH:MM, or with am/pm) "
        "for today in from_timezone, or a date and time written YYYY-MM-DD HH:MM.",
    ],
    from_timezone: Annotated[
        str, "The place (city, country or IANA time zone) whose clock shows that time."
    ],
    to_timezone: Annotated[str, "The place (city, country or IANA time zone) to convert to."],
) -> ToolResult:
    """Convert a date and time from one time zone to another (daylight saving time included)."""
    try:
        source = find_zone(from_timezone)
        target = find_zone(to_timezone)
    except TimeZoneError as exc:
        return ToolResult.error(_sentence(exc))
    try:
        local = parse_wall_time(time, source, today=now_in(source).date())
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


@toolwire.tool(side_effects="read_only", idempotent=True, resolver=offer_when_relevant)
def convert_units(
    value: Annotated[float, "The quantity to convert, in from_unit."],
    from_unit: Annotated[
        str,
        "The unit the user gave the quantity in, as they wrote it (a symbol, a name or a plural).",
    ],
    to_unit: Annotated[
        str, "The unit the user wants, as they wrote it; the same kind of quantity as from_unit."
    ],
) -> ToolResult:
    """Convert a quantity from one unit to another of the same kind.

    Kinds: length, mass, volume, temperature, speed, data size, duration, area, energy,
    pressure, power and angle.

    US customary volumes (cup, pint, gallon) are the US ones; imperial units are named so.
    """
    try:
        result, source, target = convert(value, from_unit, to_unit)
    except UnitError as exc:
        return ToolResult.error(_sentence(exc))
    left = format_number(value)
    right = format_number(result)
    left_name = source.name if value == 1 else source.plural_name
    right_name = target.name if result == 1 else target.plural_name
    return ToolResult.ok(
        f"{left} {left_name} ({source.symbol}) = {right} {right_name} ({target.symbol})",
        artifacts={"value": result, "unit": target.symbol},
    )
