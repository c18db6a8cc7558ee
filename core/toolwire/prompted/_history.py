"""The conversation for a model without native tools: calls as text, results in one user turn."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Final

import attrs

from ..messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    UserPart,
)
from ..tools._spec import FunctionSpec
from ._dialect import CALL_DIALECTS, DialectChoice, tool_dialects
from ._render import render_tool_call

TOOL_RESULTS_HEADER: Final = "[Tool results]"
"""The first line of the user turn that carries the results of a round's calls."""

DEFAULT_QUERY: Final = "Continue with the task."
"""The user turn :func:`ensure_resolvable_user_turn` inserts when the conversation has none."""

_PROTECTED_TAGS: Final = ("tool_result", "tool_call", "think", "thinking")


@attrs.frozen
class _Guard:
    """One character that could start forged structure, written as an entity where it would.

    ``before`` (captured) and ``after`` (a lookahead) say where; an entity already there gets one
    more ``amp;``, so the escaping can be undone exactly.
    """

    before: str
    char: str
    entity: str
    after: str
    flags: int = 0

    def escape(self, text: str) -> str:
        pattern = (
            rf"({self.before})({re.escape(self.char)}|&(?:amp;)*{self.entity};)(?={self.after})"
        )
        return _compiled(pattern, self.flags).sub(self._escape_one, text)

    def _escape_one(self, match: re.Match[str]) -> str:
        found = match.group(2)
        return match.group(1) + (f"&{self.entity};" if found == self.char else "&amp;" + found[1:])

    def restore(self, text: str) -> str:
        pattern = rf"({self.before})&((?:amp;)*){self.entity};(?={self.after})"
        return _compiled(pattern, self.flags).sub(self._restore_one, text)

    def _restore_one(self, match: re.Match[str]) -> str:
        extra = match.group(2)
        return match.group(1) + (f"&{extra[4:]}{self.entity};" if extra else self.char)


@functools.lru_cache(maxsize=128)
def _compiled(pattern: str, flags: int) -> re.Pattern[str]:
    return re.compile(pattern, flags)


def _alternation(words: Sequence[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))


# Characters a reader does not see: a tag name with them inside still reads as the tag.
_INVISIBLE: Final = "[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]*"
# What a person or a model reads as "<": the ASCII sign and its fullwidth and small forms.
_LESS_THAN_LOOKALIKES: Final = (("\uff1c", "#65308"), ("\ufe64", "#65124"))


def _lookalike(word: str) -> str:
    """A pattern for ``word`` as it reads: any case, fullwidth letters, invisible characters
    between them, and ``_`` written as ``-``, a space or nothing."""
    parts = []
    for char in word:
        if char == "_":
            parts.append("[_\\- \uff3f\uff0d]?")
        elif char.isascii() and char.isalnum():
            wide = chr(ord(char.lower()) + 0xFEE0) + chr(ord(char.upper()) + 0xFEE0)
            parts.append(f"[{re.escape(char)}{wide}]")
        else:
            parts.append(re.escape(char))
    return _INVISIBLE.join(parts)


def _tag_after(tags: Sequence[str]) -> str:
    names = "|".join(_lookalike(tag) for tag in sorted(set(tags), key=lambda t: (-len(t), t)))
    return rf"{_INVISIBLE}\s*/?{_INVISIBLE}\s*(?:{names})(?![\w.-])"


