"""A streaming reader of a tool call's argument text: which key is arriving, and its new text.

The loop's lenient parse of partial arguments republishes a long open string only now and then
(to stay linear); a live card (the terminal's, the web chat's) wants every piece as it comes.
This reader walks each delta once: string values come out decoded, other values (numbers,
lists, objects) as their JSON text.
Anything that is not a JSON object stops it; the completed call's arguments are shown anyway.
"""

from __future__ import annotations

import re

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_STRING_STOP = re.compile(r'["\\]')

# States of the reader.
_START, _OBJECT, _KEY, _COLON, _VALUE, _STRING, _RAW, _DONE = range(8)


class ArgumentScanner:
    """Feed it the ``delta`` of each :class:`~toolwire.events.ToolCallArgumentsDelta` of one
    call; each :meth:`feed` returns ``(key, new text | None)`` pieces.

    A piece with text None announces a key whose value begins; the others carry text to append
    to that key's value, in order. Every delta is read once, so a whole argument costs time
    linear in its size.
    """

    def __init__(self) -> None:
        self._state = _START
        self._key: list[str] = []
        self._current = ""
        self._escape: str | None = None  # the escape being read: "" after a backslash, "u…"
        self._high: int | None = None  # a high surrogate waiting for its pair
        self._raw_depth = 0
        self._raw_string = False
        self._raw_escape = False

    def feed(self, text: str) -> list[tuple[str, str | None]]:
        """The pieces ``text`` (the next delta) completes or extends."""
        out: list[tuple[str, str | None]] = []
        buffer: list[str] = []  # text of the current key's value, not yet in ``out``
        i, n = 0, len(text)
        while i < n:
            state = self._state
            if state == _STRING and self._escape is None:
                match = _STRING_STOP.search(text, i)
                end = match.start() if match else n
                if end > i:
                    buffer.append(self._pending_surrogate() + text[i:end])
                i = end
                if match is None:
                    break
            ch = text[i]
            i += 1
            if state == _STRING:
                if self._string_char(ch, buffer) == "end":
                    buffer.append(self._pending_surrogate())
                    self._flush(buffer, out)
                    self._state = _OBJECT
            elif state == _RAW:
                if self._raw_char(ch):
                    buffer.append(ch)
                else:
                    self._flush(buffer, out)
                    self._state = _OBJECT if ch == "," else _DONE
            elif state == _VALUE:
                if not ch.isspace():
                    self._flush(buffer, out)
                    self._begin_value(ch, out)
                    if self._state == _RAW:
                        i -= 1  # the first character belongs to the value
            elif state == _DONE:
                break
            else:
                self._structure(state, ch)
        self._flush(buffer, out)
        return [piece for piece in out if piece[1] is None or piece[1]]

    def _flush(self, buffer: list[str], out: list[tuple[str, str | None]]) -> None:
        if buffer:
            out.append((self._current, "".join(buffer)))
            buffer.clear()

    def _structure(self, state: int, ch: str) -> None:
        """Read one character between values: the object's brace, a key, its colon, a comma."""
        if state == _START:
            if ch == "{":
                self._state = _OBJECT
            elif not ch.isspace():
                self._state = _DONE
        elif state == _OBJECT:
            if ch == '"':
                self._state = _KEY
                self._key = []
                self._escape = None
            elif ch == "}" or (ch != "," and not ch.isspace()):
                self._state = _DONE
        elif state == _KEY:
            if self._string_char(ch, self._key) == "end":
                self._state = _COLON
        elif ch == ":":
            self._state = _VALUE
        elif not ch.isspace():
            self._state = _DONE

    def _begin_value(self, ch: str, out: list[tuple[str, str | None]]) -> None:
        """Announce the key whose value ``ch`` begins: a string, or raw JSON text."""
        self._current = "".join(self._key)
        out.append((self._current, None))
        if ch == '"':
            self._state = _STRING
            self._escape = None
        else:
            self._state = _RAW
            self._raw_depth, self._raw_string, self._raw_escape = 0, False, False

    def _raw_char(self, ch: str) -> bool:
        """Read one character of a raw value; False when it is the comma or brace after it."""
        if self._raw_string:
            if self._raw_escape:
                self._raw_escape = False
            elif ch == "\\":
                self._raw_escape = True
            elif ch == '"':
                self._raw_string = False
        elif ch == '"':
            self._raw_string = True
        elif ch in "[{":
            self._raw_depth += 1
        elif ch in "]}" and self._raw_depth > 0:
            self._raw_depth -= 1
        elif self._raw_depth == 0 and ch in ",}":
            return False
        return True

    def _pending_surrogate(self) -> str:
        if self._high is None:
            return ""
        self._high = None
        return "\ufffd"

    def _string_char(self, ch: str, sink: list[str]) -> str | None:
        """Read one character of a JSON string into ``sink``; "end" at its closing quote."""
        escape = self._escape
        if escape is None:
            if ch == "\\":
                self._escape = ""
                return None
            if ch == '"':
                return "end"
            sink.append(self._pending_surrogate() + ch)
            return None
        if escape == "":
            if ch == "u":
                self._escape = "u"
                return None
            self._escape = None
            sink.append(self._pending_surrogate() + _ESCAPES.get(ch, ch))
            return None
        escape += ch
        if len(escape) < 5:
            self._escape = escape
            return None
        self._escape = None
        try:
            unit = int(escape[1:], 16)
        except ValueError:
            sink.append("\ufffd")
            return None
        if 0xD800 <= unit < 0xDC00:
            pending = self._pending_surrogate()
            if pending:
                sink.append(pending)
            self._high = unit
        elif 0xDC00 <= unit < 0xE000 and self._high is not None:
            high, self._high = self._high, None
            sink.append(chr(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00)))
        else:
            sink.append(self._pending_surrogate() + chr(unit))
        return None
