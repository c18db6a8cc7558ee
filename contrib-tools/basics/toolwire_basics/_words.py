"""Arithmetic as people write it: ``2 to the 20th power``, ``square root of 1764``, ``37 times 43``.

:func:`from_words` turns such a phrase into calculator notation, so a small model can pass the
user's own words to the calculator instead of translating them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

# A number starts where no digit comes before it: tried at every digit of a long run, the rules
# would cost the square of its length (a 500-digit run took over 100 ms).
_NUM = r"-?(?<!\d)\d+(?:\.\d+)?%?"
_OPERAND = rf"(?:{_NUM}|\([^()]*\))"
_LIST = rf"({_NUM}(?:\s*,\s*{_NUM})*(?:,?\s+and\s+{_NUM}))"


@functools.cache
def _lead() -> re.Pattern[str]:
    return re.compile(
        r"^(?:(?:what|how much)(?:\s+is|'s)|calculate|compute|evaluate|work out|find|tell me)\s+",
        re.IGNORECASE,
    )


@functools.cache
def _article() -> re.Pattern[str]:
    return re.compile(r"\bthe\s+", re.IGNORECASE)


def _numbers(text: str) -> list[str]:
    return re.findall(_NUM, text)


def _mean(match: re.Match[str]) -> str:
    values = _numbers(match[1])
    return f"({' + '.join(values)}) / {len(values)}"


def _sum(match: re.Match[str]) -> str:
    return f"({' + '.join(_numbers(match[1]))})"


def _product(match: re.Match[str]) -> str:
    return f"({' * '.join(_numbers(match[1]))})"


_Rule = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]

_PATTERNS: tuple[tuple[str, str | Callable[[re.Match[str]], str]], ...] = (
    (rf"\b(?:average|mean) of {_LIST}", _mean),
    (rf"\bsum of {_LIST}", _sum),
    (rf"^add {_LIST}", _sum),
    (rf"\bproduct of {_LIST}", _product),
    (rf"^multiply ({_OPERAND}) (?:by|and) ({_OPERAND})", r"\1 * \2"),
    # "3 items at 4.25 each", "5 tickets for $12.50 apiece": a count of things at a price.
    (
        rf"({_NUM}) (?:[a-z]+ ){{1,2}}(?:at|for|costing) \$?({_NUM}) (?:each|apiece|a piece)\b",
        r"\1 * \2",
    ),
    (rf"^divide ({_OPERAND}) by ({_OPERAND})", r"\1 / \2"),
    (rf"^subtract ({_OPERAND}) from ({_OPERAND})", r"\2 - \1"),
    (rf"\bsquare root of ({_OPERAND})", r"sqrt(\1)"),
    # "sqrt 121", "ln 10": a function written before its number without parentheses.
    (rf"\b(sqrt|cbrt|ln|log10|log2|log|exp|abs|factorial)\s+({_NUM})(?![\w.(])", r"\1(\2)"),
    (rf"\bcube root of ({_OPERAND})", r"cbrt(\1)"),
    (rf"\bfactorial of ({_OPERAND})", r"factorial(\1)"),
    (rf"({_OPERAND}) factorial\b", r"factorial(\1)"),
    (rf"({_OPERAND})!", r"factorial(\1)"),
    (rf"({_OPERAND}) to (?:the )?(\d+)(?:st|nd|rd|th)? power\b", r"\1 ** \2"),
    (
        rf"({_OPERAND}) (?:to (?:the )?power(?: of)?|raised to(?: (?:the )?power of)?) "
        rf"({_OPERAND})",
        r"\1 ** \2",
    ),
    (rf"({_OPERAND}) squared\b", r"\1 ** 2"),
    (rf"({_OPERAND}) cubed\b", r"\1 ** 3"),
    (r"\s*\bpercent\b", "%"),
    (r"\b(?:multiplied by|times)\b", "*"),
    (r"\b(?:divided by|over)\b", "/"),
    (r"\bplus\b", "+"),
    (r"\bminus\b", "-"),
    (r"\b(?:modulo|mod)\b", "%"),
    (r"(?<=\d)\s*x\s*(?=[\d(])", " * "),
    # "80 + 15%", "120 - 20%": a share of the amount added or taken off, as calculators read it.
    (
        r"(?<![\w.%*/^])(\d+(?:\.\d+)?)\s*([+-])\s*(\d+(?:\.\d+)?)\s*%(?=\s*(?:\)|$))",
        r"\1 * (1 \2 \3 / 100)",
    ),
)


@functools.cache
def _rules() -> tuple[_Rule, ...]:
    """The rules, compiled on first use: listing the calculator must not pay for them."""
    return tuple((re.compile(p, re.IGNORECASE), r) for p, r in _PATTERNS)


def from_words(text: str) -> str:
    """``text`` with its words of arithmetic written as operators and functions.

    Text without such words comes back unchanged, so refusals quote what was written.
    """
    if not re.search(r"[a-z]{2}|\d\s*x\s*[\d(]|!|[+-]\s*[\d.]+\s*%", text, re.IGNORECASE):
        return text
    out = text.strip().rstrip("?. ")
    out = _lead().sub("", out)
    out = _article().sub("", out)
    for pattern, replacement in _rules():
        out = pattern.sub(replacement, out)
    out = re.sub(r"\s+", " ", out).strip()
    return out if out != text.strip() else text
