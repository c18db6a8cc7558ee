"""Incremental, lenient parsing of JSON text that arrives in string deltas."""

from __future__ import annotations

import json
import re
from typing import Any, Final

__all__ = ["PartialJSONParser"]

# What the tokenizer expects next.
_VALUE: Final = 0  # any value (top level, after ':' or after ',' in an array)
_VALUE_OR_CLOSE: Final = 1  # right after '['
_KEY_OR_CLOSE: Final = 2  # right after '{'
_KEY: Final = 3  # after ',' in an object
_COLON: Final = 4  # after a key
_AFTER_VALUE: Final = 5  # ',' or the closing bracket of the open container
_DONE: Final = 6  # the top-level value is complete; only whitespace may follow
_STRING: Final = 7  # inside a string (key or value)
_ESCAPE: Final = 8  # after a backslash inside a string
_UNICODE: Final = 9  # inside the four hex digits of a \uXXXX escape
_NUMBER: Final = 10
_LITERAL: Final = 11
_ERROR: Final = 12

_WHITESPACE: Final = frozenset(" \t\n\r")
_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")
_SIMPLE_ESCAPES: Final = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_LITERALS: Final = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}

_STRING_RUN: Final = re.compile(r'[^"\\\x00-\x1f]*').match
_NUMBER_RUN: Final = re.compile(r"[-+.eE0-9]*").match
_NUMBER_SYNTAX: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?").fullmatch

_EXPECTATIONS: Final = {
    _VALUE: "a JSON value",
    _VALUE_OR_CLOSE: "a JSON value or ']'",
    _KEY_OR_CLOSE: "a double-quoted key or '}'",
    _KEY: "a double-quoted key",
    _COLON: "':' after the key",
    _DONE: "the end of the text (the JSON value is already complete)",
}


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# json.loads without NaN and Infinity, which are not JSON (made once: loads with an option
# builds a decoder every call).
_DECODE: Final = json.JSONDecoder(parse_constant=_not_json).decode


def _whole_object(text: str) -> dict[str, Any] | None:
    """``text`` parsed when it is one whole JSON object (and only whitespace around it), at the
    speed of :func:`json.loads`; None for anything else, which the tokenizer then reads."""
    if text.rstrip(" \t\n\r")[-1:] != "}":  # a prefix of an object, mostly: not worth a try
        return None
    try:
        value = _DECODE(text)
    except (ValueError, RecursionError):
        return None
    return value if type(value) is dict else None


def _shorten(token: str) -> str:
    return repr(token) if len(token) <= 40 else f"{token[:20]!r}…({len(token)} characters)"


