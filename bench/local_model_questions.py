"""Everyday questions for the embedded model, each with the tool it needs and a check of the answer.

Used by ``bench/local_model.py --questions``. Expected values are computed here, at run time for
the clock questions (the current time in a zone, a wall time converted today), never typed in.
Several phrasings of each kind: percent, products, powers and roots, averages, durations; units
written as people write them; zones named by city.
"""

from __future__ import annotations

import math
import re
import zoneinfo
from collections.abc import Callable
from datetime import UTC, datetime, time, timedelta
from typing import Any

import attrs

Check = Callable[[str], bool]


@attrs.frozen
class Question:
    """A question, the tool that answers it (None: no tool is needed) and the answer's check."""

    text: str
    tool: str | None
    check: Check
    expected: str


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text`` (thousands separators dropped)."""
    cleaned = re.sub(r"(?<=\d)[,\u202f\u00a0 ](?=\d{3}\b)", "", text)
    return [float(n) for n in _NUMBER.findall(cleaned)]


def number(expected: float, *, tolerance: float = 1e-3) -> Check:
    """The answer states ``expected``, within a relative ``tolerance`` (or 0.01 absolute)."""

    def check(answer: str) -> bool:
        return any(
            abs(n - expected) <= max(0.01, tolerance * abs(expected)) for n in numbers_in(answer)
        )

    return check


def words(*options: str) -> Check:
    """The answer holds one of ``options`` as a word (case ignored)."""
    pattern = re.compile(r"\b(" + "|".join(re.escape(o) for o in options) + r")\b", re.I)
    return lambda answer: pattern.search(answer) is not None


def _clock_spellings(moment: datetime) -> list[str]:
    hour12 = moment.hour % 12 or 12
    suffix = "am" if moment.hour < 12 else "pm"
    return [
        f"{moment.hour:02d}:{moment.minute:02d}",
        f"{moment.hour}:{moment.minute:02d}",
        f"{hour12}:{moment.minute:02d} ?{suffix}",
        f"{hour12}:{moment.minute:02d} ?{suffix[0]}\\.m\\.",
    ]


def clock(moment_of: Callable[[], datetime], *, slack_minutes: int = 2) -> Check:
    """The answer states the wall time ``moment_of()`` (within ``slack_minutes``), 12- or 24-hour.

    A 24-hour time is also accepted when the 12-hour reading has no am/pm.
    """

    def check(answer: str) -> bool:
        centre = moment_of()
        for shift in range(-slack_minutes, slack_minutes + 1):
            moment = centre + timedelta(minutes=shift)
            for spelling in _clock_spellings(moment):
                if re.search(r"(?<![\d:+-])" + spelling + r"(?!\d)", answer, re.I):
                    return True
        return False

    return check


def now_in(zone: str) -> Callable[[], datetime]:
    """The current time in ``zone``, read when the answer is checked."""
    return lambda: datetime.now(UTC).astimezone(zoneinfo.ZoneInfo(zone))


def converted(hour: int, minute: int, source: str, target: str) -> Callable[[], datetime]:
    """Today's ``hour:minute`` in ``source`` as a wall time in ``target``."""

    def moment() -> datetime:
        zone = zoneinfo.ZoneInfo(source)
        today = datetime.now(UTC).astimezone(zone).date()
        local = datetime.combine(today, time(hour, minute), tzinfo=zone)
        return local.astimezone(zoneinfo.ZoneInfo(target))

    return moment


def weekday(zone: str) -> Check:
    """The answer names today's weekday in ``zone``."""
    return lambda answer: words(now_in(zone)().strftime("%A"))(answer)


def today(zone: str) -> Check:
    """The answer gives today's date in ``zone`` (ISO, or day and month name)."""

    def check(answer: str) -> bool:
        day = now_in(zone)().date()
        if day.isoformat() in answer:
            return True
        month = day.strftime("%B")
        return bool(re.search(rf"\b{day.day}(st|nd|rd|th)?\b", answer)) and month in answer

    return check


def check_of(spec: dict[str, Any]) -> tuple[Check, str]:
    """The check a question file's ``check`` entry describes, and the expected value shown.

    ``{"number": x, "tolerance": t}``, ``{"words": [...]}``, ``{"clock_now": zone}``,
    ``{"clock_at": [hour, minute, source, target]}``, ``{"weekday": zone}``, ``{"today": zone}``.
    """
    if "number" in spec:
        value = float(spec["number"])
        return number(value, tolerance=float(spec.get("tolerance", 1e-3))), f"{value:g}"
    if "words" in spec:
        return words(*spec["words"]), " or ".join(spec["words"])
    if "clock_now" in spec:
        return clock(now_in(spec["clock_now"])), f"now in {spec['clock_now']}"
    if "clock_at" in spec:
        hour, minute, source, target = spec["clock_at"]
        return (
            clock(converted(hour, minute, source, target), slack_minutes=0),
            f"{hour:02d}:{minute:02d} {source} in {target}",
        )
    if "weekday" in spec:
        return weekday(spec["weekday"]), f"weekday in {spec['weekday']}"
    if "today" in spec:
        return today(spec["today"]), f"date in {spec['today']}"
    raise ValueError(f"unknown check {spec!r}")


