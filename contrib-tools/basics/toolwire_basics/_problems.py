"""Everyday word problems as arithmetic: a tip on a bill, a count at a price, a price with a share
off, a bill split between people, hours at a rate, a part as a percentage of a whole.

:func:`read_word_problem` reads such a sentence by its shape — the numbers it holds and the words
that say how they combine — when the text is not arithmetic by itself (``15% tip on a $80 bill``,
``4 coffees at 3.75 each``, ``$120 jacket, 20% off``, ``1529 and 1765``). Without the words of
one known shape, or with more numbers than that shape takes, it gives None and the calculator
refuses as before; a share and an amount with no other word are that share of the amount.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

_AMOUNT = r"(?<![\w.])\d+(?:\.\d+)?(?![\d.]*\w)"


@functools.cache
def _number() -> re.Pattern[str]:
    return re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(%|percent\b|per\s*cent\b)?", re.I)


def _words(*options: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(options) + r")\b", re.I)


@functools.cache
def _cues() -> dict[str, re.Pattern[str]]:
    return {
        "each": _words(
            "each", "apiece", "a piece", "per (?:item|piece|unit|ticket|person|one)", "a pop", "ea"
        ),
        "at": _words("at", "for", "costing", "@"),
        "rate": re.compile(
            r"\b(?:an?|per|each)\s+(?:hour|hr|day|week|month|night|mile|km|kilo|kg|pound|lb)\b"
            r"|/\s*(?:h|hr|hour|day|week|month|night)\b",
            re.I,
        ),
        "split": _words("split", "share[sd]?", "between", "among", "amongst"),
        "people": _words("people", "persons", "friends", "of us", "ways", "roommates", "guests"),
        "tip": _words("tip", "tips", "tax", "vat", "service", "gratuity", "commission", "interest"),
        "total": _words(
            "total",
            "altogether",
            "all together",
            "in all",
            "all in",
            "with",
            "plus",
            "including",
            "after",
        ),
        "off": _words("off", "discount(?:ed)?", "sale", "less", "reduced", "markdown"),
        "saved": _words(
            "save[sd]?",
            "saving",
            "savings",
            "knock(?:s|ed)? off",
            "take[sn]? off",
            "discount amount",
        ),
        "ratio": re.compile(
            r"\bwhat\s+(?:percent(?:age)?|%)\b|\bas\s+an?\s+(?:percent(?:age)?|%)|\bout\s+of\b"
            r"|\bin\s+percent\b",
            re.I,
        ),
        "from": re.compile(r"\b(?:subtract|take|takes|taking|minus)\b.*\bfrom\b|\bfrom\b", re.I),
        "between": re.compile(r"\bdifference\b|\bhow\s+many\s+years\b", re.I),
        "left": _words(
            "left", "remain(?:s|ing)?", "lost", "spen[dt]", "spending", "paid", "gave", "used"
        ),
        "age": _words("born", "old", "age", "turn", "years? old"),
    }


def _amounts(text: str) -> list[tuple[float, bool]]:
    """Every number of ``text`` with whether it is a percentage, thousands separators dropped."""
    cleaned = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    out = []
    for match in _number().finditer(cleaned):
        out.append((float(match[1]), match[2] is not None))
    return out


def _show(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


Shape = Callable[[str, list[tuple[float, bool]]], str | None]


def _percent(text: str, amounts: list[tuple[float, bool]]) -> str | None:
    percents = [v for v, p in amounts if p]
    plain = [v for v, p in amounts if not p]
    cue = _cues()
    if len(percents) != 1 or len(plain) != 1:
        return None
    share, base = _show(percents[0]), _show(plain[0])
    if cue["ratio"].search(text):
        return None
    if cue["off"].search(text):
        if cue["saved"].search(text):
            return f"{base} * {share} / 100"
        return f"{base} * (1 - {share} / 100)"
    if cue["tip"].search(text):
        if cue["total"].search(text):
            return f"{base} * (1 + {share} / 100)"
        return f"{base} * {share} / 100"
    # A share and an amount, with no word that says otherwise: that share of the amount.
    return f"{share} / 100 * {base}"


def _ratio(text: str, amounts: list[tuple[float, bool]]) -> str | None:
    if not _cues()["ratio"].search(text) or len(amounts) != 2 or any(p for _, p in amounts):
        return None
    (a, _), (b, _) = amounts
    part, whole = (a, b) if a <= b else (b, a)
    return f"{_show(part)} / {_show(whole)} * 100"


def _product(text: str, amounts: list[tuple[float, bool]]) -> str | None:
    cue = _cues()
    if len(amounts) != 2 or any(p for _, p in amounts):
        return None
    if cue["each"].search(text) or cue["rate"].search(text) or _count_at_price(text):
        (a, _), (b, _) = amounts
        return f"{_show(a)} * {_show(b)}"
    return None


@functools.cache
def _at_price() -> re.Pattern[str]:
    return re.compile(
        rf"{_AMOUNT}\s+(?:[^\W\d]+\s+){{1,3}}(?:at|for|costing|@)\s+[$€£]?\s*{_AMOUNT}", re.I
    )


def _count_at_price(text: str) -> bool:
    """``4 coffees at 3.75``: a count of things, then at what price."""
    return _at_price().search(re.sub(r"[$€£]\s*", "", text)) is not None


def _split(text: str, amounts: list[tuple[float, bool]]) -> str | None:
    cue = _cues()
    if len(amounts) != 2 or any(p for _, p in amounts):
        return None
    if cue["split"].search(text) or (cue["people"].search(text) and "/" in text):
        values = sorted(v for v, _ in amounts)
        return f"{_show(values[1])} / {_show(values[0])}"
    return None


def _difference(text: str, amounts: list[tuple[float, bool]]) -> str | None:
    cue = _cues()
    if len(amounts) != 2 or any(p for _, p in amounts):
        return None
    (a, _), (b, _) = amounts
    if re.search(r"\bfrom\b", text, re.I) and cue["from"].search(text):
        return f"{_show(b)} - {_show(a)}"
    if cue["between"].search(text) or cue["left"].search(text) or cue["age"].search(text):
        high, low = max(a, b), min(a, b)
        return f"{_show(high)} - {_show(low)}"
    return None


@functools.cache
def _listed() -> re.Pattern[str]:
    return re.compile(rf"{_AMOUNT}(?:\s*(?:,|\band\b|\+)\s*{_AMOUNT})+", re.I)


def _sum(text: str, amounts: list[tuple[float, bool]]) -> str | None:
    """``1529 and 1765``, ``12, 45 and 78``: numbers listed with nothing but commas and "and"
    between them, added up."""
    if any(p for _, p in amounts):
        return None
    listed = _listed().search(re.sub(r"(?<=\d),(?=\d{3}\b)", "", text))
    if listed is None or len(_amounts(listed.group())) != len(amounts):
        return None
    return " + ".join(_show(v) for v, _ in amounts)


@functools.cache
def _averaging() -> re.Pattern[str]:
    return re.compile(r"\b(?:av[ae]?r[ae]?ge?|avg|mean)\b", re.I)


def _mean(text: str, amounts: list[tuple[float, bool]]) -> str | None:
    """``avg of 41, 9, 16``, ``scores were 30, 88 and 41, my average``: the mean of them all."""
    if any(p for _, p in amounts) or not _averaging().search(text):
        return None
    return f"({' + '.join(_show(v) for v, _ in amounts)}) / {len(amounts)}"


_SHAPES: tuple[Shape, ...] = (_ratio, _percent, _mean, _difference, _split, _product, _sum)


def read_word_problem(text: str) -> str | None:
    """The arithmetic of an everyday word problem in ``text``, or None when it is none of the
    known shapes (see the module documentation)."""
    amounts = _amounts(text)
    if len(amounts) < 2:
        return None
    for shape in _SHAPES:
        expression = shape(text, amounts)
        if expression is not None:
            return expression
    return None
