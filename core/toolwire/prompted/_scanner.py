"""Reading a model's text into visible text, thinking and tool calls: whole, or as it streams.

One scanner serves both: :func:`parse_tool_calls` feeds the whole text and finishes, the prompted
adapter feeds stream deltas. So a streamed turn and the same turn read at once give the same calls,
with the same ids.
"""

from __future__ import annotations

import functools
import json
import re
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeAlias

import attrs

from ..messages import AssistantPart, TextPart, ThinkingPart, ToolCall
from ..tools._spec import FunctionSpec
from . import _jsoncalls, _ptype, _typescript, _xml
from ._dialect import Dialect, DialectChoice, tool_dialects
from ._found import Found
from ._schema import parameter_names

_TEXT: Final = 0
_THINK: Final = 1
_TAG: Final = 2
_XML: Final = 3
_PTYPE: Final = 4
_BARE: Final = 5

# A call mode looks again only when one of these characters has arrived: nothing else can end it.
_TRIGGERS: Final = {_TAG: ">\n", _XML: ">\n", _PTYPE: ")]\n", _BARE: "}]\n"}

_TOOL_CALL_OPEN: Final = "<tool_call>"
_TOOL_CALL_CLOSE: Final = "</tool_call>"
_FENCE_CLOSE: Final = re.compile(r"^[ \t]*```[ \t]*(?:\r?\n|\Z)", re.M)
_FENCE_CLOSE_HERE: Final = re.compile(r"```[ \t]*(?:\r?\n|\Z)")
_WHITESPACE: Final = re.compile(r"\s*")
_QUOTE_OR_TAG: Final = re.compile(r"[\"'<]")
_QUOTED_REST: Final = {
    '"': re.compile(r'(?:[^"\\]|\\.)*"', re.S),
    "'": re.compile(r"(?:[^'\\]|\\.)*'", re.S),
}
_CALL_START: Final = re.compile(r"\[?\s*[A-Za-z_]\w*\s*\(")
_BLANK_LINES: Final = re.compile(r"\A(?:[ \t]*\r?\n)+")

PROVIDER_DATA_KEY: Final = "prompted"
"""The key of :attr:`ToolCall.provider_data` under which a prompted call keeps its original text."""


# -- pieces -----------------------------------------------------------------------------------


@attrs.frozen
class TextPiece:
    """Visible text, as soon as it is known not to belong to a call."""

    text: str


@attrs.frozen
class ThinkingPiece:
    """Text inside ``<think>…</think>``."""

    text: str


@attrs.frozen
class CallStartedPiece:
    """A call began (its name is known); it completes with a :class:`CallPiece` of the same id."""

    index: int
    call_id: str
    name: str


@attrs.frozen
class CallPiece:
    """A call is complete: valid, or invalid with its raw text and the reason."""

    index: int
    call: ToolCall


Piece: TypeAlias = TextPiece | ThinkingPiece | CallStartedPiece | CallPiece


@attrs.frozen(kw_only=True)
class ParsedTurn:
    """A model's text read for tool calls.

    :ivar text_without_calls: the visible text, calls and thinking taken out.
    :ivar calls: the calls in order, invalid ones included (``arguments`` None, ``raw_arguments``
        the text as written, ``invalid_reason`` why it could not be read).
    :ivar parts: thinking, text and calls in the order they came, for an assistant turn.
    """

    text_without_calls: str
    calls: tuple[ToolCall, ...]
    parts: tuple[AssistantPart, ...]

    @property
    def thinking(self) -> str:
        """The text of the ``<think>`` blocks, joined."""
        return "".join(p.text for p in self.parts if isinstance(p, ThinkingPart))


def call_fingerprint(name: str, arguments: Mapping[str, Any] | None) -> str:
    """A stable text for a call's name and arguments (to tell whether a call was changed)."""
    return name + "\x00" + json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


# -- patterns ---------------------------------------------------------------------------------


@attrs.frozen
class _Patterns:
    tags: re.Pattern[str]
    lines: re.Pattern[str]
    call_openers: re.Pattern[str]
    partial: re.Pattern[str]


