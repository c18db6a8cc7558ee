"""Token usage of provider requests, and what it costs by a configured price.

Every adapter reports one :class:`Usage` per request in the same terms, whatever its wire
format says: ``input_tokens`` counts every input token, cached ones included
(``cache_read_tokens`` and ``cache_write_tokens`` are parts of it), and ``output_tokens`` every
output token, reasoning included (``reasoning_tokens`` is part of it). A run, a batch and a
sub-run add their requests' usage up (``+``, or :func:`total_usage` for many at once).

Prices are never looked up on a network: :class:`ModelPrice` is what ``[prices."<model>"]``
says, per million tokens, in the currency the config uses.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Iterable

import attrs

__all__ = ["ModelPrice", "Usage", "describe_usage", "estimate_tokens"]


def _plus(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


@attrs.frozen(kw_only=True)
class Usage:
    """Token counts reported by the provider (None where not reported).

    :ivar input_tokens: every input token of the request, cached ones included.
    :ivar output_tokens: every output token, reasoning included.
    :ivar cache_read_tokens: input tokens read from the provider's prompt cache.
    :ivar total_tokens: the provider's total.
    :ivar cache_write_tokens: input tokens written to the provider's prompt cache (Anthropic
        bills them apart).
    :ivar reasoning_tokens: output tokens spent on reasoning the answer does not show in full.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    total_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None

    def __add__(self, other: Usage) -> Usage:
        """The sum of two usages, count by count (a count neither reported stays None)."""
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            input_tokens=_plus(self.input_tokens, other.input_tokens),
            output_tokens=_plus(self.output_tokens, other.output_tokens),
            cache_read_tokens=_plus(self.cache_read_tokens, other.cache_read_tokens),
            total_tokens=_plus(self.total_tokens, other.total_tokens),
            cache_write_tokens=_plus(self.cache_write_tokens, other.cache_write_tokens),
            reasoning_tokens=_plus(self.reasoning_tokens, other.reasoning_tokens),
        )

    @property
    def reported(self) -> bool:
        """True when the provider reported any count."""
        # As ``self != Usage()``, without attrs' __ne__ and __eq__ (asked for every request).
        return bool(_counts_of(self) != _NO_COUNTS)


_COUNTS = tuple(field.name for field in attrs.fields(Usage))
_counts_of = operator.attrgetter(*_COUNTS)  # a usage's counts as a tuple, in C
_NO_COUNTS = (None,) * len(_COUNTS)


def total_usage(usages: Iterable[Usage]) -> Usage:
    """The sum of ``usages``, as adding each in turn with ``+`` gives it, made as one record
    (a frozen record costs about as much to make as all the additions)."""
    counts: dict[str, int | None] = dict.fromkeys(_COUNTS)
    for usage in usages:
        for name in _COUNTS:
            counts[name] = _plus(counts[name], getattr(usage, name))
    return Usage(**counts)


@attrs.frozen(kw_only=True)
class ModelPrice:
    """What one model costs, per million tokens (``[prices."<model>"]``).

    ``cached_input`` is the price of input read from the prompt cache and ``cache_write`` of
    input written to it; each is ``input`` when not set. Reasoning is billed as output.
    """

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def cost(self, usage: Usage) -> float:
        """What ``usage`` costs at this price (counts not reported count as 0)."""
        inputs = usage.input_tokens or 0
        read = usage.cache_read_tokens or 0
        written = usage.cache_write_tokens or 0
        fresh = max(0, inputs - read - written)
        cached = self.input if self.cached_input is None else self.cached_input
        writing = self.input if self.cache_write is None else self.cache_write
        total = (
            fresh * self.input
            + read * cached
            + written * writing
            + (usage.output_tokens or 0) * self.output
        )
        return total / 1_000_000


_LETTERS_PER_TOKEN = 6


@functools.cache
def _pieces() -> re.Pattern[str]:
    # Compiled on first use: importing the tool model (which carries usage on results) compiles
    # no pattern.
    return re.compile(r"\w+|[^\w\s]")


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` takes (0 for an empty one), where no tokenizer is at hand:
    a word of up to six letters is one token, a longer word one more per six letters, a
    punctuation mark one, each letter of a script written without spaces one. Close enough to
    tell a line from a book, and the same for every model and every run."""
    total = 0
    for piece in _pieces().findall(text):
        if not piece[0].isalnum() and piece[0] != "_":
            total += 1
        elif piece.isascii():
            total += 1 + (len(piece) - 1) // _LETTERS_PER_TOKEN
        else:
            total += len(piece)
    return total


def describe_usage(usage: Usage, cost: float | None = None) -> str:
    """``usage`` (and ``cost``) in one line for people: ``1,234 tokens in (1,000 cached) ·
    90 out (64 reasoning) · cost 0.0123``; empty when nothing was reported."""
    pieces: list[str] = []
    if usage.input_tokens is not None:
        parts = []
        if usage.cache_read_tokens:
            parts.append(f"{usage.cache_read_tokens:,} cached")
        if usage.cache_write_tokens:
            parts.append(f"{usage.cache_write_tokens:,} written to the cache")
        detail = f" ({', '.join(parts)})" if parts else ""
        pieces.append(f"{usage.input_tokens:,} tokens in{detail}")
    if usage.output_tokens is not None:
        detail = f" ({usage.reasoning_tokens:,} reasoning)" if usage.reasoning_tokens else ""
        pieces.append(f"{usage.output_tokens:,} out{detail}")
    if cost is not None:
        pieces.append(f"cost {cost:.4g}")
    return " · ".join(pieces)
