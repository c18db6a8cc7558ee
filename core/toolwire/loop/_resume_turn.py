"""The unfinished turn of a stored run, answered when the run is resumed.

Each call of the turn becomes a slot (:func:`resumed_slot`): answered already, decided by the
caller (:func:`decided`), recovered from the ledger, deferred as interrupted, or admitted
again; then the turn goes through :func:`~toolwire.loop._turn.answer_turn` like a fresh one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..events import RoundFinished
from ..messages import ToolCall
from ._decision import answer_for_caller, apply_decision, approved, defer
from ._resume import edited_call, interrupted_request, pending_turn, rebuild_results, stale
from ._round import start_round
from ._run import Decision, DeferredRequest, ToolCallRecord
from ._settle import settle_events
from ._state import CallSlot, Checkpoint, End, RunState, Turn
from ._turn import answer_turn

if TYPE_CHECKING:
    from ..adapters import ProviderAdapter
    from ._ledger import LedgerEntry
    from ._protocol import LoopView


async def resume_turn(
    view: LoopView, state: RunState, adapter: ProviderAdapter, decisions: Mapping[str, Decision]
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
            view, state, turn, call, by_id.get(call.id), deferred, decisions, entries
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
    deferred: Mapping[str, DeferredRequest],
    decisions: Mapping[str, Decision],
    entries: Mapping[str, LedgerEntry],
) -> tuple[CallSlot, bool | None]:
    """The slot of one call of a resumed turn, and whether it goes to admission (None: it
    is answered or deferred already; True: approved by a decision)."""
    tools = view.host.tools
    slot = CallSlot(call)
    if record is not None and record.result is not None:
        slot.tool = tools.get(record.tool) if record.tool else None
        slot.arguments = record.arguments
        slot.attempts = record.attempts
        slot.duration = record.duration
        slot.answer(record.outcome, record.result)
        return slot, None
    entry = entries.get(call.id)
    if entry is not None and entry.settled and entry.result is not None:
        # It ran and settled: never again, whatever the decision says.
        slot.tool = tools.get(entry.tool)
        slot.arguments = entry.arguments
        slot.answer("recovered", entry.result)
        settle_events(view, state, turn, slot, entry.tool)
        return slot, None
    request = deferred.get(call.id)
    if entry is not None and stale(request, entry):
        # It started and never settled: a decision taken before that is no answer.
        slot.tool = tools.get(entry.tool)
        slot.arguments = entry.arguments
        defer(view, state, turn, slot, interrupted_request(entry, turn.round, request))
        return slot, None
    if request is not None:
        return slot, decided(view, state, turn, slot, request, decisions.get(call.id))
    # Never started, or an idempotent call (those get no started row): admit it again.
    return slot, False


def decided(
    view: LoopView,
    state: RunState,
    turn: Turn,
    slot: CallSlot,
    request: DeferredRequest,
    decision: Decision | None,
) -> bool | None:
    """Apply the caller's decision on a deferred call; True when it goes to admission."""
    tools = view.host.tools
    tool = turn.offer.tools.get(request.tool) or tools.get(request.tool)
    slot.arguments = request.arguments
    applied = apply_decision(request, decision)
    if applied.kind == "wait":
        slot.defer(request)
        slot.tool = tool
        return None
    if applied.kind != "approve":
        answer_for_caller(view, state, turn, slot, request.tool, applied)
        return None
    assert applied.arguments is not None
    if tool is not None:
        approved(view, state, turn, slot, tool, applied)
    slot.request = edited_call(slot.call, request.tool, applied.arguments)
    return True