def _alternation(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))


@functools.lru_cache(maxsize=64)
def _patterns(tools: tuple[tuple[str, Dialect], ...], bare_json: bool) -> _Patterns:
    # Searches start with a literal ("<", or the newline before a line), so the regex engine
    # skips ahead to candidates instead of trying every alternative at every character.
    # ``tools`` pairs each offered name with its dialect: each tool is read in its own.
    xml_names = [name for name, dialect in tools if dialect == "xml"]
    list_names = [name for name, dialect in tools if dialect in ("ptype", "python")]
    ts_names = [name for name, dialect in tools if dialect == "typescript"]
    tags = [
        r"(?P<think_open>(?P<think_tag>think|thinking)>)",
        r"(?P<think_close>/(?:think|thinking)>)",
        r"(?P<tool_call>tool_call>)",
        r"(?P<stray_close>/tool_call>)",
    ]
    lines = [r"(?P<fence>[ \t]*```[\w+.-]*[ \t]*\r?\n)"]
    calls = [rf"(?P<tool_call>{re.escape(_TOOL_CALL_OPEN)})"]
    tag_literals = ["<think>", "<thinking>", "</think>", "</thinking>"]
    tag_literals += [_TOOL_CALL_OPEN, _TOOL_CALL_CLOSE]
    tag_prefixes = {lit[:i] for lit in tag_literals for i in range(1, len(lit))}
    line_partials = [r"^[ \t]*`{1,3}[\w+.-]*[ \t]*\r?\Z"]
    if xml_names:
        xml = rf"(?P<xml_name>{_alternation(xml_names)})(?=[\s/>])"
        tags.append(rf"(?P<xml>{xml})")
        calls.append(rf"(?P<xml><{xml})")
        tag_prefixes |= {("<" + n)[:i] for n in xml_names for i in range(1, len(n) + 2)}
    if list_names or ts_names:
        # A call on a line of its own; ptype and python also read a [list, of(), calls()].
        shapes = []
        if list_names:
            shapes.append(rf"(?P<ptype_list>\[[ \t]*)?(?P<ptype_name>{_alternation(list_names)})")
        if ts_names:
            shapes.append(rf"(?P<ts_name>{_alternation(ts_names)})")
        ptype = rf"[ \t]*`*[ \t]*(?:{'|'.join(shapes)})[ \t]*\("
        lines.append(rf"(?P<ptype>{ptype})")
        calls.append(rf"(?P<ptype>^{ptype})")
        names = [*list_names, *ts_names]
        prefixes = _alternation(n[:i] for n in names for i in range(1, len(n) + 1))
        line_partials.append(rf"^[ \t]*`*[ \t]*(?:\[[ \t]*)?(?:{prefixes})?[ \t]*\Z")
    if bare_json:
        bare = r"""[ \t]*\{\s*["']name["']\s*:"""
        lines.append(rf"(?P<bare>{bare})")
        calls.append(rf"(?P<bare>^{bare})")
        line_partials.append(r"""^[ \t]*\{\s*(?:["'](?:n(?:a(?:m(?:e(?:["']\s*)?)?)?)?)?)?\Z""")
    partial = "|".join([rf"(?:{_alternation(tag_prefixes)})\Z", *line_partials])
    return _Patterns(
        tags=re.compile("<(?:" + "|".join(tags) + ")"),
        lines=re.compile("\n(?:" + "|".join(lines) + ")"),
        call_openers=re.compile("|".join(calls), re.M),
        partial=re.compile(partial, re.M),
    )


# -- the scanner ------------------------------------------------------------------------------


