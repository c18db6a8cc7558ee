"""When each tool is worth offering: the user's words decide, so small models see short prompts.

Each test reads only the user's own turns (never tool results), so once a tool is offered in a run
it stays offered, and the system prompt stays the same from round to round. A tool the run's tool
choice names is offered whatever the words, in every round of the run
(``OfferRequest.chosen_tool``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ._settings import BasicsSettings

if TYPE_CHECKING:
    from toolwire import FunctionSpec, OfferRequest, Tool
    from toolwire.messages import Message

# The patterns compile on first use (a test asks them), so listing the tools pays for none.


@functools.cache
def _math_words() -> re.Pattern[str]:
    # "square" and "cubic" before a unit are an area or a volume, not arithmetic.
    return re.compile(
        r"\b(calculat\w*|comput\w*|sum|total|average|mean|percent\w*|plus|minus|times|multipl\w*|"
        r"divid\w*|square(?!\s+(?:feet|foot|ft|meters?|metres?|m|miles?|mi|km|kilomet\w+|inch\w*|"
        r"yards?|yd|cm|centimet\w+)\b)|root|sqrt|power|squared|cubed|factorial|logarithm|log|sin|"
        r"cos|tan)\b",
        re.IGNORECASE,
    )


@functools.cache
def _time_words() -> re.Pattern[str]:
    # "day", "week" or "year" alone is no clock question ("the sky on a clear day"); asked
    # about ("what day is it", "day of the week") it is.
    return re.compile(
        r"\b(time|times?zones?|date|today|tonight|tomorrow|yesterday|now|clock|o'clock|weekday|"
        r"utc|gmt|noon|midnight|morning|evening|(?:what|which)\s+(?:day|week|month|year|hour)|"
        r"day\s+of\s+the\s+week)\b",
        re.IGNORECASE,
    )


# Words the tests look for, and how people misspell them: a word one slip away (a letter left
# out, added, changed, or two swapped) with the same first letter is read as the word.
_KEYWORDS = (
    "time",
    "date",
    "today",
    "clock",
    "convert",
    "percent",
    "calculate",
    "average",
    "multiply",
    "divided",
    "square",
    "midnight",
    "weekday",
)
_NOT_SLIPS = frozenset(
    {"tie", "tim", "tile", "tide", "tame", "tome", "tine", "data", "dare", "dale", "dame", "dote"}
)


def _one_slip(word: str, target: str) -> bool:
    """True when ``word`` is ``target`` with one letter left out, added, changed, or two
    neighbours swapped."""
    if word == target or abs(len(word) - len(target)) > 1:
        return False
    if len(word) == len(target):
        diff = [i for i, (a, b) in enumerate(zip(word, target, strict=True)) if a != b]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and word[diff[0]] == target[diff[1]]
            and word[diff[1]] == target[diff[0]]
        )
    short, long = (word, target) if len(word) < len(target) else (target, word)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def spelled_out(text: str) -> str:
    """``text`` with the misspellings of the words the tests look for corrected (``tme``,
    ``tiem``, ``precent``)."""

    def fix(match: re.Match[str]) -> str:
        word = match.group()
        lowered = word.lower()
        if len(lowered) < 3 or lowered in _NOT_SLIPS:
            return word
        for keyword in _KEYWORDS:
            if lowered[0] == keyword[0] and _one_slip(lowered, keyword):
                return keyword
        return word

    return re.sub(r"[^\W\d_]+", fix, text)


@functools.cache
def _time_of_day() -> re.Pattern[str]:
    return re.compile(r"\b\d{1,2}(:\d{2}|\s*[ap]\.?m\b)|\bnoon\b|\bmidnight\b", re.IGNORECASE)


@functools.cache
def _zone_words() -> re.Pattern[str]:
    return re.compile(r"\btime\s*zones?\b|\btimezones?\b|\butc\b|\bgmt\b|\b[A-Z][a-z]+/[A-Z]")


@functools.cache
def _quantity() -> re.Pattern[str]:
    return re.compile(r"(\d+(?:[.,]\d+)?)\s*([^\W\d][\w°/²³^.-]*(?:\s+[a-z]+)?|°\s*[CFKR]\b)")


@functools.cache
def _convert() -> re.Pattern[str]:
    return re.compile(
        r"\b(convert\w*|in|into|to|as|how many|how much)\b|->|→|=>|\bequals?\b", re.IGNORECASE
    )


# "a week", "an hour", "one mile": a quantity of one, written as a word.
@functools.cache
def _one_of() -> re.Pattern[str]:
    return re.compile(r"\b(?:a|an|one|per)\s+([^\W\d][\w°/²³^.-]*)", re.IGNORECASE)


@functools.cache
def _how_many() -> re.Pattern[str]:
    return re.compile(r"\bhow many\s+([^\W\d][\w°/²³^.-]*)", re.IGNORECASE)


def user_text(request: OfferRequest) -> str:
    """The user's own turns of the conversation, joined (once for the tools of a round: they
    are asked with the same messages one after the other)."""
    global _last_text
    messages = request.messages
    last = _last_text
    if last[0] is messages:
        return last[1]
    from toolwire.messages import UserMessage

    text = "\n".join(m.text for m in messages if isinstance(m, UserMessage))
    _last_text = (messages, text)
    return text


_last_text: tuple[tuple[Message, ...], str] = ((), "")
"""The messages :func:`user_text` was last asked about, and its answer."""


def wants_calculator(text: str) -> bool:
    """Words of arithmetic, numbers other than times of day and quantities with a unit, or two
    numbers or more (``6 hours at £45 an hour``: amounts to combine)."""
    if _math_words().search(text) is not None:
        return True
    bare = re.sub(r"\b\d{4}-\d{2}-\d{2}\b", " ", _time_of_day().sub(" ", text))
    if len(re.findall(r"\d+(?:[.,]\d+)*", bare)) >= 2:
        return True
    bare = _quantity().sub(lambda m: " " if _unit_of(m) else m[0], bare)
    return any(ch.isdigit() for ch in bare)


@functools.cache
def _durations() -> re.Pattern[str]:
    return re.compile(
        r"\b(?:\d+(?:\.\d+)?|an?|one|per|each|every|many)\s+"
        r"(?:hours?|days?|weeks?|months?|years?|minutes?|seconds?)\b",
        re.IGNORECASE,
    )


def wants_current_time(text: str) -> bool:
    """Words about the time or the date, and no time of day (a question that gives a time asks
    to convert it); a count of hours or days (``6 hours``, ``an hour``) is a duration, not the
    clock."""
    text = _durations().sub(" ", text)
    return _time_words().search(text) is not None and _time_of_day().search(text) is None


def wants_convert_time(text: str) -> bool:
    """A time of day, or time zones, mentioned."""
    return _time_of_day().search(text) is not None or _zone_words().search(text) is not None


def wants_convert_units(text: str) -> bool:
    """A number (or "a", "an", "one") followed by a unit, and words of conversion; or "a", "an"
    or "one" before a unit and another unit named ("How many seconds are there in a week?",
    "centimetres in a kilometer")."""
    if _convert().search(text) is None:
        return False
    if any(_unit_of(match) for match in _quantity().finditer(text)):
        return True
    ones = [m for m in _one_of().finditer(text) if _is_unit(m[1])]
    if not ones:
        return False
    if any(_is_unit(m[1]) for m in _how_many().finditer(text)):
        return True
    # "centimetres in a kilometer", "hours in a week": another unit named beside it.
    taken = {m.start(1) for m in ones}
    return any(
        word.start() not in taken and word.group().lower() != "in" and _is_unit(word.group())
        for word in re.finditer(r"[^\W\d_]{2,}", text)
    )


def _is_unit(word: str) -> bool:
    return _known_unit(word.rstrip("?.,!"))


def _unit_of(match: re.Match[str]) -> bool:
    words = match[2].rstrip(".").split()
    candidates = [" ".join(words), words[0]] if len(words) > 1 else words
    return any(_known_unit(candidate) for candidate in candidates)


def _known_unit(name: str) -> bool:
    from ._units import UnitError, find_unit  # the unit table loads with the first question

    try:
        find_unit(name)
    except UnitError:
        return False
    return True


_TESTS: dict[str, Callable[[str], bool]] = {
    "calculator": wants_calculator,
    "current_time": wants_current_time,
    "convert_time": wants_convert_time,
    "convert_units": wants_convert_units,
}


def offer_when_relevant(tool: Tool, request: OfferRequest) -> FunctionSpec | None:
    """The tool's function when the user's words call for it, when the run's tool choice names
    it (``request.chosen_tool``: a person who names a tool expects it offered, whatever the
    words), or when ``offer`` is ``always`` (from :class:`BasicsSettings`, or a plain table of
    settings; ``relevant`` by default)."""
    if request.chosen_tool == tool.name:
        return tool.function_spec()
    settings = request.settings
    offer: str
    if isinstance(settings, BasicsSettings):
        offer = settings.offer
    elif isinstance(settings, dict):
        offer = str(settings.get("offer", "relevant"))
    else:
        offer = "relevant"
    if offer == "always" or tool.name not in _TESTS or _wanted(tool.name, user_text(request)):
        return tool.function_spec()
    return None


@functools.lru_cache(maxsize=64)
def _wanted(name: str, text: str) -> bool:
    """Whether the test of the tool ``name`` passes for the user's words ``text``, worked out
    once per text: the user's turns stay the same round after round of a run, and correcting
    their misspellings alone takes longer than the rest of a round's offer."""
    return _TESTS[name](spelled_out(text))


def relevant_tools(text: str, names: Iterable[str] = _TESTS) -> list[str]:
    """The tools whose test passes for ``text`` (misspellings read as the words), in the order
    given."""
    text = spelled_out(text)
    return [name for name in names if _TESTS[name](text)]