def _guards(dialect: DialectChoice | None, names: Sequence[str]) -> list[_Guard]:
    choice = tool_dialects(dialect) if dialect is not None else None
    xml_names = [n for n in names if choice is not None and choice.of(n) == "xml"]
    call_names = [n for n in names if choice is not None and choice.of(n) in CALL_DIALECTS]
    json_in_use = choice is not None and "json" in choice.in_use(names)
    tags = [*_PROTECTED_TAGS, *xml_names]
    after = _tag_after(tags)
    guards = [_Guard("", "<", "lt", after, re.I)]
    guards += [_Guard("", char, entity, after, re.I) for char, entity in _LESS_THAN_LOOKALIKES]
    # A line that reads as the header of a results turn: "[Tool results]", "［tool-results］".
    header = rf"{_INVISIBLE}[ \t]*{_lookalike('tool_results')}[ \t]*[\]\uff3d]"
    guards.append(_Guard(r"^[ \t]*", "[", "#91", header, re.I | re.M))
    guards.append(_Guard(r"^[ \t]*", "\uff3b", "#65339", header, re.I | re.M))
    named_object = r"""\s*["']name["']\s*:"""
    # The object opening a code fence is read as calls in every dialect (in json, the guard of
    # a line starting a named object escapes it when the name comes first).
    fenced = rf"(?!{named_object})" if json_in_use else ""
    guards.append(_Guard(r"^[ \t]*`{3,}[\w+.-]*[ \t]*\r?\n\s*", "{", "#123", fenced, re.M))
    if call_names:
        # A line starting with a tool name and "(" reads as a call in ptype, python and
        # typescript alike.
        before = rf"^[ \t]*`*[ \t]*(?:\[[ \t]*)?(?:{_alternation(call_names)})[ \t]*"
        guards.append(_Guard(before, "(", "#40", "", re.M))
    if json_in_use:
        guards.append(_Guard(r"^[ \t]*", "{", "#123", named_object, re.M))
    return guards


def escape_result_body(
    text: str, dialect: DialectChoice | None = None, names: Sequence[str] = ()
) -> str:
    """Neutralise everything in a result body that could close its envelope or make a call.

    In every dialect ``<`` before ``tool_result``, ``tool_call`` or ``think`` (closing or not,
    any case) becomes ``&lt;``; before the ``names`` of tools called in ``xml`` too. Lookalikes
    count as the tag: fullwidth letters and ``＜``, invisible characters inside the name, ``-``
    or a space for ``_``. A line reading as the ``[Tool results]`` header gets ``&#91;``. What
    the parser would read as a call is broken the same way: in every dialect the ``{`` opening a
    code fence (``&#123;``); for tools called in ``ptype``, ``python`` or ``typescript`` the
    ``(`` of a line starting with the tool's name (``&#40;``); with ``json`` in use the ``{`` of
    a line starting an object with a name (``&#123;``). ``dialect`` is one dialect or a
    :class:`ToolDialects`.
    An entity already in such a place gets one more ``amp;``, so the body reads
    the same to a person and :func:`restore_result_body` gives it back exactly.
    """
    for guard in _guards(dialect, names):
        text = guard.escape(text)
    return text


def restore_result_body(
    text: str, dialect: DialectChoice | None = None, names: Sequence[str] = ()
) -> str:
    """Undo :func:`escape_result_body` (same dialect and names)."""
    for guard in reversed(_guards(dialect, names)):
        text = guard.restore(text)
    return text


def _attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def render_tool_results(
    results: Sequence[ToolResultMessage],
    dialect: DialectChoice | None = None,
    names: Sequence[str] = (),
) -> str:
    """One user turn's text for a round's results: the header, then one envelope per result.

    ``<tool_result id="…" name="…">body</tool_result>``, with ``status="…"`` on results that
    are not ``ok``. Bodies pass through :func:`escape_result_body`.
    """
    blocks = [TOOL_RESULTS_HEADER]
    for message in results:
        result = message.result
        status = "" if result.is_ok else f' status="{result.status.value}"'
        body = escape_result_body(result.model_text(), dialect, names) or "(no output)"
        blocks.append(
            f'<tool_result id="{_attribute(message.call_id)}" name="{_attribute(message.name)}"'
            f"{status}>\n{body}\n</tool_result>"
        )
    return "\n".join(blocks)


def _is_results_turn(message: Message) -> bool:
    return isinstance(message, UserMessage) and message.text.startswith(TOOL_RESULTS_HEADER)


def _is_query(message: Message) -> bool:
    return (
        isinstance(message, UserMessage)
        and isinstance(message.content, str)
        and not message.content.startswith(TOOL_RESULTS_HEADER)
    )


