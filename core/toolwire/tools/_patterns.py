"""The regular expressions of parameter schemas, run in time linear in the text (RE2).

A schema's ``pattern``, its ``patternProperties`` and the regular expressions behind ``format``
check text a model wrote, with expressions a plugin or an MCP server wrote. Python's ``re``
backtracks: ``^([a-zA-Z0-9]+)+@example\\.com$`` takes seconds on 25 characters and doubles with
each more, holding the event loop (and the GIL) the whole time. Every such expression is run by
RE2 (the ``google-re2`` bindings) instead, whose time grows with the text alone.

RE2 leaves out the few constructs that need backtracking: lookahead and lookbehind, back
references, atomic groups, possessive quantifiers, conditionals. A pattern using one is refused
when the tool is made (:func:`unsupported_construct`, a scan that needs no import), with what to
write instead. fastjsonschema still compiles the schema; :func:`run_linear` then replaces the
compiled expressions of the validator it made with RE2 ones before it ever runs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final

from ..utf8 import has_lone_surrogates, lone_surrogates

if TYPE_CHECKING:
    import re2


@functools.cache
def _unicode_escape() -> re.Pattern[str]:
    """An ECMA-262 ``\\uXXXX`` escape (a pair of them for a character past the BMP), not itself
    escaped."""
    return re.compile(
        r"(?<!\\)((?:\\\\)*)\\u(?:([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|"
        r"([0-9a-fA-F]{4}))"
    )


@functools.cache
def _quantifier_braces() -> re.Pattern[str]:
    return re.compile(r"\{(?:[0-9]+(?:,[0-9]*)?|,[0-9]+)\}$")


_GROUP_CONSTRUCTS: Final = (
    ("?<=", "a lookbehind (?<=…)"),
    ("?<!", "a negative lookbehind (?<!…)"),
    ("?=", "a lookahead (?=…)"),
    ("?!", "a negative lookahead (?!…)"),
    ("?>", "an atomic group (?>…)"),
    ("?(", "a conditional (?(…)…)"),
    ("?P=", "a back reference (?P=…)"),
    ("?#", "a comment (?#…)"),
)


def unsupported_construct(pattern: str) -> str | None:
    """The first construct of ``pattern`` that RE2 cannot run, in words, or None.

    A scan of the text (character classes and escapes read as such), so checking a tool's
    patterns when it is made imports nothing; RE2 itself judges the rest at the first call.
    """
    in_class = False
    quantified = False  # the last token was a quantifier
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            following = pattern[index + 1 : index + 2]
            if following and following in "123456789":
                kind = "an octal escape" if in_class else "a back reference"
                return f"{kind} (\\{following})"
            if not in_class and pattern.startswith("k<", index + 1):
                return "a named back reference (\\k<…>)"
            if following == "Z":
                return "Python's end of text (\\Z; a JSON Schema pattern writes $)"
            index += 2
            quantified = False
            continue
        if in_class:
            in_class = char != "]"
            index += 1
            continue
        if char == "[":
            in_class = True
            index += 2 if pattern.startswith("^", index + 1) else 1
            index += 1 if pattern.startswith("]", index) else 0  # a leading ] is literal
            quantified = False
            continue
        if char == "(" and pattern.startswith("?", index + 1):
            for opening, words in _GROUP_CONSTRUCTS:
                if pattern.startswith(opening, index + 1):
                    return words
        if char == "+" and quantified:
            return "a possessive quantifier (*+, ++, ?+)"
        # A ? right after a quantifier makes it lazy: still a quantifier for what follows.
        quantified = char in "*+?" or (
            char == "}" and _quantifier_braces().search(pattern, 0, index + 1) is not None
        )
        index += 1
    return None


def re2_syntax(pattern: str) -> str:
    """``pattern`` (ECMA-262, as JSON Schema writes it) in RE2's syntax: ``\\uXXXX`` escapes (and
    surrogate pairs of them) become ``\\x{…}``; everything else RE2 reads the same way."""
    if "\\u" not in pattern:
        return pattern

    def replace(match: re.Match[str]) -> str:
        if match[4] is not None:
            point = int(match[4], 16)
        else:
            point = 0x10000 + ((int(match[2], 16) - 0xD800) << 10) + int(match[3], 16) - 0xDC00
        return f"{match[1]}\\x{{{point:x}}}"

    return _unicode_escape().sub(replace, pattern)


class LinearPattern:
    """One expression compiled by RE2, answering ``search`` (or ``match``, when it was compiled
    anchored at the start) as a compiled ``re`` pattern does, with a bool.

    Text with lone surrogates (which RE2, reading UTF-8, cannot take) is matched with each of
    them read as U+FFFD: the same answer for every expression that does not name a surrogate.
    """

    __slots__ = ("_set", "pattern")

    def __init__(self, pattern: str, compiled: re2.Set) -> None:
        self.pattern = pattern
        self._set = compiled

    def search(self, text: str) -> bool:
        """True when the expression matches ``text`` (at its start, if anchored)."""
        try:
            return self._set.Match(text) is not None
        except UnicodeEncodeError:
            if not has_lone_surrogates(text):
                raise
            return self._set.Match(lone_surrogates().sub("\ufffd", text)) is not None

    match = search


class PatternError(ValueError):
    """RE2 cannot compile an expression; the message says why."""


@functools.lru_cache(maxsize=4096)
def linear_pattern(pattern: str, *, anchored: bool = False, python: bool = False) -> LinearPattern:
    """``pattern`` compiled by RE2 (once per text): a JSON Schema pattern, or with ``python`` an
    expression in Python's syntax (fastjsonschema's ``format`` expressions, ending in ``\\Z``).

    :raises PatternError: when RE2 cannot compile it, saying why.
    :raises ImportError: when google-re2 is not installed.
    """
    import re2

    source = pattern.replace("\\Z", "\\z") if python else re2_syntax(pattern)
    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    compiled = re2.Set.MatchSet(options) if anchored else re2.Set.SearchSet(options)
    try:
        compiled.Add(source)
    except re2.error:
        try:
            re2.compile(source, options=options)  # RE2's own reason (the set gives none)
        except re2.error as exc:
            reason = exc.args[0] if exc.args else exc
            text = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
            raise PatternError(f"RE2 cannot run the pattern {pattern!r}: {text}") from None
        raise PatternError(f"RE2 cannot run the pattern {pattern!r} in a set") from None
    compiled.Compile()
    return LinearPattern(pattern, compiled)


def run_linear(validate: Callable[..., Any], schema_patterns: Iterable[str]) -> None:
    """Replace every compiled expression of a fastjsonschema validator with its RE2 form.

    fastjsonschema keeps them in the ``REGEX_PATTERNS`` mapping of the validator's globals: a
    schema's patterns under their own text (``search``ed), its ``format`` expressions under
    ``<format>_re_pattern`` (``match``ed, in Python's syntax).

    :raises PatternError: for an expression RE2 cannot compile.
    :raises LookupError: when the validator does not keep its expressions where expected (a
        fastjsonschema that changed): rather no validator than one that backtracks.
    """
    function = getattr(validate, "func", validate)  # with custom formats: a partial of it
    compiled = getattr(function, "__globals__", {}).get("REGEX_PATTERNS")
    if not isinstance(compiled, dict):
        raise LookupError("this fastjsonschema keeps no REGEX_PATTERNS to replace")
    own = frozenset(schema_patterns)
    for key, expression in list(compiled.items()):
        if isinstance(expression, LinearPattern):
            continue
        if key in own:
            compiled[key] = linear_pattern(key)
        elif key.endswith("_re_pattern"):
            compiled[key] = linear_pattern(expression.pattern, anchored=True, python=True)
        else:
            raise LookupError(f"an expression fastjsonschema compiled is not known: {key!r}")


def schema_patterns(node: Any) -> set[str]:
    """Every ``pattern`` and ``patternProperties`` expression in a schema."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            pattern = current.get("pattern")
            if isinstance(pattern, str):
                found.add(pattern)
            named = current.get("patternProperties")
            if isinstance(named, dict):
                found.update(key for key in named if isinstance(key, str))
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return found