class TurnScanner:
    """Reads a model's text, fed whole or in deltas, into pieces and finally a :class:`ParsedTurn`.

    Text that might still turn out to start a call is held back until it is known; everything
    else comes out as soon as it arrives. Call ids come from ``new_id(index)`` (``index`` counts
    the calls of the turn from 0).
    """

    def __init__(
        self,
        functions: Sequence[FunctionSpec],
        dialect: DialectChoice,
        *,
        new_id: Callable[[int], str] | None = None,
    ) -> None:
        choice = tool_dialects(dialect)
        self._default = choice.default
        self._functions = {f.name: f for f in functions}
        self._dialects = {name: choice.of(name) for name in self._functions}
        self._orders: dict[str, tuple[str, ...]] = {}
        bare_json = "json" in choice.in_use(self._functions)
        self._patterns = _patterns(tuple(sorted(self._dialects.items())), bare_json)
        if new_id is None:
            prefix = secrets.token_hex(3)
            new_id = lambda index: f"call_{prefix}_{index}"  # noqa: E731
        self._new_id = new_id
        self._ids: dict[int, str] = {}
        # A newline in front makes the first line start like every other line.
        self._buf = "\n"
        self._pos = 1
        self._final = False
        self._mode = _TEXT
        self._checked = 0
        self._out: list[Piece] = []
        self._parts: list[AssistantPart] = []
        self._count = 0
        self._seen_think = False
        self._think_close = ""
        self._text_fence_open = False
        self._fenced = False
        self._fence_after_call = False
        self._call_start = 0
        self._body_start = 0
        self._name = ""
        self._announced: int | None = None
        self._pending: list[str] = []
        self._pending_kind = _TEXT
        self._steps: dict[int, Callable[[], bool]] = {
            _TEXT: self._step_text,
            _THINK: self._step_think,
            _TAG: self._step_tag,
            _XML: self._step_xml,
            _PTYPE: self._step_ptype,
            _BARE: self._step_bare,
        }

    # -- feeding ---------------------------------------------------------------------------------

    def feed(self, text: str) -> list[Piece]:
        """Read more text; returns the pieces now known."""
        if self._final:
            raise RuntimeError("feed() after finish(): the turn is already read")
        self._buf += text
        return self._run()

    def finish(self) -> list[Piece]:
        """The output ended: read what is left (an unclosed final call still counts)."""
        if not self._final:
            self._final = True
            return self._run()
        return []

    def result(self) -> ParsedTurn:
        """The whole turn read (call :meth:`finish` first)."""
        if not self._final:
            raise RuntimeError("result() before finish()")
        self._flush_pending()
        parts: list[AssistantPart] = []
        for part in self._parts:
            if isinstance(part, TextPart):
                text = _BLANK_LINES.sub("", part.text).rstrip()
                if text:
                    parts.append(TextPart(text))
            else:
                parts.append(part)
        texts = [p.text for p in parts if isinstance(p, TextPart)]
        calls = tuple(p for p in parts if isinstance(p, ToolCall))
        return ParsedTurn(text_without_calls="\n".join(texts), calls=calls, parts=tuple(parts))

    def _run(self) -> list[Piece]:
        steps = self._steps
        while True:
            mode = self._mode
            if mode == _TAG and self._announced is None:
                guess = _NAME_IN_BODY.match(self._buf, self._body_start)
                if guess:
                    self._announce(guess.group(1))
            if mode in _TRIGGERS and not self._final:
                fresh = self._buf[self._checked :]
                self._checked = len(self._buf)
                if not any(ch in fresh for ch in _TRIGGERS[mode]):
                    break
            if not steps[mode]():
                break
        out, self._out = self._out, []
        return out

    # -- output ----------------------------------------------------------------------------------

    def _text(self, text: str) -> None:
        if text:
            self._out.append(TextPiece(text))
            self._add_pending(_TEXT, text)

    def _thinking(self, text: str) -> None:
        if text:
            self._out.append(ThinkingPiece(text))
            self._add_pending(_THINK, text)

    def _add_pending(self, kind: int, text: str) -> None:
        if self._pending_kind != kind:
            self._flush_pending()
            self._pending_kind = kind
        self._pending.append(text)

    def _flush_pending(self) -> None:
        """Turn the text gathered so far into one part (text runs arrive in many pieces)."""
        if self._pending:
            text = "".join(self._pending)
            part = TextPart(text) if self._pending_kind == _TEXT else ThinkingPart(text=text)
            self._parts.append(part)
            self._pending = []

    def _order(self, name: str) -> tuple[str, ...] | None:
        """The positional parameter order of the function ``name`` (None when not offered)."""
        function = self._functions.get(name)
        if function is None:
            return None
        if name not in self._orders:
            self._orders[name] = parameter_names(function.parameters, function.parameter_order)
        return self._orders[name]

    def _id(self, index: int) -> str:
        if index not in self._ids:
            self._ids[index] = self._new_id(index)
        return self._ids[index]

    def _announce(self, name: str) -> None:
        if self._announced is None and name:
            self._announced = self._count
            self._count += 1
            self._out.append(CallStartedPiece(self._announced, self._id(self._announced), name))

    def _complete(self, found: list[Found], raw: str) -> None:
        replay = len(found) == 1
        for number, item in enumerate(found):
            if number == 0 and self._announced is not None:
                index = self._announced
            else:
                index = self._count
                self._count += 1
                self._out.append(CallStartedPiece(index, self._id(index), item.name))
            call = self._make_call(item, index, raw, replay=replay)
            self._out.append(CallPiece(index, call))
            self._flush_pending()
            self._parts.append(call)
        self._announced = None
        self._fence_after_call = self._fenced
        self._mode = _TEXT

    def _make_call(self, found: Found, index: int, raw: str, *, replay: bool) -> ToolCall:
        data = None
        if replay:
            data = {
                PROVIDER_DATA_KEY: {
                    "dialect": self._dialects.get(found.name, self._default),
                    "text": raw.strip(),
                    "fingerprint": call_fingerprint(found.name, found.arguments),
                }
            }
        if found.arguments is not None and found.reason is None:
            return ToolCall(
                id=self._id(index), name=found.name, arguments=found.arguments, provider_data=data
            )
        return ToolCall(
            id=self._id(index),
            name=found.name,
            arguments=None,
            raw_arguments=raw.strip(),
            invalid_reason=found.reason or "the call could not be read",
            provider_data=data,
        )

    def _begin(self, start: int, mode: int) -> None:
        self._text(self._buf[self._pos : start])
        self._pos = start
        self._call_start = start
        self._mode = mode
        self._checked = start

    # -- text ------------------------------------------------------------------------------------

    def _safe_end(self, pos: int) -> int:
        match = self._patterns.partial.search(self._buf, pos)
        return match.start() if match else len(self._buf)

    def _line_start(self, index: int) -> int:
        return self._buf.rfind("\n", 0, index) + 1

    def _call_opener_at(self, index: int) -> re.Match[str] | None:
        start = self._line_start(index)
        at = start if not self._buf[start:index].strip() else index
        return self._patterns.call_openers.match(self._buf, at)

    def _could_open_at(self, index: int) -> bool:
        match = self._patterns.partial.search(self._buf, self._line_start(index))
        return match is not None and match.start() <= index

    def _step_text(self) -> bool:
        buf = self._buf
        if self._fence_after_call and not self._close_call_fence():
            return False
        match = self._patterns.tags.search(buf, self._pos)
        line = self._patterns.lines.search(buf, self._pos - 1, match.start() if match else len(buf))
        if line is not None:
            match, start = line, line.start() + 1
        elif match is not None:
            start = match.start()
        else:
            end = len(buf) if self._final else self._safe_end(self._pos)
            self._text(buf[self._pos : end])
            self._pos = end
            return False
        groups = match.groupdict()
        if groups.get("think_open"):
            self._text(buf[self._pos : start])
            self._mode = _THINK
            self._think_close = f"</{match['think_tag']}>"
            self._seen_think = True
            self._pos = match.end()
            return True
        if groups.get("think_close"):
            if self._seen_think:
                self._text(buf[self._pos : match.end()])
            else:
                # The chat template opened <think> itself: what came before was reasoning.
                self._pending = []
                self._parts = [ThinkingPart(text=buf[1:start])] if buf[1:start].strip() else []
                if buf[self._pos : start]:
                    self._out.append(ThinkingPiece(buf[self._pos : start]))
                self._seen_think = True
            self._pos = match.end()
            return True
        if groups.get("stray_close"):
            self._text(buf[self._pos : start])
            self._pos = match.end()
            return True
        if groups.get("fence"):
            return self._step_fence(start, match.end())
        if groups.get("tool_call"):
            self._begin(start, _TAG)
            self._body_start = match.end()
            return True
        if groups.get("xml"):
            self._begin(start, _XML)
            self._name = groups["xml_name"]
            return True
        if groups.get("ptype"):
            self._begin(start, _PTYPE)
            self._name = groups.get("ptype_name") or groups["ts_name"]
            listed = groups.get("ptype_list")
            bracket = match.start("ptype_list") if listed else match.end() - 1
            self._body_start = bracket
            return True
        self._begin(start, _BARE)
        self._body_start = buf.index("{", start)
        return True

    def _close_call_fence(self) -> bool:
        """After a call that came inside a code fence: drop the fence's closing line.

        Returns False to wait for more text.
        """
        buf = self._buf
        k = _WHITESPACE.match(buf, self._pos).end()  # type: ignore[union-attr]
        if k >= len(buf) and not self._final:
            return False
        if buf.startswith("```", k) or (not self._final and "```".startswith(buf[k:])):
            end = _FENCE_CLOSE_HERE.match(buf, k)
            if end is None and not self._final and "\n" not in buf[k:]:
                return False
            self._fenced = self._fence_after_call = False
            if end is not None:
                self._pos = end.end()
            return True
        elif not self._final and self._could_open_at(k):
            return False
        if self._call_opener_at(k) is None:
            self._fenced = False
        self._fence_after_call = False
        return True

    def _step_fence(self, start: int, after: int) -> bool:
        buf = self._buf
        if self._text_fence_open:
            self._text(buf[self._pos : after])
            self._text_fence_open = False
            self._pos = after
            return True
        k = _WHITESPACE.match(buf, after).end()  # type: ignore[union-attr]
        waiting = k >= len(buf) or self._could_open_at(k)
        opener = self._call_opener_at(k) if k < len(buf) else None
        if opener is not None and not opener.groupdict().get("bare"):
            # A call wrapped in a code fence: the fence is packaging, not text.
            self._text(buf[self._pos : start])
            self._fenced = True
            self._pos = opener.start()
            return True
        if waiting and not self._final:
            self._text(buf[self._pos : start])
            self._pos = start
            return False
        if k < len(buf) and buf[k] == "{":
            close = _FENCE_CLOSE.search(buf, k)
            if close is None and not self._final:
                self._text(buf[self._pos : start])
                self._pos = start
                return False
            content_end, end = (close.start(), close.end()) if close else (len(buf), len(buf))
            found = _jsoncalls.read_calls(buf[k:content_end])
            if all(f.name in self._functions for f in found):
                self._text(buf[self._pos : start])
                self._complete(found, buf[start:end])
                self._fence_after_call = False
                self._pos = end
                return True
        self._text(buf[self._pos : after])
        self._text_fence_open = True
        self._pos = after
        return True

    # -- thinking --------------------------------------------------------------------------------

    def _step_think(self) -> bool:
        buf, close_tag = self._buf, self._think_close
        close = buf.find(close_tag, self._pos)
        if close < 0:
            end = len(buf)
            if not self._final:
                for size in range(min(len(close_tag) - 1, len(buf) - self._pos), 0, -1):
                    if close_tag.startswith(buf[end - size :]):
                        end -= size
                        break
            self._thinking(buf[self._pos : end])
            self._pos = end
            if self._final:
                self._mode = _TEXT
            return False
        self._thinking(buf[self._pos : close])
        self._pos = close + len(close_tag)
        self._mode = _TEXT
        return True

    # -- calls -----------------------------------------------------------------------------------

    def _step_tag(self) -> bool:
        buf = self._buf
        end = self._tool_call_end()
        if end is None:
            if not self._final:
                return False
            plain = buf.find(_TOOL_CALL_CLOSE, self._body_start)
            end = (plain, plain + len(_TOOL_CALL_CLOSE)) if plain >= 0 else (len(buf), len(buf))
        body = buf[self._body_start : end[0]]
        self._complete(self._read_tag_body(body), buf[self._call_start : end[1]])
        self._pos = end[1]
        return True

    def _tool_call_end(self) -> tuple[int, int] | None:
        """Where the open ``<tool_call>`` block ends: its closing tag, or the next block's start.

        In a JSON body, tags inside quoted strings do not count.
        """
        buf, n = self._buf, len(self._buf)
        k = _WHITESPACE.match(buf, self._body_start).end()  # type: ignore[union-attr]
        if buf.startswith("```", k):
            newline = buf.find("\n", k)
            if newline < 0:
                return None
            k = _WHITESPACE.match(buf, newline).end()  # type: ignore[union-attr]
        if k < n and buf[k] in "{[":
            i = k
            while True:
                found = _QUOTE_OR_TAG.search(buf, i)
                if found is None:
                    return None
                i = found.end()
                if found.group() != "<":
                    rest = _QUOTED_REST[found.group()].match(buf, i)
                    if rest is None:
                        return None
                    i = rest.end()
                    continue
                at = i - 1
                if buf.startswith(_TOOL_CALL_CLOSE, at):
                    return at, at + len(_TOOL_CALL_CLOSE)
                if buf.startswith(_TOOL_CALL_OPEN, at):
                    return at, at
                tail = buf[at:]
                if _TOOL_CALL_CLOSE.startswith(tail) or _TOOL_CALL_OPEN.startswith(tail):
                    return None
        close = buf.find(_TOOL_CALL_CLOSE, self._body_start)
        following = buf.find(_TOOL_CALL_OPEN, self._body_start)
        if following >= 0 and (close < 0 or following < close):
            return following, following
        return (close, close + len(_TOOL_CALL_CLOSE)) if close >= 0 else None

    def _read_tag_body(self, body: str) -> list[Found]:
        text = _jsoncalls.strip_fence(body.strip()).strip()
        if not text:
            return [Found("", None, "an empty <tool_call> block; write the call inside it")]
        if text[0] in "{[":
            return _jsoncalls.read_calls(text)
        if text[0] == "<":
            elements, stray = _xml.split_elements(text)
            if elements and not stray.strip():
                return [self._xml_found(e.tag, e.attributes, e.content) for e in elements]
        if _CALL_START.match(text):
            return self._read_call_text(text)
        shown = text if len(text) <= 80 else text[:79] + "…"
        return [
            Found(
                "",
                None,
                f"could not read a tool call from {shown!r}; write "
                '{"name": …, "arguments": {…}} inside <tool_call>',
            )
        ]

    def _xml_found(self, name: str, attributes: Mapping[str, str], body: str | None) -> Found:
        spec = self._functions.get(name)
        parameters = spec.parameters if spec is not None else {}
        try:
            return Found(name, _xml.read_arguments(attributes, body, parameters), None)
        except _xml.XmlArgumentsError as exc:
            return Found(name, None, str(exc))

    def _step_xml(self) -> bool:
        buf, start, name = self._buf, self._call_start, self._name
        tag = _xml.OPEN_TAG.match(buf, start)
        if tag is None:
            rest = buf[start:]
            if not self._final and ">" not in rest and "\n" not in rest:
                return False
            # Not a tag after all ("<search for …"): plain text.
            self._mode = _TEXT
            self._text(buf[start : start + 1 + len(name)])
            self._pos = start + 1 + len(name)
            return True
        self._announce(name)
        attributes = _xml.attributes_of(tag["attributes"])
        if tag["empty"]:
            self._complete([self._xml_found(name, attributes, None)], tag.group())
            self._pos = tag.end()
            return True
        close = _xml.find_close(buf, name, tag.end())
        if close is None:
            if not self._final:
                return False
            close = (len(buf), len(buf))
        found = self._xml_found(name, attributes, buf[tag.end() : close[0]])
        self._complete([found], buf[start : close[1]])
        self._pos = close[1]
        return True

    def _line_end_after(self, end: int) -> int | None:
        """The end of the line a call ends on, or None to wait; -1 when text follows the call."""
        buf = self._buf
        newline = buf.find("\n", end)
        if newline < 0:
            if not self._final:
                return None
            newline = len(buf)
        if buf[end:newline].strip(" \t\r`;"):
            return -1
        return newline

    def _read_call_text(self, source: str) -> list[Found]:
        """The calls in ``name(…)`` text, read in the dialect of the tool it names (ptype's
        reader for a tool that is not called in a call dialect)."""
        dialect = self._dialects.get(_ptype.name_at_start(source))
        if dialect == "typescript":
            return [_typescript.read_call(source, self._order)]
        if dialect == "python":
            return _ptype.read_python_calls(source, self._order)
        return _ptype.read_calls(source, self._order)

    def _step_ptype(self) -> bool:
        buf = self._buf
        if self._dialects.get(self._name) == "typescript":
            end = _typescript.find_call_end(buf, self._body_start)
        else:
            end = _ptype.find_bracket_end(buf, self._body_start)
        if end is None:
            if not self._final:
                return False
            found = [Found(self._name, None, "the call is not closed: the output ended inside it")]
            self._complete(found, buf[self._call_start :])
            self._pos = len(buf)
            return True
        line_end = self._line_end_after(end)
        if line_end is None:
            return False
        if line_end < 0:
            # Text follows on the same line: a mention in prose, not a call.
            self._mode = _TEXT
            self._text(buf[self._call_start : end])
            self._pos = end
            return True
        source = buf[self._body_start if buf[self._body_start] == "[" else self._name_start() : end]
        self._complete(self._read_call_text(source), buf[self._call_start : end])
        self._pos = line_end
        return True

    def _is_json_tool(self, name: str) -> bool:
        return self._dialects.get(name) == "json"

    def _name_start(self) -> int:
        return self._buf.index(self._name, self._call_start)

    def _step_bare(self) -> bool:
        buf, brace = self._buf, self._body_start
        end = _jsoncalls.find_json_end(buf, brace)
        if end is None and not self._final:
            return False
        line_end = self._line_end_after(end) if end is not None else len(buf)
        if line_end is None:
            return False
        found = _jsoncalls.read_calls(buf[brace : end if end is not None else len(buf)])
        if end is not None and line_end >= 0 and all(self._is_json_tool(f.name) for f in found):
            self._complete(found, buf[self._call_start : end])
            self._pos = line_end
            return True
        if end is None and len(found) == 1 and self._is_json_tool(found[0].name):
            reason = "the call is not closed: the output ended inside it"
            self._complete([Found(found[0].name, None, reason)], buf[self._call_start :])
            self._pos = len(buf)
            return True
        stop = end if end is not None else len(buf)
        self._mode = _TEXT
        self._text(buf[self._call_start : stop])
        self._pos = stop
        return True


