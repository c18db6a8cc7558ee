"""Conservative repair of the tool-call argument text that models emit."""

from __future__ import annotations

import json
import re
from typing import Any, Final, Literal, NoReturn

import attrs

__all__ = [
    "ArgumentsSyntaxError",
    "ParsedArguments",
    "REPAIRS",
    "Repair",
    "parse_arguments",
]

Repair = Literal[
    "empty text",
    "markdown code fence",
    "object encoded as a JSON string",
    "redundant wrapping braces",
    "unquoted keys",
    "single-quoted strings",
    "trailing commas",
    "template quote tokens",
    "trailing text after the object",
]

REPAIRS: Final[tuple[Repair, ...]] = (
    "empty text",
    "markdown code fence",
    "object encoded as a JSON string",
    "redundant wrapping braces",
    "unquoted keys",
    "single-quoted strings",
    "trailing commas",
    "template quote tokens",
    "trailing text after the object",
)
"""Every repair :func:`parse_arguments` may make, in the order it considers them."""

_MAX_DEPTH: Final = 200
_MAX_TRAILING: Final = 2048
"""The most text after the arguments object that ``trailing_text`` drops."""

_FENCE: Final = re.compile(
    r"\s*```[ \t]*[A-Za-z0-9_+.-]*[ \t]*(?:\r?\n|(?=[{\"']))(?P<body>.*?)\s*```\s*",
    re.DOTALL,
)
_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_IDENTIFIER: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_WORD: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.+-]*")
_STRING_BODY: Final = {
    '"': re.compile(r'[^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*', re.DOTALL),
    "'": re.compile(r"[^'\\\x00-\x1f]*(?:\\.[^'\\\x00-\x1f]*)*", re.DOTALL),
}
_BAD_SINGLE_QUOTED_ESCAPE: Final = re.compile(
    r"\\(?:u(?![0-9a-fA-F]{4})|[^\"'\\/bfnrtu])", re.DOTALL
)
_SINGLE_TO_DOUBLE: Final = re.compile(r'\\(.)|"', re.DOTALL)
_LITERALS: Final = (("true", True), ("false", False), ("null", None))
# Some chat templates (Gemma 4's) write a string as <|"|>text<|"|>, and a server whose parser
# missed the call passes those tokens on. Inside such a string a quote token followed by what
# may follow a key (':') or a value (',', '}', ']' or the end) closes it; any other one stands
# for a literal double quote.
_QUOTE_TOKEN: Final = '<|"|>'
_CLOSING_QUOTE_TOKEN: Final = {
    "key": re.compile(r'<\|"\|>(?=[ \t\n\r]*:)'),
    "value": re.compile(r'<\|"\|>(?=[ \t\n\r]*(?:[,}\]]|\Z))'),
}


@attrs.frozen
class ParsedArguments:
    """Tool-call arguments parsed from a model's text.

    :ivar arguments: the arguments object.
    :ivar repairs: the repairs that were needed, each named once, in the order they were made;
        empty when the text was a valid JSON object.
    """

    arguments: dict[str, Any]
    repairs: tuple[Repair, ...] = ()

    @property
    def repaired(self) -> bool:
        """Whether the text needed any repair."""
        return bool(self.repairs)


class ArgumentsSyntaxError(ValueError):
    """Argument text that is not a JSON object and that no conservative repair turns into one.

    :ivar problem: what was wrong, saying what was expected and what was found.
    :ivar reason: where and what, for a person or a model:
        ``"at line 1, column 8 (char 7): expected ':' after the key 'a', got '1'"``.
    :ivar position: the character offset of the problem (0-based), in the argument text, or in
        the decoded string when ``source`` says so.
    :ivar line: 1-based line of ``position``.
    :ivar column: 1-based column of ``position``.
    :ivar expected: what would have been valid at that position.
    :ivar source: ``"text"`` for the argument text itself, or ``"decoded string"`` when the
        problem is inside an object that arrived encoded as a JSON string.
    """

    def __init__(self, problem: str, *, text: str, position: int, expected: str, source: str):
        self.problem = problem
        self.position = position
        self.expected = expected
        self.source = source
        self.line = text.count("\n", 0, position) + 1
        self.column = position - (text.rfind("\n", 0, position) + 1) + 1
        where = "" if source == "text" else f" of the {source}"
        self.reason = (
            f"at line {self.line}, column {self.column} (char {position}){where}: {problem}"
        )
        super().__init__(f"invalid tool arguments {self.reason}")


