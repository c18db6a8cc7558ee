"""What a call's arguments may copy from the user's words: spans of words, and numbers.

A small model fills arguments best by copying: held to spans of the user's message, a time-zone
argument becomes ``Tokyo`` instead of the description's example, and a number becomes one the
user wrote instead of one the model made up.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

import attrs

MAX_SPAN_WORDS = 12
"""The longest span of words a string argument may copy."""

MAX_SPANS = 600
"""The most spans offered (the shortest are kept): a long message keeps the grammar small."""

_EDGE = "\"'`“”‘’()[]{}.,;:!?"
_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])-?\d+(?:\.\d+)?")
_ONE = re.compile(r"\b(?:a|an|one)\b", re.IGNORECASE)


@attrs.frozen
class Copies:
    """The spans and numbers of some text, as JSON literals for a grammar.

    ``spans`` are JSON strings of 1 to :data:`MAX_SPAN_WORDS` consecutive words (edge
    punctuation trimmed, so ``Tokyo?`` gives ``Tokyo``; a bare number is left to ``numbers``);
    ``numbers`` are JSON numbers written in the text (``2,480`` is ``2480``, ``17.5%`` is
    ``17.5``), with ``1`` when the text says ``a``, ``an`` or ``one`` ("seconds in a week").
    ``places`` holds, for each span, the words (numbered across all the texts) of each place
    it was taken from.
    """

    spans: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    places: Mapping[str, tuple[frozenset[int], ...]] = attrs.field(factory=dict, eq=False)

    @classmethod
    def from_texts(cls, texts: Iterable[str], *, numbers_together: bool = False) -> Copies:
        """The copies of every text in ``texts``, in order, without repeats.

        With ``numbers_together``, a span that holds a number holds every number of the last
        text (when some span of it does): the numbers a user wrote in one question belong to
        one calculation, one amount or one time, and a small model otherwise copies one of them
        alone (``15%`` of ``a 15% tip on $80``).
        """
        texts = list(texts)
        spans: dict[str, list[frozenset[int]]] = {}
        numbers: dict[str, None] = {}
        offset = 0
        for text in texts:
            count = 0
            for start, end, span in _spans(text):
                words = frozenset(range(offset + start, offset + end))
                spans.setdefault(json.dumps(span, ensure_ascii=False), []).append(words)
                count = max(count, end)
            offset += count + 1
            for match in _NUMBER.finditer(text):
                numbers.setdefault(_json_number(match[0]))
            if _ONE.search(text):
                numbers.setdefault("1")
        if numbers_together and texts:
            spans = _numbers_together(spans, texts[-1])
        kept = sorted(spans, key=len)[:MAX_SPANS]
        order = {span: index for index, span in enumerate(spans)}
        kept.sort(key=order.__getitem__)
        return cls(
            spans=tuple(kept),
            numbers=tuple(numbers),
            places={span: tuple(spans[span]) for span in kept},
        )

    def integers(self) -> tuple[str, ...]:
        """The numbers that are whole."""
        return tuple(n for n in self.numbers if re.fullmatch(r"-?\d+", n))

    def apart(self, first: str, second: str) -> bool:
        """True when the span ``second`` was taken from a place that shares no word with a
        place of the span ``first`` (spans of unknown places are apart)."""
        one, two = self.places.get(first), self.places.get(second)
        if not one or not two:
            return True
        return any(not (a & b) for a in one for b in two)


_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def _numbers_together(
    spans: dict[str, list[frozenset[int]]], text: str
) -> dict[str, list[frozenset[int]]]:
    """``spans`` less those that hold some but not all of the numbers written in ``text``
    (unchanged when no span holds them all)."""
    wanted = _DIGITS.findall(text.replace(",", ""))
    if not wanted:
        return spans

    def holds_all(span: str) -> bool:
        found = _DIGITS.findall(json.loads(span).replace(",", ""))
        return all(found.count(n) >= wanted.count(n) for n in set(wanted))

    kept = {
        span: places
        for span, places in spans.items()
        if not _DIGITS.search(span) or holds_all(span)
    }
    if not any(_DIGITS.search(span) for span in kept):
        return spans
    return kept


def _json_number(text: str) -> str:
    plain = text.replace(",", "")
    if "." in plain:
        value = float(plain)
        return str(int(value)) if value.is_integer() else repr(value)
    return str(int(plain))


# Words that bind to a number or to each other in a calculation ("17.5% of 2480", "2 to the 20th
# power", "the square root of 1764", "4, 8 and 15"), and words that bind to the next one as a unit.
_ARITHMETIC = frozenset(
    [
        "of",
        "percent",
        "%",
        "times",
        "x",
        "*",
        "/",
        "+",
        "-",
        "^",
        "**",
        "by",
        "divided",
        "multiplied",
        "plus",
        "minus",
        "squared",
        "cubed",
        "to",
        "the",
        "power",
        "raised",
        "root",
        "square",
        "cube",
        "factorial",
        "and",
        "average",
        "mean",
        "sum",
        "product",
        "add",
        "multiply",
        "divide",
        "subtract",
        "over",
        "mod",
        "modulo",
    ]
)
_UNIT_PREFIXES = frozenset({"square", "cubic", "sq", "fluid", "imperial", "us", "nautical"})
_DEGREES = frozenset({"degree", "degrees", "deg"})
_SCALES = frozenset({"celsius", "fahrenheit", "kelvin", "centigrade", "rankine", "c", "f"})
_NUMERIC = re.compile(r"^[-+(]*\d")
_BARE_NUMBER = re.compile(r"-?[\d,]*\d(?:\.\d+)?")


def _bare(word: str) -> str:
    return word.strip(_EDGE).lower()


def _joined(left: str, right: str) -> bool:
    """True when the boundary between two words falls inside a phrase and a span may not cut it:
    a calculation, a name of several capitalised words (New York), a unit of two words
    (square feet, degrees Celsius)."""
    if left[-1] in ".?!;:":
        return False
    a, b = _bare(left), _bare(right)
    if not a or not b:
        return False
    if a in _UNIT_PREFIXES or (a in _DEGREES and b in _SCALES):
        return True
    calc_a = a in _ARITHMETIC or _NUMERIC.match(a) is not None
    calc_b = b in _ARITHMETIC or _NUMERIC.match(b) is not None
    if calc_a and calc_b:
        return True
    named = left.strip(_EDGE)[:1].isupper() and right.strip(_EDGE)[:1].isupper()
    return named and left[-1] != ","


def _spans(text: str) -> Iterable[tuple[int, int, str]]:
    """Runs of 1 to :data:`MAX_SPAN_WORDS` words that do not cut a phrase (see :func:`_joined`),
    each with the numbers of its first word and of the word after its last."""
    words = [w for w in text.split() if w.strip(_EDGE)]
    joined = [_joined(words[i], words[i + 1]) for i in range(len(words) - 1)]
    for start in range(len(words)):
        if start > 0 and joined[start - 1]:
            continue
        for end in range(start + 1, min(start + MAX_SPAN_WORDS, len(words)) + 1):
            if end < len(words) and joined[end - 1]:
                continue
            span = " ".join(words[start:end])
            # Trim what only frames the span: quotes, brackets that are not matched, end marks.
            trimmed = span.strip(_EDGE.replace("(", "").replace(")", ""))
            if trimmed.count("(") != trimmed.count(")"):
                trimmed = trimmed.strip("()")
            # A bare number is a number's to copy: as a string it is never the word wanted.
            if trimmed and _BARE_NUMBER.fullmatch(trimmed) is None:
                yield start, end, trimmed
