"""Units of measure: the table of common units by dimension, name lookup and conversion."""

from __future__ import annotations

import functools
import math
import re
import sys
from collections.abc import Iterable
from typing import NamedTuple


class UnitError(ValueError):
    """A unit name was not recognised, was ambiguous, or the two units measure different things."""


class Unit(NamedTuple):
    """A unit: ``base = value * factor + offset`` converts to the dimension's base unit."""

    symbol: str
    name: str
    dimension: str
    factor: float
    offset: float = 0.0
    plural: str = ""
    aliases: tuple[str, ...] = ()

    @property
    def plural_name(self) -> str:
        """The name used for quantities other than one."""
        return self.plural or self.name + "s"

    def to_base(self, value: float) -> float:
        """``value`` of this unit in the dimension's base unit."""
        return value * self.factor + self.offset

    def from_base(self, value: float) -> float:
        """``value`` of the base unit in this unit."""
        return (value - self.offset) / self.factor


def _u(
    dimension: str,
    symbol: str,
    name: str,
    factor: float,
    *aliases: str,
    offset: float = 0.0,
    plural: str = "",
) -> Unit:
    return Unit(symbol, name, dimension, factor, offset, plural, aliases)


@functools.cache
def units() -> tuple[Unit, ...]:
    """Every unit the converter knows, built on first use: listing the tools never reads it.

    Factors are the exact definitions where one exists (international yard and pound of 1959,
    US customary volumes from the US gallon of 231 in³, thermochemical calorie).
    """
    return (
        # length, base metre
        _u("length", "nm", "nanometre", 1e-9, "nanometer"),
        _u("length", "µm", "micrometre", 1e-6, "um", "micrometer", "micron"),
        _u("length", "mm", "millimetre", 1e-3, "millimeter"),
        _u("length", "cm", "centimetre", 1e-2, "centimeter"),
        _u("length", "dm", "decimetre", 0.1, "decimeter"),
        _u("length", "m", "metre", 1.0, "meter"),
        _u("length", "km", "kilometre", 1e3, "kilometer"),
        _u("length", "in", "inch", 0.0254, "inches", '"', plural="inches"),
        _u("length", "ft", "foot", 0.3048, "feet", "'", plural="feet"),
        _u("length", "yd", "yard", 0.9144),
        _u("length", "mi", "mile", 1609.344, "statute mile"),
        _u("length", "nmi", "nautical mile", 1852.0),
        _u("length", "au", "astronomical unit", 149_597_870_700.0),
        _u("length", "ly", "light-year", 9_460_730_472_580_800.0, "light year", "lightyear"),
        # mass, base kilogram
        _u("mass", "mg", "milligram", 1e-6, "milligramme"),
        _u("mass", "g", "gram", 1e-3, "gramme"),
        _u("mass", "kg", "kilogram", 1.0, "kilogramme", "kilo"),
        _u("mass", "t", "tonne", 1e3, "metric ton"),
        _u("mass", "ct", "carat", 2e-4),
        _u("mass", "oz", "ounce", 0.028349523125),
        _u("mass", "lb", "pound", 0.45359237, "lbs"),
        _u("mass", "st", "stone", 6.35029318, plural="stone"),
        _u("mass", "short ton", "short ton (US)", 907.18474, "us ton", plural="short tons (US)"),
        _u("mass", "long ton", "long ton (UK)", 1016.0469088, "uk ton", plural="long tons (UK)"),
        # volume, base cubic metre
        _u("volume", "ml", "millilitre", 1e-6, "milliliter", "mL", "cc"),
        _u("volume", "cl", "centilitre", 1e-5, "centiliter", "cL"),
        _u("volume", "dl", "decilitre", 1e-4, "deciliter", "dL"),
        _u("volume", "l", "litre", 1e-3, "liter", "L"),
        _u("volume", "m3", "cubic metre", 1.0, "cubic meter"),
        _u("volume", "cm3", "cubic centimetre", 1e-6, "cubic centimeter"),
        _u("volume", "in3", "cubic inch", 1.6387064e-5, plural="cubic inches"),
        _u("volume", "ft3", "cubic foot", 0.028316846592, plural="cubic feet"),
        _u("volume", "tsp", "teaspoon (US)", 4.92892159375e-6, "teaspoon", plural="teaspoons (US)"),
        _u(
            "volume",
            "tbsp",
            "tablespoon (US)",
            1.478676478125e-5,
            "tablespoon",
            plural="tablespoons (US)",
        ),
        _u(
            "volume",
            "fl oz",
            "fluid ounce (US)",
            2.95735295625e-5,
            "fluid ounce",
            "floz",
            plural="fluid ounces (US)",
        ),
        _u("volume", "cup", "cup (US)", 2.365882365e-4, plural="cups (US)"),
        _u("volume", "pt", "pint (US)", 4.73176473e-4, "pint", plural="pints (US)"),
        _u("volume", "qt", "quart (US)", 9.46352946e-4, "quart", plural="quarts (US)"),
        _u(
            "volume",
            "gal",
            "gallon (US)",
            3.785411784e-3,
            "gallon",
            "us gallon",
            plural="gallons (US)",
        ),
        _u("volume", "imp pt", "imperial pint", 5.6826125e-4, "uk pint"),
        _u("volume", "imp gal", "imperial gallon", 4.54609e-3, "uk gallon"),
        _u("volume", "bbl", "barrel (oil)", 0.158987294928, "barrel", plural="barrels (oil)"),
        # temperature, base kelvin
        _u(
            "temperature",
            "°C",
            "degree Celsius",
            1.0,
            "C",
            "celsius",
            "degC",
            "centigrade",
            offset=273.15,
            plural="degrees Celsius",
        ),
        _u(
            "temperature",
            "°F",
            "degree Fahrenheit",
            5 / 9,
            "F",
            "fahrenheit",
            "degF",
            offset=459.67 * 5 / 9,
            plural="degrees Fahrenheit",
        ),
        _u("temperature", "K", "kelvin", 1.0, "kelvins", "degK", plural="kelvins"),
        _u("temperature", "°R", "degree Rankine", 5 / 9, "rankine", "R", plural="degrees Rankine"),
        # speed, base metre per second
        _u(
            "speed",
            "m/s",
            "metre per second",
            1.0,
            "meter per second",
            "mps",
            plural="metres per second",
        ),
        _u(
            "speed",
            "km/h",
            "kilometre per hour",
            1 / 3.6,
            "kilometer per hour",
            "kph",
            "kmh",
            "kmph",
            plural="kilometres per hour",
        ),
        _u(
            "speed",
            "mph",
            "mile per hour",
            0.44704,
            "mi/h",
            "miles per hour",
            plural="miles per hour",
        ),
        _u(
            "speed",
            "ft/s",
            "foot per second",
            0.3048,
            "fps",
            "feet per second",
            plural="feet per second",
        ),
        _u("speed", "kn", "knot", 1852 / 3600, "kt", "kts"),
        # data size, base bit
        _u("data size", "bit", "bit", 1.0, "b"),
        _u("data size", "B", "byte", 8.0),
        _u("data size", "kbit", "kilobit", 1e3, "kb", "Kb"),
        _u("data size", "Mbit", "megabit", 1e6, "Mb"),
        _u("data size", "Gbit", "gigabit", 1e9, "Gb"),
        _u("data size", "Tbit", "terabit", 1e12, "Tb"),
        _u("data size", "kB", "kilobyte", 8e3, "KB"),
        _u("data size", "MB", "megabyte", 8e6),
        _u("data size", "GB", "gigabyte", 8e9),
        _u("data size", "TB", "terabyte", 8e12),
        _u("data size", "PB", "petabyte", 8e15),
        _u("data size", "KiB", "kibibyte", 8 * 2.0**10),
        _u("data size", "MiB", "mebibyte", 8 * 2.0**20),
        _u("data size", "GiB", "gibibyte", 8 * 2.0**30),
        _u("data size", "TiB", "tebibyte", 8 * 2.0**40),
        _u("data size", "PiB", "pebibyte", 8 * 2.0**50),
        # duration, base second
        _u("duration", "ns", "nanosecond", 1e-9),
        _u("duration", "µs", "microsecond", 1e-6, "us"),
        _u("duration", "ms", "millisecond", 1e-3),
        _u("duration", "s", "second", 1.0, "sec", "secs"),
        _u("duration", "min", "minute", 60.0, "mins"),
        _u("duration", "h", "hour", 3600.0, "hr", "hrs"),
        _u("duration", "d", "day", 86_400.0),
        _u("duration", "wk", "week", 604_800.0),
        _u(
            "duration",
            "yr",
            "year (365.25 days)",
            31_557_600.0,
            "year",
            "years",
            plural="years (365.25 days)",
        ),
        # area, base square metre
        _u("area", "mm2", "square millimetre", 1e-6, "square millimeter"),
        _u("area", "cm2", "square centimetre", 1e-4, "square centimeter"),
        _u("area", "m2", "square metre", 1.0, "square meter", "sqm"),
        _u("area", "km2", "square kilometre", 1e6, "square kilometer"),
        _u("area", "ha", "hectare", 1e4),
        _u("area", "in2", "square inch", 6.4516e-4, "sq in", plural="square inches"),
        _u("area", "ft2", "square foot", 0.09290304, "sq ft", "sqft", plural="square feet"),
        _u("area", "yd2", "square yard", 0.83612736, "sq yd"),
        _u("area", "ac", "acre", 4046.8564224),
        _u("area", "mi2", "square mile", 2_589_988.110336, "sq mi"),
        # energy, base joule
        _u("energy", "J", "joule", 1.0),
        _u("energy", "kJ", "kilojoule", 1e3),
        _u("energy", "MJ", "megajoule", 1e6),
        _u("energy", "cal", "calorie", 4.184, "thermochemical calorie"),
        _u("energy", "kcal", "kilocalorie", 4184.0, "Cal", "food calorie"),
        _u("energy", "Wh", "watt-hour", 3600.0, "watt hour"),
        _u("energy", "kWh", "kilowatt-hour", 3.6e6, "kilowatt hour"),
        _u("energy", "BTU", "British thermal unit", 1055.05585262, "btu"),
        _u("energy", "eV", "electronvolt", 1.602176634e-19, "electron volt"),
        # pressure, base pascal
        _u("pressure", "Pa", "pascal", 1.0),
        _u("pressure", "hPa", "hectopascal", 100.0),
        _u("pressure", "kPa", "kilopascal", 1e3),
        _u("pressure", "MPa", "megapascal", 1e6),
        _u("pressure", "bar", "bar", 1e5),
        _u("pressure", "mbar", "millibar", 100.0),
        _u("pressure", "atm", "standard atmosphere", 101_325.0, "atmosphere"),
        _u(
            "pressure",
            "psi",
            "pound per square inch",
            6894.757293168361,
            plural="pounds per square inch",
        ),
        _u(
            "pressure",
            "mmHg",
            "millimetre of mercury",
            133.322387415,
            "torr",
            plural="millimetres of mercury",
        ),
        # power, base watt
        _u("power", "W", "watt", 1.0),
        _u("power", "kW", "kilowatt", 1e3),
        _u("power", "MW", "megawatt", 1e6),
        _u(
            "power",
            "hp",
            "horsepower",
            745.6998715822702,
            "mechanical horsepower",
            plural="horsepower",
        ),
        _u("power", "PS", "metric horsepower", 735.49875, plural="metric horsepower"),
        # angle, base radian
        _u("angle", "rad", "radian", 1.0),
        _u("angle", "deg", "degree", 0.017453292519943295, "°"),
        _u("angle", "grad", "gradian", 0.015707963267948967, "gon"),
        _u("angle", "turn", "turn", 6.283185307179586, "revolution"),
    )