class PartialJSONParser:
    """Parse JSON text fed in arbitrary string deltas, exposing a lenient value after each delta.

    The parser keeps a resumable tokenizer and a stack of the open containers, so the total work
    over all deltas is linear in the length of the text, however it is split.

    What :attr:`value` shows while the text is incomplete:

    - objects and arrays as far as they have arrived, including open ones;
    - an object member appears once its key is complete and its value has started;
    - a string that is still open shows the prefix received so far (an unpaired high surrogate
      escape waits for its partner before it is shown);
    - numbers and ``true``/``false``/``null`` appear only once complete, so every value shown is
      either final or (for the open string, object or array) a prefix of the final one.

    The containers in :attr:`value` are live: later deltas mutate them in place. Copy them to
    keep a snapshot, and do not mutate them.

    Invalid JSON never makes :meth:`feed` raise: parsing stops at the first error, :attr:`value`
    keeps what was parsed before it, :attr:`error` says what went wrong and where, and
    :meth:`finish` raises :class:`ValueError` with that reason.
    """

    __slots__ = (
        "_closed",
        "_container",
        "_error",
        "_escape_hex",
        "_has_value",
        "_high_surrogate",
        "_key",
        "_keys",
        "_literal",
        "_literal_value",
        "_mode",
        "_offset",
        "_raw",
        "_raw_blocks",
        "_root",
        "_stack",
        "_string_dirty",
        "_string_holder",
        "_string_is_key",
        "_string_parts",
        "_string_pending",
        "_string_shown",
        "_string_slot",
        "_token",
    )

    def __init__(self) -> None:
        # The text fed so far: recent deltas, folded into blocks so memory stays near its length.
        self._raw: list[str] = []
        self._raw_blocks: list[str] = []
        self._offset = 0  # characters consumed before the current delta
        self._mode: int = _VALUE
        self._root: Any = None
        self._has_value = False
        self._closed = False
        self._error: str | None = None
        # Open containers, innermost last; _keys[i] is the pending key of _stack[i] (objects).
        self._stack: list[dict[str, Any] | list[Any]] = []
        self._keys: list[str | None] = []
        self._container: dict[str, Any] | list[Any] | None = None
        self._key: str | None = None
        # The string being read: its pieces, and where its value lives (for value strings).
        self._string_parts: list[str] = []
        # Characters added since the open string was last published, and its length then: a
        # read republishes it only once it has grown by an eighth, so reading after every delta
        # stays linear overall even for one huge string value (short strings show every char).
        self._string_pending = 0
        self._string_shown = 0
        self._string_is_key = False
        self._string_dirty = False
        self._string_holder: dict[str, Any] | list[Any] | None = None
        self._string_slot: Any = None
        self._high_surrogate = ""
        self._escape_hex = ""
        self._token = ""  # the number read so far
        self._literal = ""  # the literal expected
        self._literal_value: Any = None

    # -- public surface -------------------------------------------------------------------------

    def feed(self, delta: str) -> None:
        """Consume the next piece of text.

        :param delta: any slice of the JSON text, from one character to all of it.
        :raises TypeError: if ``delta`` is not a str.
        :raises RuntimeError: if called after :meth:`finish`.
        """
        if type(delta) is not str:
            if not isinstance(delta, str):
                raise TypeError(
                    f"PartialJSONParser.feed() takes str, got {type(delta).__name__}: "
                    "decode bytes before feeding them"
                )
            delta = str(delta)
        if self._closed:
            raise RuntimeError("PartialJSONParser.feed() called after finish()")
        if not delta:
            return
        raw = self._raw
        raw.append(delta)
        if len(raw) >= 1024:
            self._raw_blocks.append("".join(raw))
            raw.clear()
        if self._offset == 0 and self._mode == _VALUE:
            # Arguments that arrive whole in their first delta (Gemini's always do, and many
            # servers' do) are parsed by json.loads at once, as finish() would return them.
            whole = _whole_object(delta)
            if whole is not None:
                self._root = whole
                self._has_value = True
                self._mode = _DONE
                self._offset = len(delta)
                return
        # Most single-character deltas land inside a string: skip the general tokenizer.
        if (
            self._mode == _STRING
            and not self._high_surrogate
            and delta.isprintable()
            and '"' not in delta
            and "\\" not in delta
        ):
            self._string_parts.append(delta)
            self._string_pending += len(self._string_parts[-1])
            self._string_dirty = True
            self._offset += len(delta)
            return
        if self._mode != _ERROR:
            self._consume(delta)
        self._offset += len(delta)

    @property
    def value(self) -> Any:
        """The value parsed so far, leniently completed; None while there is no value yet.

        Use :attr:`has_value` to tell "no value yet" from a parsed ``null``. Nothing is rebuilt
        on a read: the only work is joining the text of the string still open, and only once it
        has grown by an eighth since it was last shown, so the open string's shown prefix lags by
        at most an eighth of its length and reading after every delta stays linear overall, even
        for one huge string value. Closed strings, and everything at :meth:`finish`, are exact.
        """
        if self._string_dirty and self._string_pending >= self._string_shown >> 3:
            self._publish_string()
        return self._root

    @property
    def has_value(self) -> bool:
        """Whether :attr:`value` holds something yet.

        True once a top-level object, array or string has opened, or once a top-level number or
        literal is complete.
        """
        return self._has_value

    @property
    def complete(self) -> bool:
        """Whether the top-level value is complete (a top-level number completes at finish())."""
        return self._mode == _DONE

    @property
    def error(self) -> str | None:
        """Why the text is not valid JSON, once that is certain; None otherwise."""
        return self._error

    @property
    def raw(self) -> str:
        """All the text fed so far (joined on each read; read it when needed, not per delta)."""
        blocks = self._raw_blocks
        if self._raw:
            blocks.append("".join(self._raw))
            self._raw.clear()
        if len(blocks) > 1:
            blocks[:] = ["".join(blocks)]
        return blocks[0] if blocks else ""

    def finish(self) -> Any:
        """Declare the end of the text and return the complete value.

        Calling it again returns the same value (or raises the same error).

        :returns: the parsed value, equal to what :func:`json.loads` returns for the whole text.
        :raises ValueError: if the text is empty, incomplete or not valid JSON; the message says
            where and what was expected.
        """
        self._closed = True
        if self._mode == _NUMBER and not self._stack and not self._end_number():
            self._fail(0, f"{_shorten(self._token)} is not a valid JSON number")
        if self._mode == _DONE:
            return self._root
        if self._error is not None:
            raise ValueError(self._error)
        if not self._has_value and not self._stack and self._mode == _VALUE:
            if self._offset == 0:
                raise ValueError("no JSON value: the text is empty")
            raise ValueError("no JSON value: the text is only whitespace")
        raise ValueError(f"incomplete JSON: the text ends {self._describe_position()}")

    # -- tokenizer ------------------------------------------------------------------------------

    def _consume(self, text: str) -> None:
        i = 0
        n = len(text)
        while i < n:
            mode = self._mode
            if mode == _STRING:
                j = _STRING_RUN(text, i).end()  # type: ignore[union-attr]
                if j > i:
                    if self._high_surrogate:
                        self._flush_high_surrogate()
                    self._string_parts.append(text[i:j])
                    self._string_pending += len(self._string_parts[-1])
                    self._string_dirty = True
                    i = j
                    if i == n:
                        return
                ch = text[i]
                i += 1
                if ch == '"':
                    self._end_string()
                elif ch == "\\":
                    self._mode = _ESCAPE
                else:
                    self._fail(
                        i - 1,
                        f"control character {ch!r} inside a string (it must be escaped)",
                    )
                    return
                continue
            if mode == _NUMBER:
                j = _NUMBER_RUN(text, i).end()  # type: ignore[union-attr]
                if j > i:
                    self._token += text[i:j]
                    i = j
                    if i == n:
                        return
                if not self._end_number():
                    self._fail(i, f"{_shorten(self._token)} is not a valid JSON number")
                    return
                continue  # the character that ended the number is read in the new mode
            ch = text[i]
            if ch in _WHITESPACE and mode < _STRING:
                i += 1
                continue
            if mode == _AFTER_VALUE:
                container = self._container
                if ch == ",":
                    self._mode = _KEY if type(container) is dict else _VALUE
                elif ch == ("}" if type(container) is dict else "]"):
                    self._close_container()
                else:
                    expected = "',' or '}'" if type(container) is dict else "',' or ']'"
                    self._fail(i, f"expected {expected}, got {ch!r}")
                    return
            elif mode in (_VALUE, _VALUE_OR_CLOSE):
                if ch == "]" and mode == _VALUE_OR_CLOSE:
                    self._close_container()
                elif not self._begin_value(ch):
                    self._fail(i, f"expected {_EXPECTATIONS[mode]}, got {ch!r}")
                    return
            elif mode in (_KEY, _KEY_OR_CLOSE):
                if ch == '"':
                    self._string_parts = []
                    self._string_pending = 0
                    self._string_is_key = True
                    self._mode = _STRING
                elif ch == "}" and mode == _KEY_OR_CLOSE:
                    self._close_container()
                else:
                    self._fail(i, f"expected {_EXPECTATIONS[mode]}, got {ch!r}")
                    return
            elif mode == _COLON:
                if ch != ":":
                    self._fail(i, f"expected ':' after the key {self._key!r}, got {ch!r}")
                    return
                self._mode = _VALUE
            elif mode == _ESCAPE:
                if ch == "u":
                    self._escape_hex = ""
                    self._mode = _UNICODE
                else:
                    decoded = _SIMPLE_ESCAPES.get(ch)
                    if decoded is None:
                        self._fail(i - 1, f"invalid escape '\\{ch}' inside a string")
                        return
                    if self._high_surrogate:
                        self._flush_high_surrogate()
                    self._string_parts.append(decoded)
                    self._string_pending += len(self._string_parts[-1])
                    self._string_dirty = True
                    self._mode = _STRING
            elif mode == _UNICODE:
                if ch not in _HEX_DIGITS:
                    self._fail(i, f"expected a hex digit in a \\u escape, got {ch!r}")
                    return
                self._escape_hex += ch
                if len(self._escape_hex) == 4:
                    self._add_code_point(int(self._escape_hex, 16))
                    self._mode = _STRING
            elif mode == _LITERAL:
                expected_char = self._literal[len(self._token)]
                if ch != expected_char:
                    self._fail(
                        i, f"invalid literal {(self._token + ch)!r}, expected {self._literal!r}"
                    )
                    return
                self._token += ch
                if len(self._token) == len(self._literal):
                    self._token = ""
                    self._complete_scalar(self._literal_value)
            elif mode == _DONE:
                self._fail(i, f"expected {_EXPECTATIONS[_DONE]}, got {ch!r}")
                return
            i += 1

    def _begin_value(self, ch: str) -> bool:
        if ch == '"':
            self._string_parts = []
            self._string_pending = 0
            self._string_is_key = False
            self._place_string()
            self._mode = _STRING
        elif ch == "{":
            self._open_container({})
        elif ch == "[":
            self._open_container([])
        elif ch == "-" or "0" <= ch <= "9":
            self._token = ch
            self._mode = _NUMBER
        elif ch in _LITERALS:
            self._literal, self._literal_value = _LITERALS[ch]
            self._token = ch
            self._mode = _LITERAL
        else:
            return False
        return True

    def _place_string(self) -> None:
        container = self._container
        if container is None:
            self._root = ""
            self._has_value = True
            self._string_holder = None
        elif type(container) is dict:
            container[self._key] = ""  # type: ignore[index]
            self._string_holder = container
            self._string_slot = self._key
        else:
            container.append("")  # type: ignore[union-attr]
            self._string_holder = container
            self._string_slot = len(container) - 1

    def _publish_string(self) -> None:
        parts = self._string_parts
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
        text = parts[0] if parts else ""
        self._string_dirty = False
        self._string_pending = 0
        self._string_shown = len(text)
        if self._string_is_key:
            return
        holder = self._string_holder
        if holder is None:
            self._root = text
        else:
            holder[self._string_slot] = text

    def _end_string(self) -> None:
        if self._high_surrogate:
            self._flush_high_surrogate()
        if self._string_is_key:
            self._key = "".join(self._string_parts)
            self._string_parts = []
            self._string_pending = 0
            self._string_dirty = False
            self._mode = _COLON
            return
        self._publish_string()
        self._string_parts = []
        self._string_pending = 0
        self._string_holder = None
        self._mode = _AFTER_VALUE if self._stack else _DONE

    def _add_code_point(self, code: int) -> None:
        if 0xDC00 <= code <= 0xDFFF and self._high_surrogate:
            high = ord(self._high_surrogate)
            self._high_surrogate = ""
            self._string_parts.append(chr(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)))
            self._string_pending += len(self._string_parts[-1])
            self._string_dirty = True
            return
        if self._high_surrogate:
            self._flush_high_surrogate()
        if 0xD800 <= code <= 0xDBFF:
            self._high_surrogate = chr(code)  # wait: a low surrogate escape may follow
        else:
            self._string_parts.append(chr(code))
            self._string_pending += len(self._string_parts[-1])
            self._string_dirty = True

    def _flush_high_surrogate(self) -> None:
        # Unpaired surrogates are kept as they are, as json.loads does.
        self._string_parts.append(self._high_surrogate)
        self._string_pending += len(self._string_parts[-1])
        self._high_surrogate = ""
        self._string_dirty = True

    def _end_number(self) -> bool:
        token = self._token
        match = _NUMBER_SYNTAX(token)
        if match is None:
            return False
        if match.group(1) is None and match.group(2) is None:
            try:
                number: int | float = int(token)
            except ValueError:  # longer than sys.get_int_max_str_digits(), as json.loads refuses
                return False
        else:
            number = float(token)
        self._token = ""
        self._complete_scalar(number)
        return True

    def _complete_scalar(self, scalar: Any) -> None:
        container = self._container
        if container is None:
            self._root = scalar
            self._has_value = True
            self._mode = _DONE
            return
        if type(container) is dict:
            container[self._key] = scalar  # type: ignore[index]
        else:
            container.append(scalar)  # type: ignore[union-attr]
        self._mode = _AFTER_VALUE

    def _open_container(self, new: dict[str, Any] | list[Any]) -> None:
        container = self._container
        if container is None:
            self._root = new
            self._has_value = True
        elif type(container) is dict:
            container[self._key] = new  # type: ignore[index]
        else:
            container.append(new)  # type: ignore[union-attr]
        self._stack.append(new)
        self._keys.append(self._key)
        self._container = new
        self._key = None
        self._mode = _KEY_OR_CLOSE if type(new) is dict else _VALUE_OR_CLOSE

    def _close_container(self) -> None:
        self._stack.pop()
        self._key = self._keys.pop()
        self._container = self._stack[-1] if self._stack else None
        self._mode = _AFTER_VALUE if self._stack else _DONE

    # -- errors ---------------------------------------------------------------------------------

    def _fail(self, index: int, reason: str) -> None:
        self._error = f"invalid JSON at character {self._offset + index}: {reason}"
        self._mode = _ERROR
        if self._string_dirty:
            self._publish_string()

    def _describe_position(self) -> str:
        mode = self._mode
        if mode in (_STRING, _ESCAPE, _UNICODE):
            where = "inside a key" if self._string_is_key else "inside a string"
        elif mode == _NUMBER:
            where = f"inside the number {_shorten(self._token)}"
        elif mode == _LITERAL:
            where = f"inside {self._literal!r} (got {self._token!r})"
        elif mode == _AFTER_VALUE:
            where = "after a value, where ',' or a closing bracket was expected"
        else:
            where = f"where {_EXPECTATIONS[mode]} was expected"
        path = " > ".join("object" if type(c) is dict else "array" for c in self._stack)
        inside = f" (open: {path})" if path else ""
        return f"at character {self._offset} {where}{inside}"
