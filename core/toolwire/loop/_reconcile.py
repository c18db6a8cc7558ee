"""A stored run reconciled with the ledger: its pending turn, the request each call of it waits
on now (interrupted calls), the calls still running elsewhere, and edited calls."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ..messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from ._lease import Owner, this_process
from ._run import DeferredRequest, Run

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


class RunInProgress(ValueError):
    """A call of the run is running in another process (or this one), whose owner keeps its
    lease alive: the run can be neither loaded as interrupted nor resumed until it settles."""

    def __init__(self, run_id: str, entry: LedgerEntry) -> None:
        owner = Owner.parse(entry.owner)
        if owner == this_process():
            where = "this process"
        else:
            where = "another process" + (f" ({owner.describe()})" if owner is not None else "")
        since = ""
        if entry.started_at is not None:
            since = time.strftime(" since %Y-%m-%d %H:%M:%S UTC", time.gmtime(entry.started_at))
        super().__init__(
            f"run {run_id!r} is in progress: {entry.tool} (call {entry.call_id}) is running in "
            f"{where}{since}, which keeps its lease alive; it is not interrupted and nobody may "
            "take it over: load the run again once the call has settled"
        )
        self.run_id = run_id
        self.entry = entry


def interrupted_request(
    entry: LedgerEntry, round: int, earlier: DeferredRequest | None = None
) -> DeferredRequest:
    """The request for a fresh decision on a call the ledger shows started and never settled,
    whose owner let it go (its process ended, or its lease lapsed).

    ``earlier`` is the request the call waited on before (its decision was taken without
    knowing the call ran): the detail says so, so that no one approves it twice unawares. The
    request is the call's next after that one.
    """
    tool = entry.tool
    when = ""
    if entry.started_at is not None:
        when = time.strftime(" at %Y-%m-%d %H:%M:%S UTC", time.gmtime(entry.started_at))
    before = "approved, " if earlier is not None and earlier.reason == "approval" else ""
    attempt = earlier.attempt + 1 if earlier is not None else 1
    return DeferredRequest(
        call_id=entry.call_id,
        tool=tool,
        arguments=entry.arguments,
        reason="interrupted",
        detail=f"{before}{tool} started{when} and the process ended before it settled; it is not "
        "idempotent and may have taken effect, so it runs again only if approved again "
        f"(a decision on this request, attempt {attempt}), or deny it, or supply its result",
        round=round,
        attempt=attempt,
        starts=entry.attempt,
    )


def current_request(
    stored: DeferredRequest | None, entry: LedgerEntry | None, round: int
) -> DeferredRequest | None:
    """The request a call of a stored run's last turn waits on now: ``stored`` (the run's), as
    the ledger's row of the call (``entry``) corrects it.

    The ledger wins. A call that started and never settled and that nobody runs any more
    waits on an interrupted request, unless ``stored`` is that very request already; so does a
    call that asked for a decision after it started when the run lost that request. A row an
    older toolwire left for a call that deferred itself while it ran keeps the run's request.
    Calls that settled or are still running are the caller's to handle.
    """
    if entry is None or entry.settled or entry.running or entry.idempotent:
        return stored
    if (
        stored is not None
        and stored.starts == entry.attempt
        and (entry.deferred or stored.reason == "interrupted")
    ):
        # Made after the call's last start: it asked while it ran (its row waits), or it is
        # the interrupted request of that start already.
        return stored
    if stored is not None and stored.started and entry.owner is None and not stored.starts:
        # Schema 2 kept the started row of a call that deferred itself while it ran.
        return attrs.evolve(stored, starts=entry.attempt)
    return interrupted_request(entry, round, stored)


def reconcile(run: Run, entries: Mapping[str, LedgerEntry]) -> Run:
    """``run`` as stored, corrected by what the ledger knows of the calls of its last turn.

    The ledger wins over the snapshot: a call it shows settled waits on no decision any more
    (its stored result answers it on resume); one it shows started and never settled, of a tool
    that is not idempotent, that nobody runs any more, waits on a fresh decision
    (``reason="interrupted"``, :func:`current_request`), also when it waited on an approval
    before (that approval was given and the call ran). A run that was stored as something else
    and that the ledger contradicts comes back ``interrupted``.

    :raises RunInProgress: when a call of the turn is still running: its owner keeps its lease.
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
        if entry.running:
            raise RunInProgress(run.id, entry)
        request = deferred.get(call.id)
        if request is None and run.stop_reason == "interrupted":
            used += 1  # admitted after the snapshot was taken, before the process ended
        if entry.settled:
            if request is not None:
                del deferred[call.id]
                changed = True
            continue
        current = current_request(request, entry, run.rounds)
        if current is not request and current is not None:
            deferred[call.id] = current
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