@functools.cache
def dimensions() -> tuple[str, ...]:
    """The kinds of quantity, in table order."""
    return tuple(dict.fromkeys(unit.dimension for unit in units()))


AMBIGUOUS: dict[str, tuple[str, ...]] = {
    "ton": ("t", "short ton", "long ton"),
    "tons": ("t", "short ton", "long ton"),
    "mb": ("MB", "Mbit"),
    "gb": ("GB", "Gbit"),
    "tb": ("TB", "Tbit"),
}
"""Names people use for more than one unit: the model is asked to pick."""


def _normalise(name: str) -> str:
    text = name.strip().replace("²", "2").replace("³", "3").replace("^", "")
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\s*/\s*", "/", text)
    text = re.sub(
        r"^(?:degrees?|deg) (?=[CFKR]$|celsius|fahrenheit|rankine)", "°", text, flags=re.IGNORECASE
    )
    text = re.sub(r"^° ", "°", text)
    return text


@functools.cache
def _spoken_prefix() -> re.Pattern[str]:
    return re.compile(r"^(?:an?|one|the|of|in|into|to)\s+", re.IGNORECASE)


def _as_spoken(key: str) -> str:
    """A unit as people say it, reduced to a name the table knows: ``a day`` is ``day``, ``cups``
    is ``cup``, ``kilometers?`` is ``kilometers``, ``30 cm`` is ``cm``."""
    text = _spoken_prefix().sub("", key.strip(" .,;:!?")).strip()
    # "30 cm", "3 weeks": the quantity came along with the unit.
    text = re.sub(r"^-?\d[\d,]*(?:\.\d+)?\s+(?=\D)", "", text)
    # "sq m", "square km": the unit of length, squared.
    square = re.fullmatch(r"(sq\.?|square)\s+([^\W\d]+)", text, re.IGNORECASE)
    if square is not None and text == key:
        return f"square {square[2]}" if square[1].lower() != "square" else f"{square[2]}2"
    # "kms", "kgs", "fluid ounces": a plural the table does not list.
    if (
        text == key
        and len(text) >= 3
        and text.endswith("s")
        and re.fullmatch(r"[^\W\d_]+(?: [^\W\d_]+)*", text[:-1])
    ):
        return text[:-1]
    return text


