"""Docstring reading: the description and the parameter texts (Google, NumPy and Sphinx styles)."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Mapping
from typing import NamedTuple

# Section titles of Google and NumPy docstrings; which ones describe parameters or attributes.
_PARAMETER_SECTIONS = frozenset(
    {
        "args",
        "arguments",
        "parameters",
        "params",
        "keyword args",
        "keyword arguments",
        "kwargs",
        "other parameters",
    }
)
_ATTRIBUTE_SECTIONS = frozenset({"attributes", "attrs", "fields"})
_OTHER_SECTIONS = frozenset(
    {
        "returns",
        "return",
        "yields",
        "yield",
        "raises",
        "raise",
        "exceptions",
        "warns",
        "examples",
        "example",
        "note",
        "notes",
        "warning",
        "warnings",
        "see also",
        "references",
        "todo",
        "methods",
        "receives",
    }
)
_ALL_SECTIONS = _PARAMETER_SECTIONS | _ATTRIBUTE_SECTIONS | _OTHER_SECTIONS

# The patterns compile on first use, and each is tried only on a line it could match (a Google
# header ends in a colon, a Sphinx field starts with one): a docstring without sections, like most
# tools' docstrings, compiles none of them.


@functools.cache
def _google_header_pattern() -> re.Pattern[str]:
    return re.compile(r"^([A-Za-z][A-Za-z ]*?)\s*:\s*$")


@functools.cache
def _numpy_rule() -> re.Pattern[str]:
    return re.compile(r"^\s*-{3,}\s*$")


@functools.cache
def _sphinx_field_pattern() -> re.Pattern[str]:
    return re.compile(r"^:([A-Za-z]+)((?:\s+[^:]+)?)\s*:(.*)$")


@functools.cache
def _google_entry() -> re.Pattern[str]:
    return re.compile(r"^\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(?:\(([^:]*)\))?\s*:(.*)$")


@functools.cache
def _numpy_entry() -> re.Pattern[str]:
    return re.compile(
        r"^\*{0,2}([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*\*{0,2}[A-Za-z_][A-Za-z0-9_]*)*)\s*(?::.*)?$"
    )


def _sphinx_field(line: str) -> re.Match[str] | None:
    """The ``:kind name: text`` field a line at indent 0 starts, if it is one."""
    if not line.startswith(":"):
        return None
    return _sphinx_field_pattern().match(line)


_SPHINX_PARAM_KINDS = frozenset({"param", "parameter", "arg", "argument", "key", "keyword"})
_SPHINX_ATTRIBUTE_KINDS = frozenset({"ivar", "var", "cvar"})


class ParsedDocstring(NamedTuple):
    """What a docstring says: free text, and the text for each parameter and attribute.

    ``description`` is the text before the first section or field (summary and extended
    description, paragraphs kept); Returns, Raises, Examples and other sections are left out.

    A named tuple rather than an attrs class: it is built for every tool a plugin declares, and
    an attrs class costs a compile of its generated methods at every start.
    """

    description: str
    parameters: Mapping[str, str]
    attributes: Mapping[str, str]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _join(lines: list[str]) -> str:
    return " ".join(" ".join(line.split()) for line in lines if line.strip()).strip()


def _numpy_header(lines: list[str], i: int) -> str | None:
    if i + 1 >= len(lines) or _indent(lines[i]) != 0:
        return None
    title = lines[i].strip().lower()
    if title in _ALL_SECTIONS and _numpy_rule().match(lines[i + 1]):
        return title
    return None


def _google_header(line: str) -> str | None:
    if _indent(line) != 0 or not line.rstrip().endswith(":"):
        return None
    match = _google_header_pattern().match(line)
    if match and match.group(1).lower() in _ALL_SECTIONS:
        return match.group(1).lower()
    return None


def _google_entries(body: list[str]) -> dict[str, str]:
    entries: dict[str, list[str]] = {}
    base = min((_indent(line) for line in body if line.strip()), default=0)
    current: list[str] | None = None
    for line in body:
        if not line.strip():
            continue
        if _indent(line) == base:
            match = _google_entry().match(line.strip())
            if match:
                current = entries.setdefault(match.group(1), [])
                current.append(match.group(3))
                continue
        if current is not None:
            current.append(line)
    return {name: _join(text) for name, text in entries.items()}


def _numpy_entries(body: list[str]) -> dict[str, str]:
    entries: dict[str, list[str]] = {}
    current: list[list[str]] = []
    for line in body:
        if not line.strip():
            continue
        if _indent(line) == 0:
            match = _numpy_entry().match(line.strip())
            current = []
            if match:
                for name in match.group(1).split(","):
                    current.append(entries.setdefault(name.strip().lstrip("*"), []))
            continue
        for text in current:
            text.append(line)
    return {name: _join(text) for name, text in entries.items()}


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Read a docstring written in Google, NumPy or Sphinx style (or a mix of them)."""
    if not doc or not doc.strip():
        return ParsedDocstring("", {}, {})
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    parameters: dict[str, str] = {}
    attributes: dict[str, str] = {}
    in_description = True
    i = 0
    while i < len(lines):
        line = lines[i]
        numpy = _numpy_header(lines, i)
        google = None if numpy else _google_header(line)
        sphinx = _sphinx_field(line) if _indent(line) == 0 else None
        if numpy or google:
            in_description = False
            title = numpy or google
            start = i + (2 if numpy else 1)
            end = start
            while end < len(lines):
                nxt = lines[end]
                if _numpy_header(lines, end) or _google_header(nxt):
                    break
                if _indent(nxt) == 0 and _sphinx_field(nxt):
                    break
                if google and nxt.strip() and _indent(nxt) == 0:
                    break
                end += 1
            body = lines[start:end]
            parse = _numpy_entries if numpy else _google_entries
            if title in _PARAMETER_SECTIONS:
                parameters.update(parse(body))
            elif title in _ATTRIBUTE_SECTIONS:
                attributes.update(parse(body))
            i = end
            continue
        if sphinx:
            in_description = False
            kind = sphinx.group(1).lower()
            words = sphinx.group(2).split()
            text = [sphinx.group(3)]
            i += 1
            while i < len(lines) and lines[i].strip() and _indent(lines[i]) > 0:
                text.append(lines[i])
                i += 1
            if words and kind in _SPHINX_PARAM_KINDS:
                parameters[words[-1].lstrip("*")] = _join(text)
            elif words and kind in _SPHINX_ATTRIBUTE_KINDS:
                attributes[words[-1]] = _join(text)
            continue
        if in_description:
            description.append(line)
        i += 1
    return ParsedDocstring(
        description="\n".join(description).strip(), parameters=parameters, attributes=attributes
    )
