"""Tool calls a model wrote as text while native tools were on, read back as calls.

Local models behind OpenAI-compatible servers often put a call into the answer's text instead
of the tool channel: ``<tool_call>{…}</tool_call>``, a bare ``{"name": …, "arguments": …}``
object, a Python-style ``name(a=1)`` line, or a server's own routing text
(``functions.calculator:``, which llama-cpp-python's function-calling template writes when the
model chose a tool but the server produced no arguments). :func:`recover_text_calls` reads such
text with the prompted path's parser, against the offered functions only, so the loop runs it
as a real call (or answers it as a failed one), never as the final answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final, Literal, TypeAlias

import attrs

from ..adapters._streaming import new_call_id
from ..messages import AssistantMessage, AssistantPart, TextPart, ToolCall
from ..tools._spec import FunctionSpec
from ._scanner import parse_tool_calls

RecoveredForm: TypeAlias = Literal["tool_call", "json", "python", "routing"]
"""How a recovered call was written: a ``<tool_call>`` block, a bare JSON object, a
Python-style call, or a server's routing text (``functions.NAME:``)."""

# llama-cpp-python's function-calling template: `functions.<name>:` then, when there are any,
# the arguments as a JSON object on the next line.
_ROUTING: Final = re.compile(
    r"\A\s*functions\.([A-Za-z_][\w.-]{0,127}):[ \t]*(?:\r?\n)?(.*)\Z", re.S
)


@attrs.frozen(kw_only=True)
class RecoveredCalls:
    """A turn whose text held calls: the turn with those calls as tool calls, and how each was
    written (``forms`` has one entry per recovered call, in order)."""

    message: AssistantMessage
    forms: tuple[RecoveredForm, ...]


def recover_text_calls(
    message: AssistantMessage,
    functions: Sequence[FunctionSpec],
    *,
    new_id: Callable[[int], str] | None = None,
) -> RecoveredCalls | None:
    """The calls written into the text of ``message``, as tool calls of it; None when there are
    none (a turn that already has tool calls, no offered functions, or text that names no
    offered function as a call).

    Text is read as the prompted ``json`` dialect reads it (``<tool_call>`` blocks and bare
    ``{"name": …}`` objects on a line of their own), then as Python-style calls
    (``name(…)`` on a line of its own), then as routing text (``functions.NAME:`` with or
    without a JSON object of arguments after it). Only calls of the offered ``functions``
    count: text naming anything else stays text. A call that cannot be read (broken JSON,
    routing text without arguments) becomes an invalid call with the reason, which the loop
    answers as a failed call. The text around the calls stays in the turn.
    """
    if message.tool_calls or not functions:
        return None
    text = message.text
    if not text.strip():
        return None
    names = {f.name for f in functions}
    found = _routing(text, functions, names, new_id)
    if found is None:
        found = _parsed(text, functions, names, new_id)
    if found is None:
        return None
    parts, forms = found
    kept: list[AssistantPart] = [p for p in message.parts if not isinstance(p, TextPart)]
    finish = "tool_calls" if message.finish_reason in (None, "stop") else message.finish_reason
    return RecoveredCalls(
        message=attrs.evolve(message, parts=(*kept, *parts), finish_reason=finish),
        forms=forms,
    )


def _parsed(
    text: str,
    functions: Sequence[FunctionSpec],
    names: set[str],
    new_id: Callable[[int], str] | None,
) -> tuple[tuple[AssistantPart, ...], tuple[RecoveredForm, ...]] | None:
    for dialect in ("json", "python"):
        turn = parse_tool_calls(text, functions, dialect, new_id=new_id)
        if turn.calls and all(call.name in names for call in turn.calls):
            forms = tuple(_form(call, dialect) for call in turn.calls)
            return turn.parts, forms
    return None


def _form(call: ToolCall, dialect: str) -> RecoveredForm:
    written = ((call.provider_data or {}).get("prompted") or {}).get("text", "")
    if isinstance(written, str) and written.lstrip().startswith("<tool_call>"):
        return "tool_call"
    return "json" if dialect == "json" else "python"


def _routing(
    text: str,
    functions: Sequence[FunctionSpec],
    names: set[str],
    new_id: Callable[[int], str] | None,
) -> tuple[tuple[AssistantPart, ...], tuple[RecoveredForm, ...]] | None:
    match = _ROUTING.match(text)
    if match is None or match[1] not in names:
        return None
    name, rest = match[1], match[2].strip()
    if rest.startswith("{"):
        body = f'<tool_call>{{"name": "{name}", "arguments": {rest}}}</tool_call>'
        turn = parse_tool_calls(body, functions, "json", new_id=new_id)
        if len(turn.calls) == 1 and not turn.text_without_calls:
            return turn.calls, ("routing",)
    reason = (
        f"the answer was only the server's routing text {text.strip()[:120]!r}: it named the "
        f"tool {name} but held no call; call {name} again with its arguments"
    )
    call = ToolCall(
        id=new_id(0) if new_id is not None else new_call_id(),
        name=name,
        arguments=None,
        raw_arguments=text.strip(),
        invalid_reason=reason,
    )
    return (call,), ("routing",)
