"""The ``typescript`` dialect: TypeScript-style calls, read by a small literal reader, and written.

A call is ``name(a, b, …)`` with the arguments in parameter order; ``undefined`` stands for a
parameter left out before a later one, and one object after the declared parameters holds any
further named arguments. Values are TypeScript/JavaScript literals: strings in single, double or
back quotes (no ``${}``), numbers, ``true``, ``false``, ``null``, arrays and object literals with
bare or quoted keys, trailing commas allowed. Nothing is evaluated. The reader is bounded in
nesting depth and in size, and its errors say where and what would be valid, so a model can
correct the call.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from ._brackets import BracketScanner
from ._found import Found

MAX_DEPTH: Final = 64
"""The deepest nesting of arrays and objects a call may hold."""

MAX_CHARS: Final = 4 * 1024 * 1024
"""The longest call text the reader reads."""

_UNDEFINED: Final = object()
_SPACE: Final = re.compile(r"\s*")
_IDENTIFIER: Final = re.compile(r"[A-Za-z_$][\w$]*")
_NAME_AT_START: Final = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_BARE_KEY: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")
_DECIMAL: Final = r"\d(?:_?\d)*"
_NUMBER: Final = re.compile(
    r"0[xX][0-9a-fA-F](?:_?[0-9a-fA-F])*|0[oO][0-7](?:_?[0-7])*|0[bB][01](?:_?[01])*"
    rf"|(?:{_DECIMAL}(?:\.(?:{_DECIMAL})?)?|\.{_DECIMAL})(?:[eE][+-]?{_DECIMAL})?"
)
_WORDS: Final = {"true": True, "false": False, "null": None}
_PYTHON_WORDS: Final = {"True": "true", "False": "false", "None": "null"}
_SIMPLE_ESCAPES: Final = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "0": "\0",
}
_STRING_PIECE: Final = {
    "'": re.compile(r"[^'\\\n\r]+"),
    '"': re.compile(r'[^"\\\n\r]+'),
    "`": re.compile(r"[^`\\$\r]+|\$(?!\{)"),
}


class TypeScriptSyntaxError(ValueError):
    """A call text the reader could not read; the message says where and what would be valid."""


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    # -- positions and errors ------------------------------------------------------------------

    def fail(self, message: str, at: int | None = None) -> TypeScriptSyntaxError:
        at = self.pos if at is None else at
        line = self.text.count("\n", 0, at) + 1
        column = at - (self.text.rfind("\n", 0, at) + 1) + 1
        near = self.text[at : at + 20].split("\n", 1)[0]
        if near:
            shown = f" near {near!r}"
        else:
            shown = " at the end" if at >= len(self.text) else " at the end of the line"
        return TypeScriptSyntaxError(f"{message} (line {line}, column {column}{shown})")

    def space(self) -> None:
        self.pos = _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
        if self.text.startswith(("//", "/*"), self.pos):
            raise self.fail("comments are not accepted in a call; write the call alone")

    def peek(self) -> str:
        self.space()
        return self.text[self.pos : self.pos + 1]

    def expect(self, char: str, what: str) -> None:
        if self.peek() != char:
            raise self.fail(f"expected {char!r} {what}")
        self.pos += 1

    # -- values --------------------------------------------------------------------------------

    def value(self, *, argument: bool = False) -> Any:
        char = self.peek()
        if not char:
            raise self.fail("expected a value, the text ended")
        if char in ("'", '"', "`"):
            return self.string()
        if char == "[":
            return self.nested(self.array)
        if char == "{":
            return self.nested(self.object)
        if char in "+-" or char.isdigit() or char == ".":
            return self.number()
        word = _IDENTIFIER.match(self.text, self.pos)
        if word is not None:
            return self.word(word.group(), argument=argument)
        raise self.fail(
            'expected a value: "text" in quotes, a number, true, false, null, [an array] '
            "or {an object}"
        )

    def nested(self, read: Callable[[], Any]) -> Any:
        if self.depth >= MAX_DEPTH:
            raise self.fail(f"arrays and objects nest deeper than {MAX_DEPTH} levels")
        self.depth += 1
        try:
            return read()
        finally:
            self.depth -= 1

    def word(self, word: str, *, argument: bool) -> Any:
        start = self.pos
        self.pos += len(word)
        if word in _WORDS:
            return _WORDS[word]
        if word == "undefined":
            if argument:
                return _UNDEFINED
            raise self.fail(
                "undefined is only for a parameter left out before a later one; leave the "
                "key out or write null",
                start,
            )
        if word in _PYTHON_WORDS:
            raise self.fail(f"{word} is not a TypeScript value; write {_PYTHON_WORDS[word]}", start)
        if word in ("NaN", "Infinity"):
            raise self.fail(f"{word} is not a JSON value; write a finite number", start)
        if self.peek() == "(":
            raise self.fail(f"{word}(…) is a call; only literal values are accepted", start)
        raise self.fail(f'{word} is not a value; put text in quotes: "{word}"', start)

    def number(self) -> int | float:
        start = self.pos
        sign = self.text[self.pos]
        negative = False
        if sign in "+-":
            negative = sign == "-"
            self.pos += 1
            self.space()
        match = _NUMBER.match(self.text, self.pos)
        if match is None or not match.group():
            raise self.fail("expected a number", start)
        digits = match.group()
        after = self.text[match.end() : match.end() + 1]
        if after and (after.isalnum() or after in "_$."):
            if after == "n":
                raise self.fail("BigInt literals are not accepted; write the number plainly", start)
            raise self.fail(f"{self.text[start : match.end() + 1]!r} is not a number", start)
        plain = digits.replace("_", "")
        if len(plain) > 1 and plain[0] == "0" and plain[1].isdigit():
            raise self.fail("a number does not start with 0 (octal is written 0o…)", start)
        self.pos = match.end()
        value: int | float
        if plain[:2].lower() in ("0x", "0o", "0b"):
            value = int(plain, 0)
        elif "." in plain or "e" in plain or "E" in plain:
            value = float(plain)
            if not math.isfinite(value):
                raise self.fail(f"{digits} is too large for a number", start)
        else:
            try:
                value = int(plain)
            except ValueError:  # past Python's limit on the digits of an int
                raise self.fail("the number has too many digits", start) from None
        return -value if negative else value

    def string(self) -> str:
        quote = self.text[self.pos]
        start = self.pos
        self.pos += 1
        pieces: list[str] = []
        piece = _STRING_PIECE[quote]
        text = self.text
        while True:
            match = piece.match(text, self.pos)
            if match is not None:
                pieces.append(match.group())
                self.pos = match.end()
                continue
            char = text[self.pos : self.pos + 1]
            if char == quote:
                self.pos += 1
                return _joined_surrogates("".join(pieces))
            if not char:
                raise self.fail(f"the string opened here is not closed; end it with {quote}", start)
            if char == "\\":
                pieces.append(self.escape(quote))
            elif char == "$":
                raise self.fail("${…} is not accepted in a `string`; write the text out")
            elif char == "\r":
                # A template's raw line breaks read as \n, as in JavaScript.
                self.pos += 2 if text.startswith("\r\n", self.pos) else 1
                pieces.append("\n")
            else:
                raise self.fail(
                    f"a string in {quote} quotes cannot span lines; write \\n or use `back quotes`"
                )

    def escape(self, quote: str) -> str:
        text = self.text
        at = self.pos
        char = text[at + 1 : at + 2]
        self.pos = at + 2
        if not char:
            raise self.fail("the text ended after a backslash", at)
        if char in _SIMPLE_ESCAPES:
            if char == "0" and text[self.pos : self.pos + 1].isdigit():
                raise self.fail("octal escapes are not accepted; write \\x or \\u escapes", at)
            return _SIMPLE_ESCAPES[char]
        if char == "x":
            digits = text[self.pos : self.pos + 2]
            if len(digits) != 2 or not _is_hex(digits):
                raise self.fail("\\x needs two hex digits", at)
            self.pos += 2
            return chr(int(digits, 16))
        if char == "u":
            if text.startswith("{", self.pos):
                close = text.find("}", self.pos)
                digits = text[self.pos + 1 : close] if close > 0 else ""
                if not digits or len(digits) > 6 or not _is_hex(digits):
                    raise self.fail("\\u{…} needs 1 to 6 hex digits", at)
                if int(digits, 16) > 0x10FFFF:
                    raise self.fail("\\u{…} is past the last code point, 10FFFF", at)
                self.pos = close + 1
                return chr(int(digits, 16))
            digits = text[self.pos : self.pos + 4]
            if len(digits) != 4 or not _is_hex(digits):
                raise self.fail("\\u needs four hex digits, or \\u{…}", at)
            self.pos += 4
            return chr(int(digits, 16))
        if char in "123456789":
            raise self.fail("octal escapes are not accepted; write \\x or \\u escapes", at)
        if char == "\r":
            # A line continuation: backslash and line break stand for nothing.
            if text.startswith("\n", self.pos):
                self.pos += 1
            return ""
        if char in ("\n", "\u2028", "\u2029"):
            return ""
        return char

    def array(self) -> list[Any]:
        self.pos += 1
        items: list[Any] = []
        while True:
            char = self.peek()
            if char == "]":
                self.pos += 1
                return items
            if char == ",":
                raise self.fail("an empty place in an array; write null or leave it out")
            items.append(self.value())
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "]":
                raise self.fail("expected ',' or ']' in the array")

    def object(self) -> dict[str, Any]:
        self.pos += 1
        out: dict[str, Any] = {}
        while True:
            char = self.peek()
            if char == "}":
                self.pos += 1
                return out
            start = self.pos
            key = self.key()
            if key in out:
                raise self.fail(f"the key {key!r} appears twice in the object", start)
            if self.peek() != ":":
                if self.peek() in (",", "}"):
                    raise self.fail(f"the key {key!r} has no value; write {key}: value", start)
                raise self.fail(f"expected ':' after the key {key!r}")
            self.pos += 1
            out[key] = self.value()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "}":
                raise self.fail("expected ',' or '}' in the object")

    def key(self) -> str:
        char = self.peek()
        if char in ("'", '"'):
            return self.string()
        if char == "`":
            raise self.fail("a key is written bare or in ' or \" quotes, not in back quotes")
        if char == "[":
            raise self.fail("computed keys are not accepted; write the key out")
        if self.text.startswith("...", self.pos):
            raise self.fail("... spreads are not accepted; write the entries out")
        word = _IDENTIFIER.match(self.text, self.pos)
        if word is None:
            raise self.fail('expected a key: a name, or text in quotes ("two words")')
        self.pos = word.end()
        return word.group()

    # -- calls ---------------------------------------------------------------------------------

    def call(self) -> tuple[str, list[Any]]:
        self.space()
        name = _dotted_name(self)
        if name is None:
            raise self.fail("expected a call like name(value, …)")
        self.expect("(", f"after {name}")
        values: list[Any] = []
        while True:
            char = self.peek()
            if char == ")":
                self.pos += 1
                break
            if char == ",":
                raise self.fail("an empty argument; write undefined for a parameter left out")
            values.append(self.value(argument=True))
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != ")":
                raise self.fail(f"expected ',' or ')' in the call of {name}")
        self.space()
        if self.text.startswith(";", self.pos):
            self.pos += 1
            self.space()
        if self.pos < len(self.text):
            raise self.fail(f"unexpected text after the call of {name}")
        return name, values


def _dotted_name(reader: _Reader) -> str | None:
    parts: list[str] = []
    while True:
        word = _IDENTIFIER.match(reader.text, reader.pos)
        if word is None:
            return None
        parts.append(word.group())
        reader.pos = word.end()
        if not reader.text.startswith(".", reader.pos):
            return ".".join(parts)
        reader.pos += 1


def _is_hex(digits: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in digits)


_SURROGATE_PAIR: Final = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _joined_surrogates(text: str) -> str:
    """``\\uD83D\\uDE80`` escapes as the one character they stand for, as in JavaScript."""
    if not any("\ud800" <= c <= "\udfff" for c in text):
        return text
    return _SURROGATE_PAIR.sub(
        lambda m: chr(0x10000 + ((ord(m[0][0]) - 0xD800) << 10) + ord(m[0][1]) - 0xDC00), text
    )


def read_call(source: str, order_of: Callable[[str], tuple[str, ...] | None]) -> Found:
    """The call in ``name(a, b, …)``, arguments mapped to parameters through ``order_of``.

    ``order_of`` gives a known function's parameters in positional order (None for a function
    not offered, whose only argument may be an object of named arguments). ``undefined`` leaves
    its parameter out; one object after the declared parameters holds further named arguments.
    """
    text = source.strip()
    head = _NAME_AT_START.match(text)
    name = head.group() if head else ""
    if len(text) > MAX_CHARS:
        return Found(name, None, f"the call is longer than {MAX_CHARS} characters")
    reader = _Reader(text)
    try:
        name, values = reader.call()
    except TypeScriptSyntaxError as exc:
        return Found(name, None, f"not a valid call: {exc}")
    except RecursionError:
        return Found(name, None, "not a valid call: nested too deep")
    order = order_of(name)
    declared = order or ()
    arguments: dict[str, Any] = {}
    for parameter, value in zip(declared, values, strict=False):
        if value is not _UNDEFINED:
            arguments[parameter] = value
    rest = values[len(declared) :]
    if not rest:
        return Found(name, arguments, None)
    if len(rest) == 1 and (isinstance(rest[0], dict) or rest[0] is _UNDEFINED):
        extra = rest[0] if isinstance(rest[0], dict) else {}
        taken = [key for key in extra if key in declared]
        if taken:
            return Found(
                name,
                None,
                f"{taken[0]!r} is a parameter of {name}; give it in its place, not in the object "
                "of further arguments",
            )
        arguments.update(extra)
        return Found(name, arguments, None)
    if order is None:
        return Found(
            name, None, f"{name} is not offered, so its arguments cannot be read by position"
        )
    signature = ", ".join(declared)
    return Found(
        name,
        None,
        f"{name} takes {len(declared)} arguments ({signature}), got {len(values)}; write "
        "undefined for a parameter left out",
    )


find_call_end: Final = BracketScanner(
    {
        "'": r"(?:[^'\\\n]|\\.)*(?:'|(?=\n))",
        '"': r'(?:[^"\\\n]|\\.)*(?:"|(?=\n))',
        "`": r"(?:[^`\\]|\\.)*`",
    }
).end
"""The index after the bracket closing the one at ``start`` of a TypeScript call text, or None
if the text ends first. Strings in single, double and back quotes are skipped; a quoted (not
back-quoted) string still open at the end of its line ends there (the reader then reports it)."""


def render_value(value: Any) -> str:
    """``value`` as a TypeScript literal: JSON, with keys bare where TypeScript allows it."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        items = (f"{_key(k)}: {render_value(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def render_call(name: str, arguments: Mapping[str, Any], order: tuple[str, ...]) -> str:
    """``name(…)``: the parameters of ``order`` by position (``undefined`` for one left out
    before a later one), then an object of the arguments ``order`` does not name."""
    parts: list[str] = []
    skipped = 0
    for parameter in order:
        if parameter in arguments:
            parts += ["undefined"] * skipped + [render_value(arguments[parameter])]
            skipped = 0
        else:
            skipped += 1
    declared = set(order)
    extra = {k: v for k, v in arguments.items() if k not in declared}
    if extra:
        parts += ["undefined"] * skipped + [render_value(extra)]
    return f"{name}({', '.join(parts)})"
