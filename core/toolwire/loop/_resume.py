"""Helpers of resuming a run: the pending turn, its results, what the ledger knows of it,
interrupted and edited calls."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ..messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from ._run import RAN, DeferredRequest, Run
from ._state import RunState

if TYPE_CHECKING:
    from ._ledger import LedgerEntry


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
    entry: LedgerEntry, round: int, earlier: DeferredRequest | None = None
) -> DeferredRequest:
    """The request for a fresh decision on a call the ledger shows started and never settled.

    ``earlier`` is the request the call waited on before (its decision was taken without
    knowing the call ran): the detail says so, so that no one approves it twice unawares.
    """
    tool = entry.tool
    when = ""
    if entry.started_at is not None:
        when = time.strftime(" at %Y-%m-%d %H:%M:%S UTC", time.gmtime(entry.started_at))
    before = "approved, " if earlier is not None and earlier.reason == "approval" else ""
    return DeferredRequest(
        call_id=entry.call_id,
        tool=tool,
        arguments=entry.arguments,
        reason="interrupted",
        detail=f"{before}{tool} started{when} and the process ended before it settled; it is not "
        "idempotent and may have taken effect, so it runs again only if approved again "
        "(or deny it, or supply its result)",
        round=round,
    )


def stale(request: DeferredRequest | None, entry: LedgerEntry | None) -> bool:
    """Whether ``entry`` shows a call started and never settled that ``request`` (the decision's
    subject, None when the call waited on nothing) does not yet know about."""
    return (
        entry is not None
        and not entry.settled
        and not entry.idempotent
        # A call that deferred itself while it ran knows of its started row.
        and (request is None or (request.reason != "interrupted" and not request.started))
    )


def reconcile(run: Run, entries: Mapping[str, LedgerEntry]) -> Run:
    """``run`` as stored, corrected by what the ledger knows of the calls of its last turn.

    The ledger wins over the snapshot: a call it shows settled waits on no decision any more
    (its stored result answers it on resume); one it shows started and never settled, of a tool
    that is not idempotent, waits on a fresh decision (``reason="interrupted"``), also when it
    waited on an approval before (that approval was given and the call ran). A run that was
    stored as something else and that the ledger contradicts comes back ``interrupted``.
    """
    turn = pending_turn(run.messages)
    if turn is None or not entries:
        return run
    answered = {r.call.id for r in run.tool_calls if r.round == run.rounds and r.result is not None}
    deferred = {d.call_id: d for d in run.deferred}
    used = run.tool_calls_used
    changed = False
    for call in turn.tool_calls:
        entry = entries.get(call.id)
        if call.provider_executed or call.id in answered or entry is None:
            continue
        request = deferred.get(call.id)
        if request is None and run.stop_reason == "interrupted":
            used += 1  # admitted after the snapshot was taken, before the process ended
        if entry.settled:
            if request is not None:
                del deferred[call.id]
                changed = True
        elif stale(request, entry):
            deferred[call.id] = interrupted_request(entry, run.rounds, request)
            changed = True
    if not changed and used == run.tool_calls_used:
        return run
    stop = run.stop_reason
    detail = run.detail
    if changed and stop != "interrupted":
        stop = "interrupted"
        detail = "the ledger shows calls of the last turn that ran after the run was stored"
    return attrs.evolve(
        run,
        stop_reason=stop,
        detail=detail,
        deferred=tuple(deferred.values()),
        tool_calls_used=used,
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
