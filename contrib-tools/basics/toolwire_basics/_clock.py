"""Dates and times in IANA time zones: zone lookup with suggestions, and wall-clock conversion."""

from __future__ import annotations

import functools
import re
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import zoneinfo


class TimeZoneError(ValueError):
    """A zone or time that cannot be used; the message says what would be valid."""


_ALIASES = {"utc": "UTC", "gmt": "Etc/GMT", "z": "UTC", "zulu": "UTC"}
# Files of the zone database that are not zones: "localtime" is the host's own zone (naming it
# would tell a model where the host is), the others are tzdata's internals.
_NOT_ZONES = frozenset({"localtime", "posixrules", "factory", "leap-seconds.list", "leapseconds"})


@functools.cache
def _zone_names() -> tuple[str, ...]:
    import zoneinfo

    return tuple(
        sorted(
            name
            for name in zoneinfo.available_timezones()
            if name.lower() not in _NOT_ZONES and not name.startswith(("posix/", "right/"))
        )
    )


@functools.cache
def _folded_names() -> dict[str, str]:
    return {name.lower(): name for name in _zone_names()}


@functools.cache
def _cities() -> dict[str, list[str]]:
    cities: dict[str, list[str]] = {}
    for name in _zone_names():
        if "/" in name and not name.startswith("Etc/"):
            city = name.rsplit("/", 1)[1].replace("_", " ").lower()
            cities.setdefault(city, []).append(name)
    return cities


def find_zone(name: str) -> zoneinfo.ZoneInfo:
    """The IANA zone called ``name`` (case does not matter; ``UTC`` and ``GMT`` are accepted), or
    the zone of a place named as people name it: ``Tokyo``, ``New York``, ``Paris time``, ``Japan``.

    :raises TimeZoneError: for an unknown name, listing close IANA names.
    """
    key = name.strip()
    if not key:
        raise TimeZoneError(
            "the time zone is empty; give an IANA time zone name such as 'Europe/Paris', "
            "'America/New_York' or 'UTC'"
        )
    canonical = _exact_zone(key) or _place(key)
    if canonical is not None:
        import zoneinfo

        return zoneinfo.ZoneInfo(canonical)
    raise TimeZoneError(f"unknown time zone {name!r}. {_suggest(key)}")


def _exact_zone(key: str) -> str | None:
    """The zone ``key`` names exactly: an alias, an IANA name (any case, spaces for ``_``), a
    known place or the city of one zone; None otherwise."""
    folded = key.lower()
    found = _ALIASES.get(folded) or _folded_names().get(folded.replace(" ", "_"))
    if found is None:
        found = _PLACES.get(folded)
    if found is None:
        found = _one_zone(_cities().get(folded.replace("_", " "), []))
    return found


def _one_zone(zones: list[str]) -> str | None:
    """The zone of a city that ``zones`` all keep (old names such as ``America/Buenos_Aires``
    for ``America/Argentina/Buenos_Aires`` keep the same clock); None when they differ."""
    if not zones:
        return None
    if len(zones) == 1:
        return zones[0]
    import zoneinfo

    def offsets(name: str) -> tuple[object, ...]:
        zone = zoneinfo.ZoneInfo(name)
        return tuple(datetime(2024, m, 15, tzinfo=zone).utcoffset() for m in (1, 4, 7, 10))

    first = offsets(zones[0])
    if all(offsets(other) == first for other in zones[1:]):
        return max(zones, key=lambda name: (name.count("/"), name))
    return None


