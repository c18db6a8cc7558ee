"""Call ids unique within a run: a provider may number its calls afresh each round."""

from __future__ import annotations

from collections.abc import Set
from typing import TYPE_CHECKING

import attrs

from ..adapters._streaming import _with_wire_id, wire_call_id
from ..messages import AssistantMessage, Message, ToolCall

if TYPE_CHECKING:
    from collections.abc import Sequence


def taken_ids(messages: Sequence[Message]) -> frozenset[str]:
    """The ids of every tool call in ``messages`` (the run's earlier turns)."""
    return frozenset(
        part.id
        for message in messages
        if isinstance(message, AssistantMessage)
        for part in message.parts
        if isinstance(part, ToolCall)
    )


def run_call_id(call_id: str, round: int, taken: Set[str]) -> str:
    """``call_id`` when no earlier turn of the run used it, else an id derived from it and the
    round (the same one every time for the same inputs, so stream events and the turn agree)."""
    if call_id not in taken:
        return call_id
    chosen = f"{call_id}_r{round}"
    attempt = 1
    while chosen in taken:
        attempt += 1
        chosen = f"{call_id}_r{round}_{attempt}"
    return chosen


def with_run_id(call: ToolCall, round: int, taken: Set[str]) -> ToolCall:
    """``call`` with an id unique in the run; a renamed call keeps the provider's id for the wire
    (``provider_data["wire_id"]``, as a call renamed within its turn does)."""
    chosen = run_call_id(call.id, round, taken)
    if chosen == call.id:
        return call
    return attrs.evolve(
        call, id=chosen, provider_data=_with_wire_id(call.provider_data, wire_call_id(call), chosen)
    )


def with_run_ids(message: AssistantMessage, round: int, taken: Set[str]) -> AssistantMessage:
    """The turn with every call's id unique in the run (see :func:`with_run_id`); itself when
    no call's id was used before."""
    for part in message.parts:
        if isinstance(part, ToolCall) and part.id in taken:
            break
    else:
        return message
    parts = tuple(
        with_run_id(p, round, taken) if isinstance(p, ToolCall) else p for p in message.parts
    )
    return attrs.evolve(message, parts=parts)
