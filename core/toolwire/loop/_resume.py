"""Helpers of resuming a run: the pending turn, its results, interrupted and edited calls."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from ._run import RAN, DeferredRequest
from ._state import RunState


def pending_turn(messages: Sequence[Message]) -> AssistantMessage | None:
    """The last assistant turn when it has local calls and only tool results follow it."""
    for message in reversed(messages):
        if isinstance(message, ToolResultMessage):
            continue
        if isinstance(message, AssistantMessage) and any(
            not c.provider_executed for c in message.tool_calls
        ):
            return message
        return None
    return None


def rebuild_results(state: RunState, turn: AssistantMessage, round: int) -> None:
    """Put the turn's results after it, in call order (deferred calls have none yet)."""
    messages = state.messages
    index = len(messages)
    while index > 0 and isinstance(messages[index - 1], ToolResultMessage):
        index -= 1
    del messages[index:]
    results = {r.call.id: r for r in state.records if r.round == round}
    for call in turn.tool_calls:
        record = results.get(call.id)
        if record is not None and record.result is not None:
            messages.append(
                ToolResultMessage(
                    call_id=call.id,
                    name=call.name,
                    result=record.result,
                    by_host=record.outcome not in RAN,
                )
            )


def interrupted_request(
    tool: str, call_id: str, arguments: Mapping[str, Any], round: int
) -> DeferredRequest:
    return DeferredRequest(
        call_id=call_id,
        tool=tool,
        arguments=arguments,
        reason="interrupted",
        detail=f"the process ended while {tool} ran; it is not idempotent, so it runs again "
        "only if approved",
        round=round,
    )


def edited_call(call: ToolCall, name: str, arguments: Mapping[str, Any]) -> ToolCall:
    """``call`` with other arguments (an approval's edit) as parsed JSON."""
    return ToolCall(
        id=call.id,
        name=name,
        arguments=dict(arguments),
        provider_executed=call.provider_executed,
        provider_data=call.provider_data,
    )