@functools.cache
def _index() -> tuple[dict[str, Unit], dict[str, list[Unit]]]:
    """Every name of every unit (exact, and case-folded), built on the first lookup: listing the
    tools never reads it."""
    exact: dict[str, Unit] = {}
    folded: dict[str, list[Unit]] = {}
    for unit in units():
        names = {unit.symbol, unit.name, unit.plural_name, *unit.aliases}
        names |= {n + "s" for n in unit.aliases if len(n) > 3 and n.isalpha()}
        names |= {n.replace("metre", "meter") for n in (unit.name, unit.plural_name)}
        for name in names:
            key = _normalise(name)
            if key in exact and exact[key] is not unit:
                raise AssertionError(f"unit name {key!r} is used twice")
            exact[key] = unit
            bucket = folded.setdefault(key.lower(), [])
            if unit not in bucket:
                bucket.append(unit)
    return exact, folded


@functools.cache
def _by_symbol() -> dict[str, Unit]:
    return {unit.symbol: unit for unit in units()}


def find_unit(name: str, kind: str | None = None) -> Unit:
    """The unit called ``name`` (symbol, name, plural or alias; case matters only where it must).

    ``kind`` is the dimension the unit must share with another (the unit converted from): an
    unknown name's refusal then lists that dimension's units only, not every unit.

    :raises UnitError: for an unknown or ambiguous name, with close matches and the valid units.
    """
    key = _normalise(name)
    if not key:
        raise UnitError(f"the unit is empty; {_known_units(kind)}")
    exact, folded_names = _index()
    if key in exact:
        return exact[key]
    folded = key.lower()
    if folded in AMBIGUOUS:
        choices = [_by_symbol()[s] for s in AMBIGUOUS[folded]]
        raise UnitError(f"the unit {name!r} is ambiguous: use one of {_describe(choices)}")
    candidates = folded_names.get(folded, [])
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        raise UnitError(
            f"the unit {name!r} is ambiguous (case matters here): use one of "
            + _describe(candidates)
        )
    spoken = _as_spoken(key)
    if spoken != key:
        try:
            return find_unit(spoken, kind)
        except UnitError:
            pass
    import difflib

    close = difflib.get_close_matches(key, list(exact), n=4, cutoff=0.75)
    suggestion = ""
    if close:
        suggestion = " Did you mean " + " or ".join(repr(c) for c in close) + "?"
    raise UnitError(f"unknown unit {name!r}.{suggestion} {_known_units(kind)}")