# Places people name that are not the city of an IANA zone, with the zone they keep.
_PLACES = {
    "atlanta": "America/New_York",
    "bangalore": "Asia/Kolkata",
    "barcelona": "Europe/Madrid",
    "beijing": "Asia/Shanghai",
    "boston": "America/New_York",
    "california": "America/Los_Angeles",
    "china": "Asia/Shanghai",
    "dallas": "America/Chicago",
    "delhi": "Asia/Kolkata",
    "england": "Europe/London",
    "france": "Europe/Paris",
    "frankfurt": "Europe/Berlin",
    "germany": "Europe/Berlin",
    "houston": "America/Chicago",
    "india": "Asia/Kolkata",
    "italy": "Europe/Rome",
    "japan": "Asia/Tokyo",
    "kyoto": "Asia/Tokyo",
    "miami": "America/New_York",
    "milan": "Europe/Rome",
    "montreal": "America/Toronto",
    "mumbai": "Asia/Kolkata",
    "munich": "Europe/Berlin",
    "new delhi": "Asia/Kolkata",
    "osaka": "Asia/Tokyo",
    "san francisco": "America/Los_Angeles",
    "seattle": "America/Los_Angeles",
    "spain": "Europe/Madrid",
    "uk": "Europe/London",
    "united kingdom": "Europe/London",
    "washington": "America/New_York",
    "washington dc": "America/New_York",
}


@functools.cache
def _place_noise() -> re.Pattern[str]:
    return re.compile(r"^(?:in|at|the)\s+|\s+(?:time|local time|time zone)$|[?.!]+$", re.I)


def _place(key: str) -> str | None:
    """The zone of a place named as people name it: a zone's city (``Tokyo``, ``New York``), a
    well-known city or country of one zone, ``Paris time``, ``London, UK``; None when unsure."""
    text = key.lower().split(",")[0].strip()
    previous = None
    while previous != text:
        previous, text = text, _place_noise().sub("", text).strip()
    if text in _ALIASES:
        return _ALIASES[text]
    if text in _PLACES:
        return _PLACES[text]
    return _one_zone(_cities().get(text.replace("_", " "), []))


_ASKING_WORDS = frozenset(
    {
        "what",
        "what's",
        "whats",
        "is",
        "it",
        "it's",
        "the",
        "a",
        "today",
        "today's",
        "todays",
        "date",
        "date's",
        "day",
        "days",
        "week",
        "weekday",
        "of",
        "time",
        "now",
        "current",
        "currently",
        "right",
        "local",
        "here",
        "please",
        "tell",
        "me",
    }
)
_DATE_WORDS = frozenset(
    {"today", "today's", "todays", "date", "date's", "day", "days", "week", "weekday"}
)


def names_no_place(text: str | None) -> bool:
    """True when ``text`` is empty, or only words of a question about the date (``today's
    date``, ``what day is it``): the user named no place. Words about the time alone (``now``,
    ``the current time``) are not taken for that: they are what a place was left out for."""
    if text is None or not text.strip():
        return True
    words = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text.lower())
    return (
        not re.search(r"\d", text)
        and all(word in _ASKING_WORDS for word in words)
        and any(word in _DATE_WORDS for word in words)
    )


def _suggest(key: str) -> str:
    if re.fullmatch(r"(?i)(utc|gmt)?\s*[+-]\d{1,2}(:?\d{2})?", key):
        return (
            "Give a named IANA zone rather than an offset (offsets change with daylight saving "
            "time), for example 'Europe/Berlin', or 'UTC'."
        )
    city = key.lower().replace("_", " ").rsplit("/", 1)[-1].strip()
    matches = list(_cities().get(city, []))
    import difflib

    if not matches:
        close_cities = difflib.get_close_matches(city, list(_cities()), n=3, cutoff=0.8)
        matches = [zone for c in close_cities for zone in _cities()[c]]
    if not matches:
        folded = difflib.get_close_matches(key.lower(), list(_folded_names()), n=3, cutoff=0.6)
        matches = [_folded_names()[f] for f in folded]
    if matches:
        shown = ", ".join(repr(m) for m in matches[:5])
        return f"Did you mean {shown}? Time zones are IANA names written Region/City."
    # Short: a small model reads every refusal of a question again at each retry.
    if re.fullmatch(r"[A-Z]{2,5}", key):
        return "Abbreviations of zones are ambiguous: name a city in the zone instead."
    return "Name a city, a country or an IANA zone (Region/City, or UTC)."


def describe(moment: datetime) -> str:
    """``2024-05-01 14:30:00 CEST (UTC+02:00), Wednesday`` for an aware datetime."""
    offset = moment.utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    abbreviation = moment.tzname() or ""
    numeric = f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"
    label = f"{abbreviation} ({numeric})" if abbreviation and abbreviation[0].isalpha() else numeric
    return f"{moment:%Y-%m-%d %H:%M:%S} {label}, {moment:%A}"