def _calls_as_text(
    message: AssistantMessage, dialect: DialectChoice, functions: Sequence[FunctionSpec]
) -> AssistantMessage:
    if not message.tool_calls:
        return message
    parts: list[AssistantPart] = []
    for part in message.parts:
        text = render_tool_call(part, dialect, functions) if isinstance(part, ToolCall) else None
        if text is None:
            if isinstance(part, TextPart) and parts and isinstance(parts[-1], TextPart):
                parts[-1] = TextPart(_join(parts[-1].text, part.text))
            else:
                parts.append(part)
        elif parts and isinstance(parts[-1], TextPart):
            parts[-1] = TextPart(_join(parts[-1].text, text))
        else:
            parts.append(TextPart(text))
    return attrs.evolve(message, parts=tuple(parts))


def _join(before: str, after: str) -> str:
    if not before or before.endswith("\n"):
        return before + after
    return f"{before}\n{after}"


def _merge_user(first: UserMessage, second: UserMessage) -> UserMessage:
    if isinstance(first.content, str) and isinstance(second.content, str):
        return UserMessage(f"{first.content}\n\n{second.content}")

    def as_parts(content: str | tuple[UserPart, ...]) -> tuple[UserPart, ...]:
        return (TextPart(content),) if isinstance(content, str) else content

    return UserMessage((*as_parts(first.content), TextPart("\n\n"), *as_parts(second.content)))


def coalesce_tool_results(
    messages: Sequence[Message], dialect: DialectChoice, functions: Sequence[FunctionSpec] = ()
) -> tuple[Message, ...]:
    """The conversation as a chat model without native tools can read it.

    Assistant tool calls become text in ``dialect`` (one dialect, or a :class:`ToolDialects`
    giving each tool its own; the model's own text when it is known and unchanged); each run
    of consecutive tool results becomes one user turn starting with ``[Tool results]`` (see
    :func:`render_tool_results`), merged with a user turn right next to it so user and
    assistant turns keep alternating. ``functions`` gives schemas and parameter
    order for writing calls, and the tool names whose tags result bodies may not contain.
    """
    dialect = tool_dialects(dialect)
    names = [f.name for f in functions]
    out: list[Message] = []
    pending: list[ToolResultMessage] = []

    def flush() -> None:
        if pending:
            _append_user(out, UserMessage(render_tool_results(pending, dialect, names)))
            pending.clear()

    for message in messages:
        if isinstance(message, ToolResultMessage):
            pending.append(message)
            continue
        flush()
        if isinstance(message, AssistantMessage):
            out.append(_calls_as_text(message, dialect, functions))
        elif isinstance(message, UserMessage):
            _append_user(out, message)
        else:
            out.append(message)
    flush()
    return tuple(out)


def _append_user(out: list[Message], message: UserMessage) -> None:
    if out and isinstance(out[-1], UserMessage):
        out[-1] = _merge_user(out[-1], message)
    else:
        out.append(message)


def ensure_resolvable_user_turn(
    messages: Sequence[Message], *, query: str = DEFAULT_QUERY
) -> tuple[Message, ...]:
    """The conversation with a user turn a chat template can take as "the user query".

    Some templates (Qwen 3's) look for the last user turn whose content is a string and not a
    tool response, and raise "No user query found in messages" without one. When no such turn is
    left (only tool results, or only turns made of parts), a user turn ``query`` is inserted
    after the leading system turns, merged with a text user turn that follows it.
    """
    if any(_is_query(m) for m in messages):
        return tuple(messages)
    at = 0
    while at < len(messages) and isinstance(messages[at], SystemMessage):
        at += 1
    following = messages[at] if at < len(messages) else None
    if isinstance(following, UserMessage) and isinstance(following.content, str):
        return (*messages[:at], _merge_user(UserMessage(query), following), *messages[at + 1 :])
    return (*messages[:at], UserMessage(query), *messages[at:])
