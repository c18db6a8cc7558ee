"""Keeping a conversation inside the model's context window.

When a request would fill more than ``[loop] compact_at`` of ``[provider] context_tokens``, the
conversation is made smaller in two steps, until it fits ``compact_to``:

1. old tool results are cleared, oldest first: each becomes a stub naming the tool, its
   arguments and how much was there (the run's records keep the whole result);
2. if that is not enough, older turns are summarised by the model
   (``toolwire_summarize_conversation``) into one user message marked as a summary.

Never touched: system messages, the last user turn, the latest turn of the model with its
results (the model has not read them yet), and any turn with a call that has no result yet.

Everything here but the summary itself is a pure function of the messages, so the same
conversation is always compacted the same way (and a provider's prompt cache sees the same
prefix again). Sizes are estimated from the text (:func:`conversation_tokens`), which the loop
scales by what the provider reported for its last request.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

import attrs

from .._contain import bounded, is_cancellation
from ..events import Event
from ..messages import (
    AssistantMessage,
    Message,
    OpaquePart,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ..tools._result import ToolResult
from ..usage import estimate_tokens
from ._gather import hook_failed

__all__ = [
    "Compaction",
    "ContextWindow",
    "ask_summary",
    "SUMMARY_API",
    "SummaryRequest",
    "clear_old_results",
    "compact",
    "conversation_tokens",
    "is_summary",
    "summary_message",
    "summary_spans",
    "transcript",
]

SUMMARY_API: Final = "toolwire-summary"
"""The API of the marker part a summary message carries (no adapter sends it)."""

_CLEARED: Final = "cleared_to_fit_context"
_PER_MESSAGE: Final = 4  # the wire's framing of a message, in tokens
_SHOWN_ARGUMENTS: Final = 200

Summarize = Callable[[tuple[Message, ...]], Awaitable[str | None]]
"""Writes the summary of some messages (the ``toolwire_summarize_conversation`` hook); None
when none can be written (the turns stay as they are)."""


@attrs.frozen(kw_only=True)
class SummaryRequest:
    """What a ``toolwire_summarize_conversation`` implementation is asked to summarise.

    :ivar run_id: the run whose conversation is compacted.
    :ivar round: the round about to be sent.
    :ivar messages: the turns to summarise, whole (each call with its results), oldest first.
    :ivar api: the run's adapter API.
    :ivar model: the run's configured model.
    :ivar ask: sends messages to the run's provider, without tools, and returns its answer;
        what it costs counts in the run's usage.
    """

    run_id: str
    round: int
    messages: tuple[Message, ...]
    api: str
    model: str | None = None
    ask: Callable[[Sequence[Message]], Awaitable[AssistantMessage]] = attrs.field(repr=False)


def transcript(messages: Sequence[Message]) -> str:
    """``messages`` written out as plain text, one block per message, for a summary request."""
    blocks: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            blocks.append(f"User: {message.text}")
        elif isinstance(message, SystemMessage):
            blocks.append(f"System: {message.content}")
        elif isinstance(message, ToolResultMessage):
            blocks.append(
                f"Result of {message.name} (call {message.call_id}): {message.result.model_text()}"
            )
        else:
            lines = [p.text for p in message.parts if isinstance(p, TextPart) and p.text]
            lines += [
                f"[called {c.name} (call {c.id}) with "
                f"{json.dumps(dict(c.arguments or {}), ensure_ascii=False)}]"
                for c in message.tool_calls
            ]
            blocks.append("Assistant: " + "\n".join(lines))
    return "\n\n".join(blocks)


def message_tokens(message: Message) -> int:
    """About how many tokens ``message`` takes (:func:`toolwire.usage.estimate_tokens` of its
    text, calls and results, and a few for its framing)."""
    if isinstance(message, SystemMessage):
        text = message.content
    elif isinstance(message, UserMessage):
        text = message.text
    elif isinstance(message, ToolResultMessage):
        text = f"{message.name} {message.result.model_text()}"
    else:
        pieces: list[str] = []
        for part in message.parts:
            if isinstance(part, TextPart | ThinkingPart):
                pieces.append(part.text)
            elif isinstance(part, ToolCall):
                pieces.append(part.name)
                pieces.append(part.raw_arguments or json.dumps(part.arguments or {}))
        text = " ".join(pieces)
    return estimate_tokens(text) + _PER_MESSAGE


def conversation_tokens(messages: Sequence[Message]) -> int:
    """About how many tokens ``messages`` take: the same for the same messages, every time."""
    return sum(message_tokens(m) for m in messages)


@attrs.frozen(kw_only=True)
class ContextWindow:
    """How much of the model's context a request may take.

    :ivar trigger: the estimated tokens past which the conversation is compacted.
    :ivar target: the estimated tokens compaction brings it down to.
    :ivar overhead: tokens the request takes beside the messages (the system prompt's
        instructions, the tool definitions).
    :ivar scale: the provider's tokens per estimated token, from its last report (1 before).
    """

    trigger: int
    target: int
    overhead: int = 0
    scale: float = 1.0

    @classmethod
    def of(
        cls,
        context_tokens: int,
        *,
        compact_at: float,
        compact_to: float,
        reserve: int = 0,
        overhead: int = 0,
        scale: float = 1.0,
    ) -> ContextWindow:
        """The window of a model with ``context_tokens``, ``reserve`` of them kept for the
        answer (``[provider] max_tokens``)."""
        usable = max(1, context_tokens - reserve)
        return cls(
            trigger=int(usable * compact_at),
            target=int(usable * compact_to),
            overhead=overhead,
            scale=scale,
        )

    def size(self, messages: Sequence[Message]) -> int:
        """The estimated tokens of a request with ``messages``."""
        return math.ceil((conversation_tokens(messages) + self.overhead) * self.scale)


def is_summary(message: Message) -> bool:
    """True for a message compaction wrote in place of earlier ones."""
    return isinstance(message, UserMessage) and any(
        isinstance(p, OpaquePart) and p.api == SUMMARY_API for p in message.content
    )


def summary_message(text: str, replaced: int) -> UserMessage:
    """The user message standing for ``replaced`` earlier messages, summarised in ``text``."""
    head = (
        f"[Summary of {replaced} earlier messages of this conversation, written to keep it "
        "inside the context window]"
    )
    return UserMessage(
        (
            TextPart(f"{head}\n{text.strip()}"),
            OpaquePart(api=SUMMARY_API, data={"replaced": replaced}),
        )
    )


def _is_cleared(message: ToolResultMessage) -> bool:
    return bool(message.result.metadata.get(_CLEARED))


def _calls_by_id(messages: Sequence[Message]) -> dict[str, ToolCall]:
    return {
        call.id: call for m in messages if isinstance(m, AssistantMessage) for call in m.tool_calls
    }


def _stub(message: ToolResultMessage, call: ToolCall | None) -> ToolResultMessage:
    text = message.result.model_text()
    arguments = ""
    if call is not None and call.arguments is not None:
        shown = json.dumps(dict(call.arguments), ensure_ascii=False, separators=(",", ":"))
        arguments = shown if len(shown) <= _SHOWN_ARGUMENTS else shown[:_SHOWN_ARGUMENTS] + "…"
    what = f"{message.name}({arguments})"
    stub = (
        f"[Result of {what} (call {message.call_id}) cleared to fit the context window: "
        f"{len(text)} characters, status {message.result.status.value}. Call the tool again "
        "if you need it.]"
    )
    result = ToolResult(
        status=message.result.status,
        content=stub,
        metadata={_CLEARED: True},
        required_trust=message.result.required_trust,
    )
    return attrs.evolve(message, result=result)


def _protected_tail(messages: Sequence[Message]) -> int:
    """Where the part that is never compacted begins: the model's latest turn (its results
    follow it, unread by the model so far), or an earlier turn with a call still waiting for
    its result, whichever comes first."""
    answered = {m.call_id for m in messages if isinstance(m, ToolResultMessage)}
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage) and any(
            c.id not in answered and not c.provider_executed for c in message.tool_calls
        ):
            return index
    return next(
        (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AssistantMessage)),
        len(messages),
    )


def _last_user_turn(messages: Sequence[Message]) -> int:
    """The index of the last user turn (a summary is none), -1 without one."""
    return next(
        (
            i
            for i in range(len(messages) - 1, -1, -1)
            if isinstance(messages[i], UserMessage) and not is_summary(messages[i])
        ),
        -1,
    )


def clear_old_results(
    messages: Sequence[Message], window: ContextWindow
) -> tuple[tuple[Message, ...], tuple[str, ...]]:
    """``messages`` with old tool results replaced by stubs, oldest first, until the request
    fits ``window.target`` (or no result is left to clear); and the ids of the calls whose
    results were cleared."""
    out = list(messages)
    tail = _protected_tail(out)
    calls = _calls_by_id(out)
    cleared: list[str] = []
    for index in range(tail):
        if window.size(out) <= window.target:
            break
        message = out[index]
        if isinstance(message, ToolResultMessage) and not _is_cleared(message):
            out[index] = _stub(message, calls.get(message.call_id))
            cleared.append(message.call_id)
    return tuple(out), tuple(cleared)


def _units(messages: Sequence[Message], end: int) -> list[tuple[int, int]]:
    """``messages[:end]`` as turns: ``(start, stop)`` of a user message, or of a model turn
    with the results that follow it; system messages are no unit."""
    units: list[tuple[int, int]] = []
    index = 0
    while index < end:
        message = messages[index]
        stop = index + 1
        if isinstance(message, AssistantMessage):
            while stop < end and isinstance(messages[stop], ToolResultMessage):
                stop += 1
        elif isinstance(message, ToolResultMessage):
            # Results whose call is outside the part that may be compacted stay where they are.
            index = stop
            continue
        if not isinstance(message, SystemMessage):
            units.append((index, stop))
        index = stop
    return units


def summary_spans(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """The runs of whole turns that may be summarised, oldest first, as ``(start, stop)``:
    before the protected tail, and never the last user turn or a system message."""
    tail = _protected_tail(messages)
    last_user = _last_user_turn(messages)
    spans: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for start, stop in _units(messages, tail):
        if start == last_user:
            current = None
            continue
        if current is not None and current[1] == start:
            current = (current[0], stop)
            spans[-1] = current
        else:
            current = (start, stop)
            spans.append(current)
    # A lone summary is left as it is: summarising it again gains nothing.
    return [(a, b) for a, b in spans if not (b - a == 1 and is_summary(messages[a]))]


@attrs.frozen(kw_only=True)
class Compaction:
    """What compaction did to a conversation.

    :ivar messages: the conversation as it is sent from now on.
    :ivar cleared: the ids of the calls whose results became stubs.
    :ivar summarised: how many messages summaries replaced.
    :ivar tokens_before: the request's estimated size before.
    :ivar tokens_after: and after.
    """

    messages: tuple[Message, ...]
    cleared: tuple[str, ...] = ()
    summarised: int = 0
    tokens_before: int = 0
    tokens_after: int = 0


async def compact(
    messages: Sequence[Message], window: ContextWindow, summarize: Summarize
) -> Compaction | None:
    """``messages`` made to fit ``window``: None when they fit ``window.trigger`` already;
    else old results cleared, then older turns summarised with ``summarize`` (oldest run of
    turns first) until the request fits ``window.target``, nothing more may be touched, or
    ``summarize`` writes no summary."""
    before = window.size(messages)
    if before <= window.trigger:
        return None
    current, cleared = clear_old_results(messages, window)
    summarised = 0
    while window.size(current) > window.target:
        spans = summary_spans(current)
        if not spans:
            break
        start, stop = spans[0]
        text = await summarize(tuple(current[start:stop]))
        if text is None:
            break
        replaced = sum(_stands_for(m) for m in current[start:stop])
        current = (*current[:start], summary_message(text, replaced), *current[stop:])
        summarised += stop - start
    return Compaction(
        messages=tuple(current),
        cleared=cleared,
        summarised=summarised,
        tokens_before=before,
        tokens_after=window.size(current),
    )


def _stands_for(message: Message) -> int:
    """How many messages of the conversation ``message`` stands for (a summary: those it
    replaced)."""
    if isinstance(message, UserMessage) and not isinstance(message.content, str):
        for part in message.content:
            if isinstance(part, OpaquePart) and part.api == SUMMARY_API:
                replaced = part.data.get("replaced") if isinstance(part.data, dict) else None
                return replaced if isinstance(replaced, int) and replaced > 0 else 1
    return 1


async def ask_summary(
    hook: Any,
    request: SummaryRequest,
    emit: Callable[[Event], None],
    *,
    bound: float = 30.0,
) -> str | None:
    """The summary the ``toolwire_summarize_conversation`` implementations write (the first
    that answers text); None when one raises, answers something else or takes longer than
    ``bound`` seconds (a ``PluginFailed`` event names it), or none answers."""
    impls: Sequence[Any] = hook.toolwire_summarize_conversation.get_hookimpls()
    for impl in reversed(impls):  # pluggy asks the last registered first
        try:
            answer: Any = impl.function(request=request)
            if inspect.isawaitable(answer):
                answer = await bounded(
                    answer, "toolwire_summarize_conversation", bound, "[loop] hook_timeout"
                )
            if answer is None:
                continue
            if not isinstance(answer, str) or not answer.strip():
                raise TypeError(f"answered {answer!r:.80}; expected the summary's text")
            return answer
        except BaseException as exc:
            if is_cancellation(exc):
                raise
            hook_name = "toolwire_summarize_conversation"
            emit(hook_failed(request.run_id, request.round, impl.plugin_name, hook_name, exc))
            return None
    return None