def from_file(half: str) -> list[Question]:
    """The questions of one half of the generated set (``dev`` or ``test``), or of ``fresh``."""
    from question_set import load

    out = []
    for item in load(half):
        check, expected = check_of(item["check"])
        out.append(Question(item["text"], item["tool"], check, expected))
    return out


def _q(text: str, tool: str | None, check: Check, expected: object) -> Question:
    return Question(text, tool, check, str(expected))


def _calc(text: str, value: float) -> Question:
    return _q(text, "calculator", number(value), value)


def _units(text: str, value: float) -> Question:
    return _q(text, "convert_units", number(value, tolerance=5e-3), value)


def _now(text: str, zone: str) -> Question:
    return _q(text, "current_time", clock(now_in(zone)), f"now in {zone}")


def _at(text: str, hour: int, minute: int, source: str, target: str) -> Question:
    return _q(
        text,
        "convert_time",
        clock(converted(hour, minute, source, target), slack_minutes=0),
        f"{hour:02d}:{minute:02d} {source} in {target}",
    )


def questions() -> list[Question]:
    """The question set: 39 arithmetic, 38 unit, 12 clock, 14 zone conversion, 10 tool-free."""
    return [
        # -- arithmetic ------------------------------------------------------------------------
        _calc("What is 17.5% of 2480?", 434),
        _calc("What's 15 percent of 80?", 12),
        _calc("Calculate 12% of 250.", 30),
        _calc("How much is 8% of 1500?", 120),
        _calc("What is 25% of 360?", 90),
        _calc("Find 40 percent of 95.", 38),
        _calc("What is 37 times 43?", 1591),
        _calc("Multiply 128 by 64.", 8192),
        _calc("What is 2480 * 17?", 42160),
        _calc("How much is 19 times 21?", 399),
        _calc("What's 256 multiplied by 12?", 3072),
        _calc("What is 1024 divided by 16?", 64),
        _calc("Divide 945 by 7.", 135),
        _calc("What is 7.5 / 2.5?", 3),
        _calc("What is 100 divided by 8?", 12.5),
        _calc("What is 4821 plus 3967?", 8788),
        _calc("What is 10000 minus 3457?", 6543),
        _calc("Add 123, 456 and 789.", 1368),
        _calc("What is 98.6 - 32?", 66.6),
        _calc("What is the sum of 250 and 175?", 425),
        _calc("What is 2 to the 20th power?", 2**20),
        _calc("What is 3 to the power of 7?", 3**7),
        _calc("What is 15 squared?", 225),
        _calc("What is 12 cubed?", 1728),
        _calc("Calculate 2^16.", 2**16),
        _calc("What is the square root of 1764?", 42),
        _calc("What's the square root of 144?", 12),
        _calc("What is the square root of 2?", math.sqrt(2)),
        _calc("What is the cube root of 27?", 3),
        _calc("What is the average of 4, 8, 15, 16, 23 and 42?", 18),
        _calc("What is the mean of 10, 20 and 60?", 30),
        _calc("What is (3 + 4) * 12?", 84),
        _calc("What is 5 factorial?", 120),
        _units("How many seconds are there in a week?", 7 * 24 * 3600),
        _units("How many minutes are in a day?", 24 * 60),
        _units("How many hours are in 3 weeks?", 3 * 7 * 24),
        _calc("If I buy 3 items at 4.25 each, what is the total?", 12.75),
        _calc("What do 5 tickets at 12.50 each cost?", 62.5),
        _calc("How much are 4 books for 7.99 apiece?", 31.96),
        _calc("What is 1500 divided by 12?", 125),
        _calc("What is 45 percent of 1200?", 540),
        _calc("What is 81 divided by 9 plus 6?", 15),
        # -- units -----------------------------------------------------------------------------
        _units("Convert 5 miles to kilometers.", 5 * 1.609344),
        _units("How many kilometres is 5 miles?", 5 * 1.609344),
        _units("What is 10 km in miles?", 10 / 1.609344),
        _units("How many miles are 42.195 km?", 42.195 / 1.609344),
        _units("Convert 70 kg to pounds.", 70 / 0.45359237),
        _units("How many pounds is 3 kg?", 3 / 0.45359237),
        _units("What is 150 lb in kg?", 150 * 0.45359237),
        _units("Convert 100 °F to Celsius.", (100 - 32) * 5 / 9),
        _units("What is 30 degrees Celsius in Fahrenheit?", 86),
        _units("What is 0 °C in kelvin?", 273.15),
        _units("How many feet are in 3 meters?", 3 / 0.3048),
        _units("Convert 6 feet to centimeters.", 6 * 30.48),
        _units("How many inches is 30 cm?", 30 / 2.54),
        _units("Convert 2 gallons to liters.", 2 * 3.785411784),
        _units("How many liters are in 5 gallons?", 5 * 3.785411784),
        _units("What is 500 ml in cups?", 0.5 / 0.2365882365),
        _units("Convert 60 mph to km/h.", 60 * 1.609344),
        _units("What is 100 km/h in mph?", 100 / 1.609344),
        _units("How many ounces are in 2 pounds?", 32),
        _units("Convert 16 ounces to grams.", 16 * 28.349523125),
        _units("How many grams are in 2.5 kg?", 2500),
        _units("Convert 3 hours to minutes.", 180),
        _units("Convert 5 GiB to MiB.", 5120),
        _units("How many square feet is 20 square meters?", 20 / 0.09290304),
        _units("What is 1 mile in feet?", 5280),
        _units("Convert 200 meters to yards.", 200 / 0.9144),
        _units("Convert 50 degrees Fahrenheit to Celsius.", 10),
        _units("Convert 250 grams to ounces.", 250 / 28.349523125),
        _units("How many centimeters is 12 inches?", 30.48),
        _units("What is 5 kilograms in pounds?", 5 / 0.45359237),
        _units("I ran 10 kilometers. How far is that in miles?", 10 / 1.609344),
        _units("What's 72 degrees Fahrenheit in Celsius?", (72 - 32) * 5 / 9),
        _units("Change 2 hours into seconds.", 7200),
        _units("How many cups are in 2 liters?", 2 / 0.2365882365),
        _units("Express 3 pints in liters.", 3 * 0.473176473),
        # -- the current time ------------------------------------------------------------------
        _now("What time is it in Tokyo?", "Asia/Tokyo"),
        _now("What's the current time in New York?", "America/New_York"),
        _now("What time is it now in Sydney?", "Australia/Sydney"),
        _now("Tell me the time in London.", "Europe/London"),
        _now("What is the time in Paris right now?", "Europe/Paris"),
        _now("What is the current time in Los Angeles?", "America/Los_Angeles"),
        _now("What time is it in Berlin?", "Europe/Berlin"),
        _now("What's the time in Dubai?", "Asia/Dubai"),
        _now("What time is it in UTC?", "UTC"),
        _now("What time is it in Singapore?", "Asia/Singapore"),
        _q(
            "What day of the week is it in Tokyo?", "current_time", weekday("Asia/Tokyo"), "weekday"
        ),
        _q("What is today's date in London?", "current_time", today("Europe/London"), "date"),
        # -- converting a wall time ------------------------------------------------------------
        _at(
            "When it is 3pm in London, what time is it in Tokyo?",
            15,
            0,
            "Europe/London",
            "Asia/Tokyo",
        ),
        _at("What is 9:00 in New York in London time?", 9, 0, "America/New_York", "Europe/London"),
        _at("Convert 14:30 Paris time to Tokyo time.", 14, 30, "Europe/Paris", "Asia/Tokyo"),
        _at(
            "If it's 8am in Los Angeles, what time is it in Berlin?",
            8,
            0,
            "America/Los_Angeles",
            "Europe/Berlin",
        ),
        _at("Convert 18:00 from Tokyo to London.", 18, 0, "Asia/Tokyo", "Europe/London"),
        _at(
            "It's 7pm in Chicago. What time is it in Paris?",
            19,
            0,
            "America/Chicago",
            "Europe/Paris",
        ),
        _at(
            "What time is 10:15 in Berlin in Los Angeles?",
            10,
            15,
            "Europe/Berlin",
            "America/Los_Angeles",
        ),
        _at(
            "When it's 6:30 in Dubai, what time is it in Singapore?",
            6,
            30,
            "Asia/Dubai",
            "Asia/Singapore",
        ),
        _at("Convert 23:00 UTC to Tokyo time.", 23, 0, "UTC", "Asia/Tokyo"),
        _at("What is 5pm in Sydney in London time?", 17, 0, "Australia/Sydney", "Europe/London"),
        _at(
            "I have a call at 4pm in Berlin. What time is that in New York?",
            16,
            0,
            "Europe/Berlin",
            "America/New_York",
        ),
        _at("At 11:45 in Tokyo, what time is it in Paris?", 11, 45, "Asia/Tokyo", "Europe/Paris"),
        _at("Turn 20:00 London time into Sydney time.", 20, 0, "Europe/London", "Australia/Sydney"),
        _at("In Dubai it is 9am; what time is it in London?", 9, 0, "Asia/Dubai", "Europe/London"),
        # -- no tool needed --------------------------------------------------------------------
        _q("What is the capital of France?", None, words("Paris"), "Paris"),
        _q("What color is the sky on a clear day?", None, words("blue"), "blue"),
        _q("Say hello.", None, words("hello", "hi"), "hello"),
        _q("What is the opposite of hot?", None, words("cold"), "cold"),
        _q("How many legs does a dog have?", None, words("4", "four"), "four"),
        _q("What language is spoken in Spain?", None, words("Spanish"), "Spanish"),
        _q("What do bees make?", None, words("honey"), "honey"),
        _q("Which animal says moo?", None, words("cow", "cows"), "cow"),
        _q("What is the largest ocean on Earth?", None, words("Pacific"), "Pacific"),
        _q("What is the chemical formula of water?", None, words("H2O"), "H2O"),
    ]