def parse_arguments(text: str, *, trailing_text: bool = False) -> ParsedArguments:
    """Parse tool-call argument text into an object, repairing only well-known model mistakes.

    Valid JSON objects are returned as they are. Otherwise these repairs, and only these, are
    tried: empty or whitespace-only text (no arguments, ``{}``), a markdown code fence around
    the JSON, an object encoded as a JSON string, redundant wrapping braces (``{{…}}``),
    unquoted identifier keys, single-quoted strings, trailing commas, and a chat template's
    quote tokens (``<|"|>``) leaked around the arguments or written as string quotes. Anything
    else is refused: a truncated object, a top level that is not an object, two concatenated
    objects, Python literals, comments, raw control characters in strings.

    With ``trailing_text``, text after a complete leading object is dropped (the repair
    ``"trailing text after the object"``, at most 2048 characters), as a server that does not
    hold a model to its grammar lets it write on past the arguments. The leading object is the
    one kept: when what follows holds a second complete value (right after the object, or at
    any ``{`` after it, read with these same repairs), the arguments are refused, as that may be
    another call; two objects are never merged and a later one is never taken.

    :param text: the arguments exactly as the model produced them.
    :param trailing_text: whether text after the leading object may be dropped.
    :returns: the arguments and the repairs made.
    :raises ArgumentsSyntaxError: naming the position, what was expected and what was found.
    :raises TypeError: if ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_arguments() takes str, got {type(text).__name__}")
    repairs: list[Repair] = []
    arguments = _parse(
        text, repairs, full=text, base=0, source="text", nested=False, trailing=trailing_text
    )
    return ParsedArguments(arguments, tuple(dict.fromkeys(repairs)))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse(
    text: str,
    repairs: list[Repair],
    *,
    full: str,
    base: int,
    source: str,
    nested: bool,
    trailing: bool,
) -> dict[str, Any]:
    if not text.strip(" \t\n\r"):
        repairs.append("empty text")
        return {}
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        fence = None if nested else _FENCE.fullmatch(text)
        if fence is not None:
            repairs.append("markdown code fence")
            start = fence.start("body")
            return _parse(
                fence["body"],
                repairs,
                full=full,
                base=base + start,
                source=source,
                nested=True,
                trailing=trailing,
            )
        parser = _RelaxedParser(text, full=full, base=base, source=source, repairs=repairs)
        value = parser.parse_document(allow_string=source == "text", trailing=trailing)
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and source == "text":
        repairs.append("object encoded as a JSON string")
        return _parse(
            value,
            repairs,
            full=value,
            base=0,
            source="decoded string",
            nested=True,
            trailing=trailing,
        )
    position = base + _WHITESPACE.match(text).end()  # type: ignore[union-attr]
    raise ArgumentsSyntaxError(
        f"expected '{{' (tool arguments must be a JSON object), got {_kind(value)}",
        text=full,
        position=position,
        expected="'{'",
        source=source,
    )


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return f"the number {value!r}"


def _requote(match: re.Match[str]) -> str:
    # In a single-quoted string \' is a quote and " is a plain character.
    escaped = match.group(1)
    if escaped is None:
        return '\\"'
    return "'" if escaped == "'" else match.group()


class _RelaxedParser:
    """Recursive descent over JSON plus the repairs that parse_arguments allows."""

    def __init__(
        self, text: str, *, full: str, base: int, source: str, repairs: list[Repair]
    ) -> None:
        self.text = text
        self.full = full
        self.base = base
        self.source = source
        self.repairs = repairs
        self.pos = 0
        self.depth = 0

    def parse_document(self, *, allow_string: bool, trailing: bool = False) -> Any:
        text = self.text
        self.skip_leaked_quote_tokens()
        ch = text[self.pos : self.pos + 1]
        try:
            if ch == "{":
                value: Any = self.parse_top_object()
            elif ch in ("'", '"') and allow_string:
                value = self.parse_string()
            else:
                what = self.describe_here() if ch else "the end of the text"
                self.fail("expected '{' (tool arguments must be a JSON object), got " + what, "'{'")
        except RecursionError:
            self.fail("the arguments are nested too deeply", "less nesting")
        self.skip_leaked_quote_tokens()
        if self.pos < len(text):
            if trailing and isinstance(value, dict):
                self.drop_trailing_text()
                return value
            if text[self.pos] in "{[":
                self.fail(
                    "a second value follows the arguments object "
                    "(concatenated objects are not merged)",
                    "the end of the text",
                )
            self.fail(
                f"extra text after the arguments object: {self.describe_here()}",
                "the end of the text",
            )
        return value

    def drop_trailing_text(self) -> None:
        """Text after the leading object is dropped, unless a second complete JSON value starts
        right after it or at any ``{`` in it: that may be another call, and is refused."""
        text = self.text
        if len(text) - self.pos > _MAX_TRAILING:
            self.fail(
                f"{len(text) - self.pos} characters of text follow the arguments object "
                f"(at most {_MAX_TRAILING} are dropped)",
                "the end of the text",
            )
        start = self.pos
        while start >= 0:
            # Complete as these repairs read JSON: {b: 2} is as much a second object as {"b": 2}.
            probe = _RelaxedParser(text, full=text, base=0, source=self.source, repairs=[])
            probe.pos = start
            try:
                probe.parse_value()
            except (ArgumentsSyntaxError, RecursionError):
                start = text.find("{", start + 1)
                continue
            self.pos = start
            self.fail(
                "a second value follows the arguments object "
                "(concatenated objects are not merged, and a later one is not taken)",
                "the end of the text",
            )
        self.repairs.append("trailing text after the object")
        self.pos = len(text)

    def parse_top_object(self) -> dict[str, Any]:
        # "{{...}}": the outer braces add nothing; accepted only around the whole arguments.
        start = self.pos
        self.pos += 1
        self.skip_whitespace()
        if self.text.startswith("{", self.pos):
            self.repairs.append("redundant wrapping braces")
            inner = self.parse_top_object()
            self.skip_whitespace()
            if not self.text.startswith("}", self.pos):
                self.fail(
                    "expected '}' closing the redundant braces opened at char "
                    f"{self.base + start}, got {self.describe_here()}",
                    "'}'",
                )
            self.pos += 1
            return inner
        self.pos = start
        return self.parse_object()

    def parse_value(self) -> Any:
        text = self.text
        pos = self.pos
        ch = text[pos : pos + 1]
        if ch == "{":
            return self.parse_object()
        if ch == "[":
            return self.parse_array()
        if ch in ('"', "'"):
            return self.parse_string()
        if text.startswith(_QUOTE_TOKEN, pos):
            return self.parse_quote_token_string("value")
        number = _NUMBER.match(text, pos)
        if number is not None:
            self.pos = number.end()
            if number.group().lstrip("-") == "0" and text[self.pos : self.pos + 1].isdigit():
                self.fail("leading zeros are not allowed in JSON numbers", "',', '}' or ']'")
            if number.group(1) is None and number.group(2) is None:
                return int(number.group())
            return float(number.group())
        for word, literal in _LITERALS:
            if text.startswith(word, pos):
                self.pos = pos + len(word)
                return literal
        if not ch:
            self.fail("the text ends where a JSON value was expected (truncated?)", "a JSON value")
        word_match = _WORD.match(text, pos)
        if word_match is not None:
            word = word_match.group()
            hint = (
                "JSON literals are true, false and null"
                if word in ("True", "False", "None", "undefined", "NaN", "Infinity")
                else "unquoted strings are not repaired"
            )
            self.fail(f"expected a JSON value, got {word!r} ({hint})", "a JSON value")
        self.fail(f"expected a JSON value, got {self.describe_here()}", "a JSON value")

    def parse_object(self) -> dict[str, Any]:
        self.enter()
        text = self.text
        self.pos += 1
        result: dict[str, Any] = {}
        self.skip_whitespace()
        if text.startswith("}", self.pos):
            self.pos += 1
            self.depth -= 1
            return result
        while True:
            key = self.parse_key()
            self.skip_whitespace()
            if not text.startswith(":", self.pos):
                self.fail(f"expected ':' after the key {key!r}, got {self.describe_here()}", "':'")
            self.pos += 1
            self.skip_whitespace()
            result[key] = self.parse_value()
            if self.closed("}", "an object"):
                break
        self.depth -= 1
        return result

    def parse_array(self) -> list[Any]:
        self.enter()
        text = self.text
        self.pos += 1
        result: list[Any] = []
        self.skip_whitespace()
        if text.startswith("]", self.pos):
            self.pos += 1
            self.depth -= 1
            return result
        while True:
            self.skip_whitespace()
            result.append(self.parse_value())
            if self.closed("]", "an array"):
                break
        self.depth -= 1
        return result

    def closed(self, close: str, where: str) -> bool:
        """After a member or an item: True when ``close`` ends the container (a trailing comma
        before it is repaired), False after the comma that separates the next one."""
        text = self.text
        self.skip_whitespace()
        ch = text[self.pos : self.pos + 1]
        if ch == ",":
            self.pos += 1
            self.skip_whitespace()
            if not text.startswith(close, self.pos):
                return False
            self.repairs.append("trailing commas")
            self.pos += 1
            return True
        if ch == close:
            self.pos += 1
            return True
        expected = f"',' or '{close}'"
        if not ch:
            self.fail(
                f"the text ends inside {where}, where {expected} was expected (truncated?)",
                expected,
            )
        self.fail(f"expected {expected}, got {self.describe_here()}", expected)

    def parse_key(self) -> str:
        ch = self.text[self.pos : self.pos + 1]
        if ch in ('"', "'"):
            return self.parse_string()
        if self.text.startswith(_QUOTE_TOKEN, self.pos):
            return self.parse_quote_token_string("key")
        identifier = _IDENTIFIER.match(self.text, self.pos)
        if identifier is not None:
            self.repairs.append("unquoted keys")
            self.pos = identifier.end()
            return identifier.group()
        if not ch:
            self.fail(
                "the text ends inside an object, where a key was expected (truncated?)", "a key"
            )
        self.fail(f"expected a key, got {self.describe_here()}", "a double-quoted key")

    def parse_string(self) -> str:
        text = self.text
        start = self.pos
        quote = text[start]
        end = _STRING_BODY[quote].match(text, start + 1).end()  # type: ignore[union-attr]
        closing = text[end : end + 1]
        if closing != quote:
            self.pos = end
            if not closing or (closing == "\\" and end + 1 == len(text)):
                self.fail(
                    f"the text ends inside the string opened at char {self.base + start} "
                    "(truncated?)",
                    "a closing quote",
                )
            self.fail(
                f"control character {closing!r} inside a string (it must be escaped)",
                "an escaped character",
            )
        body = text[start + 1 : end]
        if quote == "'":
            self.repairs.append("single-quoted strings")
            body = _SINGLE_TO_DOUBLE.sub(_requote, body)
        try:
            value: str = json.loads(f'"{body}"')
        except json.JSONDecodeError as exc:
            if quote == '"':
                # json reports a bad \\u escape at its "u"; point at the backslash.
                self.pos = start + exc.pos
                if text[self.pos] != "\\" and text[self.pos - 1] == "\\":
                    self.pos -= 1
            else:
                bad = _BAD_SINGLE_QUOTED_ESCAPE.search(text, start + 1, end)
                self.pos = start if bad is None else bad.start()
            length = 6 if text.startswith("\\u", self.pos) else 2
            escape = text[self.pos : min(self.pos + length, end)]
            self.fail(
                f"invalid escape {escape!r} in a string "
                '(valid: \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)',
                "a valid escape",
            )
        self.pos = end + 1
        return value

    def parse_quote_token_string(self, role: Literal["key", "value"]) -> str:
        """A string written between chat-template quote tokens; its text is taken as it is."""
        start = self.pos
        body_start = start + len(_QUOTE_TOKEN)
        closing = _CLOSING_QUOTE_TOKEN[role].search(self.text, body_start)
        if closing is None:
            self.pos = len(self.text)
            self.fail(
                f"the text ends inside the string opened with {_QUOTE_TOKEN} at char "
                f"{self.base + start} (truncated?)",
                f"a closing {_QUOTE_TOKEN}",
            )
        self.repairs.append("template quote tokens")
        self.pos = closing.end()
        return self.text[body_start : closing.start()].replace(_QUOTE_TOKEN, '"')

    def skip_leaked_quote_tokens(self) -> None:
        """Quote tokens around the whole arguments, as a template's string delimiters leak."""
        self.skip_whitespace()
        while self.text.startswith(_QUOTE_TOKEN, self.pos):
            self.repairs.append("template quote tokens")
            self.pos += len(_QUOTE_TOKEN)
            self.skip_whitespace()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            self.fail(f"the arguments are nested deeper than {_MAX_DEPTH} levels", "less nesting")

    def skip_whitespace(self) -> None:
        self.pos = _WHITESPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def describe_here(self) -> str:
        snippet = self.text[self.pos : self.pos + 12]
        if not snippet:
            return "the end of the text"
        return repr(snippet[0]) if len(snippet) == 1 else f"{snippet[0]!r} (in {snippet!r})"

    def fail(self, problem: str, expected: str) -> NoReturn:
        raise ArgumentsSyntaxError(
            problem,
            text=self.full,
            position=self.base + self.pos,
            expected=expected,
            source=self.source,
        )
