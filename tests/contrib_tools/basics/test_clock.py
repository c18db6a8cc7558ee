"""Time zones: lookup with suggestions, wall-clock parsing, daylight-saving gaps and overlaps."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest

from toolwire_basics import convert_time, current_time
from toolwire_basics._clock import (
    TimeZoneError,
    describe,
    find_zone,
    is_ambiguous,
    now_in,
    parse_wall_time,
)

BERLIN = find_zone("Europe/Berlin")


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Europe/Paris", "Europe/Paris"),
        ("europe/paris", "Europe/Paris"),
        ("utc", "UTC"),
        ("America/New York", "America/New_York"),
        ("Z", "UTC"),
    ],
)
def test_finds_zones(name: str, key: str) -> None:
    assert find_zone(name).key == key


@pytest.mark.parametrize(
    ("place", "zone"),
    [
        ("Paris", "Europe/Paris"),
        ("New York", "America/New_York"),
        ("new york", "America/New_York"),
        ("Tokyo time", "Asia/Tokyo"),
        ("in Sydney", "Australia/Sydney"),
        ("London, UK", "Europe/London"),
        ("San Francisco", "America/Los_Angeles"),
        ("Mumbai", "Asia/Kolkata"),
        ("Japan", "Asia/Tokyo"),
    ],
)
def test_places_are_read_as_people_name_them(place: str, zone: str) -> None:
    found = find_zone(place)
    # Legacy names (Japan) are links to the same rules.
    moment = datetime(2025, 7, 14, 12, 0, tzinfo=UTC)
    assert moment.astimezone(found).utcoffset() == moment.astimezone(find_zone(zone)).utcoffset()


def test_a_city_of_several_zones_is_not_guessed() -> None:
    with pytest.raises(TimeZoneError):
        find_zone("Springfield")


@pytest.mark.parametrize(
    ("name", "fragments"),
    [
        ("Pariss", ["unknown time zone 'Pariss'", "'Europe/Paris'"]),
        ("America/NewYork", ["'America/New_York'"]),
        ("Tokio", ["'Asia/Tokyo'"]),
        ("UTC+2", ["rather than an offset", "daylight saving"]),
        ("Mars/Olympus", ["a city, a country or an IANA zone (Region/City, or UTC)"]),
        ("  ", ["empty"]),
    ],
)
def test_refuses_unknown_zones_with_suggestions(name: str, fragments: list[str]) -> None:
    with pytest.raises(TimeZoneError) as info:
        find_zone(name)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_describe_names_abbreviation_offset_and_weekday() -> None:
    moment = datetime(2025, 7, 14, 12, 0, tzinfo=UTC).astimezone(find_zone("Asia/Kolkata"))
    assert describe(moment) == "2025-07-14 17:30:00 IST (UTC+05:30), Monday"
    west = datetime(2025, 1, 1, 12, 0, tzinfo=UTC).astimezone(find_zone("America/St_Johns"))
    assert describe(west) == "2025-01-01 08:30:00 NST (UTC-03:30), Wednesday"


def test_numeric_abbreviations_are_not_repeated() -> None:
    moment = datetime(2025, 1, 1, 12, 0, tzinfo=UTC).astimezone(find_zone("America/Sao_Paulo"))
    assert describe(moment) == "2025-01-01 09:00:00 UTC-03:00, Wednesday"


def test_now_in_converts_the_given_instant() -> None:
    instant = datetime(2025, 3, 1, 23, 30, tzinfo=UTC)
    assert now_in(find_zone("Asia/Tokyo"), now=instant).date() == date(2025, 3, 2)


@pytest.mark.parametrize(
    ("text", "wall"),
    [
        ("2025-05-01 14:30", "2025-05-01 14:30"),
        ("2025-05-01T14:30:15", "2025-05-01 14:30"),
        ("14:30", "2025-06-02 14:30"),
        ("9:05", "2025-06-02 09:05"),
        ("3pm", "2025-06-02 15:00"),
        ("12am", "2025-06-02 00:00"),
        ("12:15 PM", "2025-06-02 12:15"),
    ],
)
def test_parses_wall_times(text: str, wall: str) -> None:
    moment = parse_wall_time(text, BERLIN, today=date(2025, 6, 2))
    assert f"{moment:%Y-%m-%d %H:%M}" == wall
    assert moment.tzinfo is BERLIN


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("tomorrow", "not understood"),
        ("25:00", "out of range"),
        ("13pm", "hour is 1-12"),
        ("2025-01-01T10:00+01:00", "its own UTC offset"),
        ("2025-03-30 02:30", "does not exist in Europe/Berlin"),
    ],
)
def test_refuses_bad_times(text: str, fragment: str) -> None:
    with pytest.raises(TimeZoneError, match=re.escape(fragment)):
        parse_wall_time(text, BERLIN, today=date(2025, 6, 2))


def test_detects_times_that_occur_twice() -> None:
    assert is_ambiguous(parse_wall_time("2025-10-26 02:30", BERLIN, today=date(2025, 1, 1)))
    assert not is_ambiguous(parse_wall_time("2025-10-26 04:30", BERLIN, today=date(2025, 1, 1)))


async def test_convert_time_tool() -> None:
    result = await convert_time.invoke(
        {"time": "2025-07-14 09:00 Europe/London", "to_timezone": "Asia/Tokyo"}
    )
    assert result.is_ok
    assert result.content == (
        "2025-07-14 09:00:00 BST (UTC+01:00), Monday in Europe/London is "
        "2025-07-14 17:00:00 JST (UTC+09:00), Monday in Asia/Tokyo."
    )
    assert result.artifacts["iso"] == "2025-07-14T17:00:00+09:00"


async def test_convert_time_tool_notes_a_repeated_hour() -> None:
    result = await convert_time.invoke({"time": "2025-10-26 02:30 in Berlin", "to_timezone": "UTC"})
    assert result.content is not None
    assert "00:30:00 UTC" in result.content
    assert "occurs twice in Europe/Berlin" in result.content


async def test_convert_time_tool_refusal() -> None:
    result = await convert_time.invoke({"time": "10:00 London", "to_timezone": "Londn"})
    assert result.is_failure
    assert result.content == (
        "Unknown time zone 'Londn'. Did you mean 'Europe/London'? Time zones are IANA names "
        "written Region/City."
    )


@pytest.mark.parametrize("name", ["now", "time is it", "2day's date"])
def test_a_name_that_is_no_place_is_refused_in_one_short_sentence(name: str) -> None:
    # A small model reads every refusal of a question again at each retry.
    with pytest.raises(TimeZoneError) as info:
        find_zone(name)
    assert str(info.value) == (
        f"unknown time zone {name!r}. Name a city, a country or an IANA zone (Region/City, or UTC)."
    )


def test_an_unknown_abbreviation_is_called_ambiguous() -> None:
    with pytest.raises(TimeZoneError, match="Abbreviations of zones are ambiguous: name a city"):
        find_zone("XYZT")


async def test_current_time_tool() -> None:
    before = datetime.now(UTC)
    result = await current_time.invoke({"timezone": "Asia/Kolkata"})
    after = datetime.now(UTC)
    assert result.is_ok
    assert result.content is not None
    assert re.fullmatch(
        r"It is \d{4}-\d\d-\d\d \d\d:\d\d:\d\d IST \(UTC\+05:30\), \w+day in Asia/Kolkata\.",
        result.content,
    )
    moment = datetime.fromisoformat(result.artifacts["iso"])
    assert before <= moment <= after


async def test_current_time_defaults_to_utc() -> None:
    result = await current_time.invoke({})
    assert result.content is not None
    assert result.content.endswith(" in UTC.")


@pytest.mark.parametrize("name", ["localtime", "LOCALTIME", "posixrules", "Factory"])
async def test_database_files_that_are_not_zones_are_refused(name: str) -> None:
    # "localtime" is the host's own zone: answering with it would reveal where the host is.
    result = await current_time.invoke({"timezone": name})
    assert result.status.value == "error"
    assert "unknown time zone" in (result.content or "").lower()


@pytest.mark.parametrize(
    ("time", "source", "target"),
    [
        ("9999-12-31 23:30", "UTC", "Asia/Tokyo"),
        ("0001-01-01 00:10", "Asia/Tokyo", "America/New_York"),
    ],
)
async def test_a_time_at_the_edge_of_the_calendar_is_refused_clearly(
    time: str, source: str, target: str
) -> None:
    result = await convert_time.invoke({"time": f"{time} {source}", "to_timezone": target})
    assert result.status.value == "error"
    assert "edge of the calendar (years 1 to 9999)" in (result.content or "")


def test_a_time_may_name_its_own_zone_again() -> None:
    from datetime import date

    from toolwire_basics._clock import parse_wall_time

    utc = find_zone("UTC")
    assert parse_wall_time("23:00 UTC", utc, today=date(2025, 1, 1)).hour == 23
    assert parse_wall_time("3pm London", find_zone("London"), today=date(2025, 1, 1)).hour == 15
    with pytest.raises(TimeZoneError, match="not understood"):
        parse_wall_time("23:00 Tokyo", utc, today=date(2025, 1, 1))


@pytest.mark.parametrize(
    ("text", "time", "zone", "target"),
    [
        ("3pm in London", "3pm", "Europe/London", None),
        (
            "When it is 3pm in London, what time is it in Tokyo",
            "3pm",
            "Europe/London",
            "Asia/Tokyo",
        ),
        ("9:00 in New York in London time", "9:00", "America/New_York", "Europe/London"),
        ("14:30 Paris time", "14:30", "Europe/Paris", None),
        ("Convert 18:00 from Tokyo to London", "18:00", "Asia/Tokyo", "Europe/London"),
        ("7pm in Chicago. What time is it in Paris", "7pm", "America/Chicago", "Europe/Paris"),
        ("8 a.m. in Los Angeles", "8 a.m.", "America/Los_Angeles", None),
        ("2025-07-14 09:00 Europe/London", "2025-07-14 09:00", "Europe/London", None),
        # The place before the time, and times said in words.
        ("In Dubai it is 9am; what time is it in London", "9am", "Asia/Dubai", "Europe/London"),
        (
            "What time is it in London when it's 9 am in Tokyo",
            "9 am",
            "Asia/Tokyo",
            "Europe/London",
        ),
        ("Berlin 8:30 -> Tokyo", "8:30", "Europe/Berlin", "Asia/Tokyo"),
        ("noon in London", "noon", "Europe/London", None),
        (
            "midnight in los angeles, what time is it in dublin",
            "midnight",
            "America/Los_Angeles",
            "Europe/Dublin",
        ),
    ],
)
def test_a_time_is_read_with_its_place(text: str, time: str, zone: str, target: str | None) -> None:
    from toolwire_basics._clock import read_time_and_place

    written = read_time_and_place(text)
    assert (written.time, written.zone.key) == (time, zone)
    assert (written.target.key if written.target else None) == target


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("in London", "holds no time of day"),
        ("at 3pm", "names no place with '3pm'"),
    ],
)
def test_a_time_without_its_place_is_refused(text: str, fragment: str) -> None:
    from toolwire_basics._clock import read_time_and_place

    with pytest.raises(TimeZoneError, match=fragment):
        read_time_and_place(text)


@pytest.mark.parametrize(
    ("time", "to_timezone"),
    [
        ("15:00 in London", "Tokyo"),
        # The zone written with the time is the one converted from, whatever to_timezone says.
        ("When it is 15:00 in London, what time is it in Tokyo", "London"),
        ("15:00 London to Tokyo", "what time"),
    ],
)
async def test_the_tool_takes_the_time_with_its_place(time: str, to_timezone: str) -> None:
    result = await convert_time.invoke({"time": time, "to_timezone": to_timezone})
    assert result.is_ok, result.content
    assert result.content is not None
    assert " in Europe/London is " in result.content
    assert result.content.endswith(" in Asia/Tokyo.")


async def test_converting_into_the_times_own_zone_is_refused() -> None:
    result = await convert_time.invoke({"time": "3pm in London", "to_timezone": "London"})
    assert result.is_failure
    assert result.content == (
        "The place 'London' (to_timezone) is the one whose clock shows the time "
        "(Europe/London); give the other place the user named, the one to convert into"
    )


@pytest.mark.parametrize(
    ("time", "valid"),
    [
        ("3pm in London", True),
        ("23:00 UTC", True),
        ("2025-07-14 09:00 Europe/London", True),
        ("3pm", False),
        ("2025-07-14 09:00", False),
        ("in London", False),
    ],
)
def test_the_schema_asks_for_the_time_with_words_after_it(time: str, valid: bool) -> None:
    from toolwire.tools import ArgumentsInvalid

    arguments = {"time": time, "to_timezone": "Tokyo"}
    if valid:
        assert convert_time.validate(arguments) == arguments
    else:
        with pytest.raises(ArgumentsInvalid, match="time"):
            convert_time.validate(arguments)


async def test_noon_and_midnight_are_converted() -> None:
    from toolwire_basics import convert_time

    result = await convert_time.invoke({"time": "noon in UTC", "to_timezone": "Tokyo"})
    assert result.is_ok, result.model_text()
    assert " 12:00:00 UTC" in result.model_text()
    assert " 21:00:00 JST" in result.model_text()
    result = await convert_time.invoke({"time": "midnight in Tokyo", "to_timezone": "UTC"})
    assert " 00:00:00 JST" in result.model_text()


@pytest.mark.parametrize("words", ["today's date", "the date today", "what day is it", ""])
async def test_words_of_a_date_question_are_no_place_and_the_date_is_given_in_utc(
    words: str,
) -> None:
    from toolwire_basics import current_time

    result = await current_time.invoke({"timezone": words})
    assert result.is_ok, result.model_text()
    assert "in UTC." in result.model_text()


@pytest.mark.parametrize("words", ["now", "the current time", "Atlantis"])
async def test_an_unknown_place_and_words_of_the_time_are_still_refused(words: str) -> None:
    from toolwire_basics import current_time

    result = await current_time.invoke({"timezone": words})
    assert not result.is_ok
    assert f"Unknown time zone {words!r}" in result.model_text()


def test_a_city_known_by_an_old_zone_name_too_is_found() -> None:
    assert find_zone("Buenos Aires").key == "America/Argentina/Buenos_Aires"
    assert find_zone("buenos aires").key == "America/Argentina/Buenos_Aires"


async def test_an_unknown_place_is_still_refused() -> None:
    from toolwire_basics import current_time

    result = await current_time.invoke({"timezone": "Atlantis"})
    assert not result.is_ok
    assert "Unknown time zone 'Atlantis'" in result.model_text()


async def test_a_time_written_with_only_the_place_asked_for_converts_from_the_other() -> None:
    # "Boston 13:00 -> Rome", copied as the time "13:00 -> Rome" and the place "Boston".
    result = await convert_time.invoke({"time": "13:00 -> Rome", "to_timezone": "Boston"})
    assert result.is_ok, result.model_text()
    assert "13:00:00 EST" in result.model_text() or "13:00:00 EDT" in result.model_text()
    assert "in America/New_York is" in result.model_text()
    assert result.model_text().endswith("in Europe/Rome.")
    same = await convert_time.invoke({"time": "13:00 -> Rome", "to_timezone": "Italy"})
    assert not same.is_ok
    assert "is that place too" in same.model_text()


@pytest.mark.parametrize("time", ["10 PM", "8 a.m.", "midnight", "9:00"])
async def test_a_time_without_a_word_for_its_place_is_refused_by_the_schema(time: str) -> None:
    result = await convert_time.invoke({"time": time, "to_timezone": "Tokyo"})
    assert not result.is_ok
    assert "pattern" in result.model_text()