def convert(value: float, from_unit: str, to_unit: str) -> tuple[float, Unit, Unit]:
    """Convert ``value`` between two units of the same dimension.

    :returns: the converted value and the two units found.
    :raises UnitError: for unknown or ambiguous names, or units of different dimensions; the
        message lists the valid units of the dimension that applies.
    """
    if not math.isfinite(value):
        raise UnitError(f"the value {value!r} is not a finite number; give a number such as 12.5")
    source = find_unit(from_unit)
    target = find_unit(to_unit, source.dimension)
    if source.dimension != target.dimension:
        raise UnitError(
            f"cannot convert {source.plural_name} ({source.dimension}) to {target.plural_name} "
            f"({target.dimension}): they measure different things. Units of "
            f"{source.dimension}: {units_of(source.dimension)}"
        )
    if source.dimension == "temperature":
        kelvin = source.to_base(value)
        if kelvin < -1e-9:
            raise UnitError(
                f"{value} {source.plural_name} is below absolute zero "
                f"(0 K = {source.from_base(0.0):.2f} {source.symbol})"
            )
    result = target.from_base(source.to_base(value))
    if not math.isfinite(result):
        raise UnitError(
            f"{value!r} {source.plural_name} is too large to express in {target.plural_name} "
            f"(the result passes {sys.float_info.max:.3g}); give a smaller value"
        )
    return result, source, target