_NAME_IN_BODY: Final = re.compile(
    r"""\s*(?:```[\w+.-]*\s*)?(?:\{\s*["']name["']\s*:\s*["']([A-Za-z_][\w.-]{0,127})["'])"""
)


def parse_tool_calls(
    text: str,
    functions: Sequence[FunctionSpec],
    dialect: DialectChoice,
    *,
    new_id: Callable[[int], str] | None = None,
) -> ParsedTurn:
    """Read a model's text into visible text, thinking and tool calls.

    Robust to what small models write: text before and after calls, several calls, calls in code
    fences, single quotes and trailing commas, an unclosed last call at the end of the output.
    Calls inside ``<think>`` blocks are not calls (they stay in a :class:`ThinkingPart`). A
    ``<tool_call>`` block is read in any dialect. What cannot be read becomes an invalid call
    with its raw text and the reason, never nothing.

    :param text: the model's output.
    :param functions: the functions offered (names, schemas for the xml dialect's types, and
        parameter order for positional arguments).
    :param dialect: ``json``, ``xml``, ``ptype``, ``python`` or ``typescript``, or a
        :class:`ToolDialects` giving each tool its own (each tool's calls are read in its
        dialect; a ``<tool_call>`` block in any).
    :param new_id: makes the id of the call with this index (from 0); random ids by default.
    """
    scanner = TurnScanner(functions, dialect, new_id=new_id)
    scanner.feed(text)
    scanner.finish()
    return scanner.result()
