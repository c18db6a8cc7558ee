"""Patterns as a grammar-building server takes them: anchored, in a small regex subset.

llama-cpp-python turns a tool's JSON Schema into a grammar only when every ``pattern`` is written
``^…$`` with plain groups, classes and quantifiers; any other pattern makes it drop the whole
schema and hold the call to "some JSON" instead. :func:`server_schema` rewrites each anchored
pattern into that subset where it can, and leaves out the others, which the host's validation
still enforces. An unanchored pattern is left out too: JSON Schema searches it, and the grammar
of ``^.*(…).*$`` is so ambiguous that the server's sampler slowed to minutes a call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

_ESCAPES: Final = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "s": "[ \\t\\n\\r]",
    "S": "[^ \\t\\n\\r]",
    "w": "[a-zA-Z0-9_]",
    "W": "[^a-zA-Z0-9_]",
}
_CLASS_ESCAPES: Final = {"d": "0-9", "s": " \\t\\n\\r", "w": "a-zA-Z0-9_"}


def server_pattern(pattern: str) -> str | None:
    """The anchored ``pattern`` in the subset, meaning the same (a word boundary ``\\b`` is left
    out, which only widens it); None for an unanchored pattern and one that cannot be written so
    (lookarounds, back-references, negated escapes inside a class)."""
    anchored = len(pattern) >= 2 and pattern.startswith("^") and _ends_with_dollar(pattern)
    if not anchored:
        return None
    translated = _translate(pattern[1:-1])
    return None if translated is None else f"^{translated}$"


def _ends_with_dollar(pattern: str) -> bool:
    if not pattern.endswith("$"):
        return False
    slashes = len(pattern[:-1]) - len(pattern[:-1].rstrip("\\"))
    return slashes % 2 == 0


def _translate(text: str) -> str | None:
    out: list[str] = []
    i, n = 0, len(text)
    in_class = False
    while i < n:
        ch = text[i]
        if ch == "\\":
            if i + 1 >= n:
                return None
            nxt = text[i + 1]
            i += 2
            if nxt.isdigit() and nxt != "0":
                return None  # a back-reference
            if in_class:
                if nxt in _CLASS_ESCAPES:
                    out.append(_CLASS_ESCAPES[nxt])
                elif nxt in "DSWbB":
                    return None
                else:
                    out.append("\\" + nxt)
            elif nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
            elif nxt in "bB":
                continue  # a word boundary: left out
            else:
                out.append("\\" + nxt)
            continue
        if in_class:
            if ch == "]":
                in_class = False
            out.append(ch)
            i += 1
            continue
        if ch == "[":
            in_class = True
            out.append(ch)
            if text.startswith("^", i + 1):
                out.append("^")
                i += 1
            i += 1
            continue
        if ch == "(" and text.startswith("?", i + 1):
            if text.startswith("?:", i + 1):
                out.append("(")
                i += 3
                continue
            return None  # a lookaround or a named group
        if ch in "^$":
            return None  # an anchor inside the pattern
        out.append(ch)
        i += 1
    return None if in_class else "".join(out)


def server_schema(schema: Any) -> Any:
    """``schema`` with every ``pattern`` rewritten by :func:`server_pattern` (left out where it
    cannot be); the same object when nothing changes."""
    if isinstance(schema, Mapping):
        changed: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "pattern" and isinstance(value, str):
                rewritten = server_pattern(value)
                if rewritten != value:
                    changed[key] = rewritten
            else:
                new = server_schema(value)
                if new is not value:
                    changed[key] = new
        if not changed:
            return schema
        out = {**schema, **changed}
        return {k: v for k, v in out.items() if not (k == "pattern" and v is None)}
    if isinstance(schema, list):
        items = [server_schema(item) for item in schema]
        return items if any(a is not b for a, b in zip(items, schema, strict=True)) else schema
    return schema


def bounded_strings(schema: Any, length: int) -> Any:
    """``schema`` with a ``maxLength`` of ``length`` on every string that sets none: a server
    that generates call arguments without a token limit (llama-cpp-python under ``auto``) then
    cannot write one string until the context is full. llama-cpp-python's grammar reads a
    string's ``pattern`` and ignores its ``maxLength``, so a pattern's open repetitions are
    bounded by the string's length too (:func:`bounded_pattern`). Only the schema sent is
    bounded; the host validates against the tool's own."""
    if isinstance(schema, Mapping):
        changed = {key: bounded_strings(value, length) for key, value in schema.items()}
        if schema.get("type") == "string" and "maxLength" not in schema and "enum" not in schema:
            changed["maxLength"] = length
        pattern, most = changed.get("pattern"), changed.get("maxLength")
        if isinstance(pattern, str) and isinstance(most, int) and not isinstance(most, bool):
            changed["pattern"] = bounded_pattern(pattern, most)
        return changed
    if isinstance(schema, list):
        return [bounded_strings(item, length) for item in schema]
    return schema


def bounded_pattern(pattern: str, most: int) -> str:
    """``pattern`` (in the subset :func:`server_pattern` writes) with every open repetition
    (``*``, ``+``, ``{m,}``) held to ``most``: the strings of at most ``most`` characters that it
    matches are the same, and a grammar built from it cannot run on without end."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            # A `]` first in a class (after an optional `^`) is a character of it.
            start = i + 2 if pattern.startswith("^", i + 1) else i + 1
            if pattern.startswith("]", start):
                out.append(pattern[i : start + 1])
                i = start + 1
                continue
        elif ch == "*":
            ch = f"{{0,{most}}}"
        elif ch == "+":
            ch = f"{{1,{most}}}"
        elif ch == "{":
            end = pattern.find("}", i)
            low = pattern[i + 1 : end - 1] if end > 0 and pattern[end - 1] == "," else ""
            if low.isdigit() and int(low) <= most:
                out.append(f"{{{low},{most}}}")
                i = end + 1
                continue
        out.append(ch)
        i += 1
    return "".join(out)
