"""The unfinished turn of a stored run, answered when the run is resumed.

:func:`resolve_decisions` checks the caller's decisions against the run as the ledger shows it
and says which request each one answers; :func:`resume_turn` makes a slot for each call of the
turn (:func:`resumed_slot`): answered already, recovered from the ledger, decided by the caller
(:func:`decided`), still waiting, or admitted again; then the turn goes through
:func:`~toolwire.loop._turn.answer_turn` like a fresh one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

from ..events import RoundFinished
from ..messages import ToolCall
from ._decision import answer_for_caller, apply_decision, approved, defer
from ._lifecycle import CallEvent
from ._reconcile import edited_call, pending_turn
from ._round import start_round
from ._run import DECISIONS, Approve, Decision, DeferredRequest, Run, ToolCallRecord, with_attempt
from ._settle import settle_events
from ._state import CallSlot, Checkpoint, End, RunState, Turn
from ._turn import answer_turn, rebuild_results

if TYPE_CHECKING:
    from ..adapters import ProviderAdapter
    from ._ledger import LedgerEntry
    from ._view import LoopView


@attrs.frozen
class Resumed:
    """What a resume brings to a run's unfinished turn: the decisions, each naming the request
    it answers, and for each waiting call the attempt of the request the caller was shown."""

    decisions: Mapping[str, Decision]
    shown: Mapping[str, int]


def resolve_decisions(
    run: Run,
    given: Run | None,
    decisions: Mapping[str, Decision],
    entries: Mapping[str, LedgerEntry],
) -> Resumed:
    """Check ``decisions`` against ``run`` (as the ledger shows it) and name the request each
    answers: its own ``attempt``, else the request of the run the caller gave (``given``), else
    the call's first request.

    :raises ValueError: for a run that answered, a decision naming no waiting call (one the
        ledger shows settled is dropped: its result stands), a request that does not exist
        yet, an :class:`Approve` of an external tool, or something that is not a decision
        (:data:`~toolwire.loop.Decision`).
    """
    if run.stop_reason == "answered":
        raise ValueError(
            f"run {run.id} already answered; to go on, start a new run with its messages "
            "and a new user message"
        )
    pending = {d.call_id: d for d in run.deferred}
    settled = {c for c, e in entries.items() if e.settled}
    decisions = {c: d for c, d in decisions.items() if c in pending or c not in settled}
    unknown = sorted(set(decisions) - set(pending))
    if unknown:
        listed = ", ".join(sorted(pending)) or "none"
        raise ValueError(
            f"run {run.id} has no deferred call with id {', '.join(map(repr, unknown))}; "
            f"deferred calls: {listed}"
        )
    # The requests the caller was shown: those of the run it gave (none for a call it was not
    # shown waiting), or for a run given by id, those of the run as loaded.
    shown = {d.call_id: d.attempt for d in (given.deferred if given is not None else run.deferred)}
    named: dict[str, Decision] = {}
    for call_id, decision in decisions.items():
        request = pending[call_id]
        if not isinstance(decision, DECISIONS):
            raise ValueError(
                f"decision for call {call_id!r} is {decision!r}; expected Approve, Deny, Supply "
                "or Retry"
            )
        attempt = decision.attempt or (shown.get(call_id, 1) if given is not None else 1)
        if attempt > request.attempt:
            raise ValueError(
                f"the decision for call {call_id!r} answers attempt {attempt}, but the call "
                f"waits on attempt {request.attempt} ({request.reason}: {request.detail})"
            )
        if isinstance(decision, Approve) and request.reason == "external":
            raise ValueError(
                f"call {call_id!r} is for the external tool {request.tool!r}, which the host "
                "cannot run: answer it with Supply(result), Deny(message) or Retry(message)"
            )
        named[call_id] = with_attempt(decision, attempt)
    return Resumed(decisions=named, shown={c: shown.get(c, 0) for c in pending})


async def resume_turn(
    view: LoopView, state: RunState, adapter: ProviderAdapter, resumed: Resumed
) -> End | None:
    """Answer the calls of the run's last turn that have no result yet; the end of the run
    when the turn ends it."""
    last = pending_turn(tuple(state.messages))
    if last is None:
        state.deferred = []
        return None
    round = state.rounds
    by_id = {r.call.id: r for r in state.records if r.round == round}
    deferred = {d.call_id: d for d in state.deferred}
    calls = [c for c in last.tool_calls if not c.provider_executed]
    if all(by_id.get(c.id) is not None and by_id[c.id].result is not None for c in calls):
        state.deferred = []
        rebuild_results(state, last, round)
        return None
    turn = await start_round(view, state, adapter, round)
    turn.message = last
    entries = view.ledger.entries(state.run_id, round) if view.ledger is not None else {}
    if view.ledger is not None:  # stored with the first started row: what to recover from
        recovery = state.build(stop="interrupted", events=False)
        turn.checkpoint = Checkpoint(used=state.used, recovery=recovery)
    ids = {c.id for c in calls}
    kept = [r for r in state.records if not (r.round == round and r.call.id in ids)]
    to_admit: list[tuple[CallSlot, bool]] = []
    for call in calls:
        slot, approved = resumed_slot(
            view, state, turn, call, by_id.get(call.id), deferred.get(call.id), resumed, entries
        )
        turn.slots.append(slot)
        if approved is not None:
            to_admit.append((slot, approved))
    state.records = kept
    state.deferred = []
    end = await answer_turn(view, state, turn, to_admit)
    view.emit(state, RoundFinished(run_id=state.run_id, round=round, tool_calls=len(calls)))
    return end


def resumed_slot(
    view: LoopView,
    state: RunState,
    turn: Turn,
    call: ToolCall,
    record: ToolCallRecord | None,
    request: DeferredRequest | None,
    resumed: Resumed,
    entries: Mapping[str, LedgerEntry],
) -> tuple[CallSlot, bool | None]:
    """The slot of one call of a resumed turn, and whether it goes to admission (None: it
    is answered or waits; True: approved by a decision)."""
    tools = view.host.tools
    slot = CallSlot(call)
    if record is not None and record.result is not None:
        slot.as_recorded(record, tools.get(record.tool) if record.tool else None)
        return slot, None
    entry = entries.get(call.id)
    if entry is not None and entry.settled and entry.result is not None:
        # It ran and settled: never again, whatever the decision says.
        slot.tool = tools.get(entry.tool)
        slot.arguments = entry.arguments
        slot.answer(CallEvent.RECOVER, "recovered", entry.result)
        settle_events(view, state, turn, slot, entry.tool)
        return slot, None
    if request is not None:
        slot.defer(CallEvent.RESUME, request)
        decision = resumed.decisions.get(call.id)
        return slot, decided(view, state, turn, slot, request, decision, resumed.shown)
    # Never started, or an idempotent call (those get no started row): admit it again.
    return slot, False


def decided(
    view: LoopView,
    state: RunState,
    turn: Turn,
    slot: CallSlot,
    request: DeferredRequest,
    decision: Decision | None,
    shown: Mapping[str, int],
) -> bool | None:
    """Apply the caller's decision on a call waiting on ``request``; True when it goes to
    admission. A call that waits on a request the caller was not shown, or that the decision
    does not answer, waits again, saying so (``ToolDeferred``)."""
    tools = view.host.tools
    tool = turn.offer.tools.get(request.tool) or tools.get(request.tool)
    slot.arguments = request.arguments
    applied = apply_decision(request, decision)
    if applied.kind in ("wait", "stale"):
        slot.tool = tool
        if applied.kind == "stale" or shown.get(request.call_id) != request.attempt:
            defer(view, state, turn, slot, request)
        return None
    if applied.kind != "approve":
        answer_for_caller(view, state, turn, slot, request.tool, applied)
        return None
    assert applied.arguments is not None
    if tool is not None:
        approved(view, state, turn, slot, tool, applied)
    slot.approve(request, edited_call(slot.call, request.tool, applied.arguments))
    return True