def now_in(zone: zoneinfo.ZoneInfo, *, now: datetime | None = None) -> datetime:
    """The current time (or ``now``, for tests) in ``zone``."""
    moment = now if now is not None else datetime.now(UTC)
    return moment.astimezone(zone)


@functools.cache
def _time_only() -> re.Pattern[str]:
    return re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp]\.?[Mm]\.?)?")


@functools.cache
def _hour_ampm() -> re.Pattern[str]:
    return re.compile(r"(\d{1,2})\s*([AaPp]\.?[Mm]\.?)")


def parse_wall_time(text: str, zone: zoneinfo.ZoneInfo, *, today: date) -> datetime:
    """A wall-clock time in ``zone``: ``YYYY-MM-DD HH:MM[:SS]``, or ``HH:MM`` / ``3pm`` for today.

    :raises TimeZoneError: for text that is not such a time, a time carrying its own offset, or a
        time that does not exist in the zone (skipped by a daylight-saving change).
    """
    value = _without_own_zone(text.strip(), zone)
    wall = _time_of_day(value)
    if wall is not None:
        moment = datetime.combine(today, wall)
    else:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise TimeZoneError(
                f"the time {text!r} is not understood; write 'YYYY-MM-DD HH:MM' (for example "
                "'2025-03-14 15:30'), or 'HH:MM' (24-hour) or '3pm' for today"
            ) from None
        if moment.tzinfo is not None:
            raise TimeZoneError(
                f"the time {text!r} carries its own UTC offset; give the wall-clock time without "
                "an offset and name its place after it"
            )
    local = moment.replace(tzinfo=zone)
    round_trip = local.astimezone(UTC).astimezone(zone)
    if round_trip.replace(tzinfo=None) != moment:
        raise TimeZoneError(
            f"{moment:%Y-%m-%d %H:%M} does not exist in {zone.key}: the clocks skip it when "
            "daylight saving time begins; give a time outside the skipped hour"
        )
    return local


def _without_own_zone(value: str, zone: zoneinfo.ZoneInfo) -> str:
    """``23:00 UTC`` as ``23:00`` when the trailing place is the zone the time is said to be in."""
    match = re.fullmatch(r"(.*?\d(?:\s*[AaPp]\.?[Mm]\.?)?)\s+([^\d]+)", value)
    if match is None:
        return value
    try:
        named = find_zone(match[2])
    except TimeZoneError:
        return value
    same = all(
        datetime(2024, month, 15, tzinfo=named).utcoffset()
        == datetime(2024, month, 15, tzinfo=zone).utcoffset()
        for month in (1, 7)
    )
    return match[1] if same else value


_WORD_TIMES = {"noon": time(12), "midday": time(12), "midnight": time(0)}


def _time_of_day(value: str) -> time | None:
    spoken = _WORD_TIMES.get(value.lower().removeprefix("12 ").strip())
    if spoken is not None:
        return spoken
    match = _time_only().fullmatch(value)
    if match:
        hour, minute, second = int(match[1]), int(match[2]), int(match[3] or 0)
        hour = _twelve_hour(hour, match[4], value)
    else:
        match = _hour_ampm().fullmatch(value)
        if not match:
            return None
        hour, minute, second = _twelve_hour(int(match[1]), match[2], value), 0, 0
    try:
        return time(hour, minute, second)
    except ValueError:
        raise TimeZoneError(
            f"the time {value!r} is out of range (hours 0-23, minutes and seconds 0-59)"
        ) from None


def _twelve_hour(hour: int, marker: str | None, value: str) -> int:
    if marker is None:
        return hour
    if not 1 <= hour <= 12:
        raise TimeZoneError(f"the time {value!r} has hour {hour}; with am/pm the hour is 1-12")
    pm = marker[0] in "Pp"
    return hour % 12 + (12 if pm else 0)


def is_ambiguous(moment: datetime) -> bool:
    """True when the wall time of ``moment`` occurs twice in its zone (clocks set back)."""
    other = moment.replace(fold=1 - moment.fold)
    return other.utcoffset() != moment.utcoffset()


