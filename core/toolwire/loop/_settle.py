"""Settling a call's result: the size limits, the untrusted-content backstop, and the events,
sources and trust of a call that got its result (:func:`settle_events`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ..events import Event, ToolBlockedEvent, ToolCompleted, ToolDenied, ToolFailed
from ..tools._context import ToolContext
from ..tools._result import ToolResult, ToolStatus
from ..tools._truncate import truncate_result
from ._execution import with_backstop
from ._run import Outcome
from ._state import CallSlot, RunState, Turn

if TYPE_CHECKING:
    from ..tools import Tool
    from ._view import LoopView


def backstop(
    view: LoopView,
    state: RunState,
    turn: Turn,
    tool: Tool,
    call_id: str,
    context: ToolContext,
    send: Callable[[], Awaitable[tuple[ToolResult, Outcome]]],
) -> Callable[[], Awaitable[tuple[ToolResult, Outcome]]]:
    """``send`` with the host's filter and size cap on its result, for a tool that returns
    untrusted content (unless the tool filtered it itself during the call)."""
    policy = view.config.policy
    limits = [
        n
        for n in (
            tool.policy.max_result_bytes,
            policy.max_result_bytes,
            policy.max_untrusted_result_bytes,
        )
        if n
    ]
    key = (turn.round, call_id)
    return lambda: with_backstop(
        send,
        context,
        filtered=lambda: key in state.filtered_calls,
        max_bytes=min(limits),
    )


def limit_size(view: LoopView, tool: Tool, result: ToolResult) -> ToolResult:
    """``result`` truncated to the smaller of the tool's and ``[policy]``'s size limits."""
    own = tool.policy.max_result_bytes
    policy = view.config.policy.max_result_bytes
    limit = min(own, policy) if own and policy else own or policy
    if not limit:
        return result
    return truncate_result(result, limit)


def settle_events(view: LoopView, state: RunState, turn: Turn, slot: CallSlot, name: str) -> None:
    """Events, sources, trust and duplicate bookkeeping of a call that got its result."""
    result = slot.result
    assert result is not None
    run_id = state.run_id
    round = turn.round
    call_id = slot.call.id
    status = result.status
    event: Event
    if status is ToolStatus.OK:
        event = ToolCompleted(run_id=run_id, round=round, call_id=call_id, name=name, result=result)
        for source in result.sources:
            known = state.sources.get(source.url)
            if known is None or (known.title is None and source.title is not None):
                state.sources[source.url] = source
    elif status is ToolStatus.ERROR:
        event = ToolFailed(run_id=run_id, round=round, call_id=call_id, name=name, result=result)
    elif status is ToolStatus.BLOCKED:
        event = ToolBlockedEvent(
            run_id=run_id, round=round, call_id=call_id, name=name, result=result
        )
    else:
        event = ToolDenied(run_id=run_id, round=round, call_id=call_id, name=name, result=result)
    if status is not ToolStatus.OK:
        state.forget(slot)
    if result.required_trust is not None:
        state.require(result.required_trust, f"{name} call {call_id}")
    view.emit(state, event)
