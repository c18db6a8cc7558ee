"""Reading one TOML file, and saying where and why a file that is not valid TOML fails:
``tomllib`` gives only a position and a terse reason."""

from __future__ import annotations

import functools
import math
import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ._errors import ConfigError, expected_for, where
from ._root import SECTIONS

MAX_NESTING = 32
"""The deepest arrays and tables may nest in a config."""


def read_toml(file: Path) -> dict[str, Any]:
    """One config file parsed, every error naming the file."""
    text = ""
    try:
        text = file.read_text(encoding="utf-8")
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise toml_error(text, exc, str(file)) from None
    except RecursionError:
        raise ConfigError(
            f"{file}: arrays or tables nested too deep to read; a config nests at most "
            f"{MAX_NESTING} levels",
            file=str(file),
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot be read: {exc}", file=str(file)) from None
    check_raw(raw, str(file))
    return raw


def check_raw(raw: Mapping[str, Any], file: str | None) -> None:
    """Refuse what no key may hold: ``nan`` and infinities, and nesting past ``MAX_NESTING``."""
    stack: list[tuple[str, Any, int]] = [("$", raw, 0)]
    while stack:
        path, value, depth = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(
                f"{where(file, path)} = {value!r}: expected a finite number (nan and inf are "
                "never valid)",
                file=file,
                path=path,
            )
        if isinstance(value, Mapping | list):
            if depth >= MAX_NESTING:
                raise ConfigError(
                    f"{where(file, path)}: nested more than {MAX_NESTING} levels deep; no "
                    "setting nests that far",
                    file=file,
                    path=path,
                )
            items = value.items() if isinstance(value, Mapping) else enumerate(value)
            for key, item in items:
                below = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"
                stack.append((below, item, depth + 1))


# The patterns compile on first use: only a file that is not valid TOML needs them.
@functools.cache
def _position() -> re.Pattern[str]:
    return re.compile(r"\s*\(at line (\d+), column (\d+)\)$|\s*\(at end of document\)$")


@functools.cache
def _key_line() -> re.Pattern[str]:
    return re.compile(r"\s*([A-Za-z0-9_-]+(?:\s*\.\s*[A-Za-z0-9_-]+)*)\s*=\s*(.*?)\s*$")


@functools.cache
def _header_line() -> re.Pattern[str]:
    return re.compile(r"\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


_TOML_VALUES = (
    'a string in quotes ("…"), true or false, a number, an array [ … ] or an inline table { … }'
)


def toml_error(text: str, exc: tomllib.TOMLDecodeError, file: str) -> ConfigError:
    """A :class:`ConfigError` for a file that is not valid TOML, naming the line, the key and
    what would be valid."""
    reason = str(exc)
    match = _position().search(reason)
    lines = text.splitlines()
    if match is None or match.group(1) is None:
        at = "the end of the file" if match is not None else "somewhere"
        detail = reason[: match.start()] if match is not None else reason
        message = f"{file}: not valid TOML at {at}: {detail} (an array or string left open?)"
        return ConfigError(message, file=file)
    reason = reason[: match.start()]
    number = int(match.group(1))
    line = lines[number - 1] if 0 < number <= len(lines) else ""
    own_header = _header_line().fullmatch(line)
    table = re.sub(r"\s+", "", own_header.group(1)) if own_header else _table_at(lines, number)
    key_match = _key_line().match(line)
    key = re.sub(r"\s+", "", key_match.group(1)) if key_match else None
    path = "$." + ".".join(p for p in (table, key) if p) if (table or key) else None
    shown = f"[{table}] " if table else ""
    at_line = f"{file}: line {number}"
    if reason.startswith("Cannot declare") and table:
        first = _first_line(lines, number, _header_line().fullmatch, table)
        message = (
            f"{at_line}: the table [{table}] is declared twice"
            + (f" (first on line {first})" if first else "")
            + f"; keep one [{table}] header and put all its keys under it"
        )
    elif reason.startswith("Cannot overwrite") and key is not None:
        first = _first_line(lines, number, _key_line().match, key, table)
        message = (
            f"{at_line}: {shown}{key} is set twice"
            + (f" (first on line {first})" if first else "")
            + "; a key may appear once in its table: keep one of them"
        )
    elif reason == "Invalid value" and key_match is not None and key is not None:
        value = key_match.group(2).split(" #")[0].strip()
        expected = _expected_at(table, key)
        hint = f"expected {expected}" if expected else f"expected {_TOML_VALUES}"
        wants_text = expected is None or "string" in expected
        quoted = (
            f'; a string needs quotes: {key} = "{value}"'
            if wants_text and value.isidentifier()
            else ""
        )
        message = f"{at_line}: {shown}{key} = {value}: not a TOML value; {hint}{quoted}"
    else:
        column = int(match.group(2))
        message = (
            f"{at_line}, column {column}: not valid TOML ({reason[:1].lower()}{reason[1:]}): "
            f"{line.strip()!r}"
        )
    return ConfigError(message, file=file, path=path)


def _table_at(lines: list[str], number: int) -> str | None:
    """The table a line belongs to: the last ``[header]`` above it (None: the root table)."""
    for line in reversed(lines[: number - 1]):
        header = _header_line().fullmatch(line)
        if header is not None:
            return re.sub(r"\s+", "", header.group(1))
    return None


def _first_line(
    lines: list[str],
    number: int,
    matcher: Callable[[str], re.Match[str] | None],
    name: str,
    table: str | None = None,
) -> int | None:
    """The line, before ``number``, where ``name`` (a key in ``table``, or a header) first is."""
    for index, line in enumerate(lines[: number - 1], start=1):
        found = matcher(line)
        if found is None:
            continue
        if re.sub(r"\s+", "", found.group(1)) == name and (
            table is None or _table_at(lines, index) == table
        ):
            return index
    return None


def _expected_at(table: str | None, key: str) -> str | None:
    """What would be valid for ``key`` of a toolwire section (None for plugin tables)."""
    cls = SECTIONS.get(table or "")
    if cls is None:
        return None
    expected = expected_for(cls, f"$.{key}")
    return None if expected is None or expected.startswith("one of the keys") else expected