class TimeAndPlace(NamedTuple):
    """A time read from what someone wrote, the zone whose clock shows it, and the zone they
    asked for when the same words name one (``9:00 in New York in London time``). ``zone`` is
    None when the words name only the zone asked for (``13:00 -> Rome``)."""

    time: str
    zone: zoneinfo.ZoneInfo | None
    target: zoneinfo.ZoneInfo | None = None


@functools.cache
def _written_time() -> re.Pattern[str]:
    return re.compile(
        r"\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}(?::\d{2})?"
        r"|(?<![\d:])\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AaPp]\.?[Mm]\b\.?)?"
        r"|(?<![\d:])\d{1,2}\s*[AaPp]\.?[Mm]\b\.?"
        r"|\b(?:12\s+)?(?:noon|midday|midnight)\b",
        re.IGNORECASE,
    )


@functools.cache
def _word() -> re.Pattern[str]:
    return re.compile(r"[^\s,;?!]+")


_MOST_WORDS_IN_A_PLACE = 4


_TOWARDS = frozenset({"->", "→", "=>", "to", "into"})
"""Words after which a place is the one a time is converted into."""


def places_in(text: str) -> list[tuple[int, int, zoneinfo.ZoneInfo]]:
    """Every place ``text`` names, as (its first word, the word after its last, its zone), words
    counted from 0; the longest name wins (``New York``, not ``York``)."""
    import zoneinfo

    words = [m.group().strip(".:'\"()") for m in _word().finditer(text)]
    found: list[tuple[int, int, zoneinfo.ZoneInfo]] = []
    start = 0
    while start < len(words):
        for size in range(min(_MOST_WORDS_IN_A_PLACE, len(words) - start), 0, -1):
            name = " ".join(words[start : start + size])
            key = _exact_zone(name) if name else None
            if key is not None:
                found.append((start, start + size, zoneinfo.ZoneInfo(key)))
                start += size
                break
        else:
            start += 1
    return found


def read_time_and_place(text: str) -> TimeAndPlace:
    """The time written in ``text``, the place whose clock shows it, and another place if any.

    The place is the one written nearest the time, before it or after it (after when both are
    as near): ``3pm in London``, ``when it is 3pm in London, what time is it in Tokyo``, ``in
    Dubai it is 9am; what time is it in London``, ``London 8:30 -> Tokyo``. Times are read as
    ``HH:MM``, ``3pm``, ``YYYY-MM-DD HH:MM``, ``noon`` and ``midnight``; places as
    :func:`find_zone` finds them. The other place is the last one of another zone. A place
    written after ``to`` or ``->`` is the one asked for, never the time's own: when it is the
    only one, ``zone`` is None.

    :raises TimeZoneError: when ``text`` holds no time, or no place.
    """
    found = _written_time().search(text)
    if found is None:
        raise TimeZoneError(
            f"the time {text!r} holds no time of day; write it as 'HH:MM' (24-hour), '3pm', or "
            "'YYYY-MM-DD HH:MM', together with the place whose clock shows it"
        )
    places = places_in(text)
    if not places:
        raise TimeZoneError(
            f"the time {text!r} names no place with {found[0]!r}; give the time together with "
            "the place (city, country or IANA time zone) whose clock shows it, as the user "
            "wrote it"
        )
    first = len(_word().findall(text[: found.start()]))
    last = first + len(_word().findall(found[0]))
    words = [w.lower() for w in _word().findall(text)]
    # A place written after "to" or "->" is the one asked for, never the time's own.
    own = [p for p in places if p[0] == 0 or words[p[0] - 1] not in _TOWARDS]
    if not own:
        return TimeAndPlace(found[0], None, places[-1][2])

    def distance(place: tuple[int, int, zoneinfo.ZoneInfo]) -> tuple[int, int]:
        begin, end, _ = place
        if begin >= last:
            return (begin - last, 0)
        return (max(first - end, 0), 1)

    zone = min(own, key=distance)[2]
    target = next((z for _, _, z in reversed(places) if z.key != zone.key), None)
    return TimeAndPlace(found[0], zone, target)