def units_of(dimension: str) -> str:
    """The symbols of every unit of ``dimension``, comma-separated."""
    return ", ".join(unit.symbol for unit in units() if unit.dimension == dimension)


def _describe(units: Iterable[Unit]) -> str:
    return ", ".join(f"{unit.symbol!r} ({unit.name})" for unit in units)


def _known_units(kind: str | None) -> str:
    """The units a refusal lists: those of ``kind``, or every dimension's."""
    if kind is not None:
        return f"Units of {kind}: {units_of(kind)}"
    parts = [f"{dimension}: {units_of(dimension)}" for dimension in dimensions()]
    return "Known units — " + "; ".join(parts)


class Quantity(NamedTuple):
    """An amount read from what someone wrote: its value, its unit's words, and the unit they
    asked for when the same words name one (``5 miles to km``, ``how many km is 5 miles``)."""

    value: float
    unit: str
    target: str | None = None


@functools.cache
def _amount() -> re.Pattern[str]:
    return re.compile(
        r"(?<![\w.])(?P<number>[-+]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)"
        r"(?:[eE][-+]?\d+)?)(?![\d.])"
        r"|\b(?P<one>an?|one)\b",
        re.IGNORECASE,
    )


# "5 miles to km", "5 miles in km", "5 miles into km", "5 miles as km", "5 miles = ? km".
@functools.cache
def _into() -> re.Pattern[str]:
    return re.compile(r"\s+(?:(?:converted\s+)?(?:in|into|to|as)|=|->|→)\s+(?:\?\s*)?", re.I)


# "how many km is 5 miles", "how many kilometres are there in 5 miles".
@functools.cache
def _how_many() -> re.Pattern[str]:
    return re.compile(r"^(?:.*?\bhow\s+)?(?:many|much)\s+(?=\S)", re.IGNORECASE)


@functools.cache
def _linking() -> re.Pattern[str]:
    return re.compile(r"(?:\s+(?:is|are|make|makes|there|in|of|do|does|equal|equals))+$", re.I)


def asked_unit(text: str) -> str:
    """The unit named in words that ask for one: ``many inches is`` is ``inches``."""
    asked = _how_many().match(text)
    rest = text[asked.end() :] if asked is not None else text
    return _linking().sub("", rest).strip(" ,.?")


def parse_quantity(text: str) -> Quantity:
    """The amount, its unit and any target unit written in ``text``.

    Words before the amount are dropped unless they ask for a unit (``how many <unit> is``,
    ``<unit> are in``); ``a``, ``an`` and ``one`` count as 1 (``seconds in a week``).

    :raises UnitError: when ``text`` holds no amount or no unit after it.
    """
    cleaned = " ".join(text.replace("\u00a0", " ").split()).strip(" ,;:!?").rstrip(".")
    match = next((m for m in _amount().finditer(cleaned) if m["number"]), None)
    if match is None:
        match = next(_amount().finditer(cleaned), None)
    if match is None:
        raise UnitError(
            f"the quantity {text!r} holds no number; give the amount with its unit as the "
            "user wrote it, the number first"
        )
    value = 1.0 if match["one"] else float(match["number"].replace(",", ""))
    before, after = cleaned[: match.start()].strip(), cleaned[match.end() :].strip()
    parts = _into().split(after, maxsplit=1)
    unit = parts[0].strip(" .,;:!?")
    target = parts[1].strip(" .,;:!?") if len(parts) > 1 else None
    if not unit:
        raise UnitError(
            f"the quantity {text!r} names no unit after its number; give the amount with its "
            "unit as the user wrote it"
        )
    if target is None and before:
        # "how many km is 5 miles", "minutes are in a day": the words before ask for a unit.
        asked = _how_many().match(before)
        start = asked.end() if asked is not None else 0
        linked = _linking().search(before, start)
        if asked is not None or (linked is not None and linked.start() > start):
            target = asked_unit(before)
    return Quantity(value, unit, target or None)
