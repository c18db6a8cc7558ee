"""Admission's verdict applied to a slot: refused, admitted, deferred or put to the approver.

:func:`admit_call` asks :func:`~toolwire.loop._admission.admit` (pure) and applies what it
returns; :func:`decide` asks the run's approver (or its external handler) and applies the
decision (:func:`~toolwire.loop._decision.apply_decision`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..messages import ToolCall
from ._admission import AdmissionContext, Admitted, NeedsDecision, Refused, admit
from ._decision import answer_for_caller, apply_decision, approved, defer, external_decision
from ._lifecycle import CallEvent, step
from ._reconcile import edited_call
from ._state import CallSlot, RunState, Turn

if TYPE_CHECKING:
    from ._view import LoopView


async def admit_call(
    view: LoopView,
    state: RunState,
    turn: Turn,
    slot: CallSlot,
    *,
    count: bool = True,
    approved: bool = False,
) -> str | None:
    """Admit one call through :func:`admit` and apply the verdict; returns a reason when a
    ``fail`` policy stops the run.

    On return the slot is answered (refused), deferred, or admitted (``tool`` and
    ``arguments`` set, no result yet). A call the approver approves (as asked, or with edited
    arguments) is admitted again, as approved; a call that waits for a decision counts only
    once approved.
    """
    while True:
        verdict = admit(
            slot.request, turn.offer, admission_context(view, state, turn, count, approved)
        )
        for event in verdict.events:
            view.emit(state, event)
        if verdict.counted:
            state.used += 1
        if verdict.call is not None:  # its arguments as read: the turn records them
            slot.call = slot.request = verdict.call
        if isinstance(verdict, Refused):
            refuse(turn, slot, verdict)
            return verdict.fail
        slot.tool = verdict.tool
        slot.arguments = verdict.arguments
        if isinstance(verdict, Admitted):
            step(slot, CallEvent.ADMIT)
            if verdict.key is not None:
                state.remember(slot, verdict.key)
            slot.approved = slot.approved or approved
            return None
        edited = await decide(view, state, turn, slot, verdict)
        if edited is None:
            return None
        slot.approve(verdict.request, edited)
        count, approved = True, True  # not counted while it waited


def admission_context(
    view: LoopView, state: RunState, turn: Turn, count: bool, approved: bool
) -> AdmissionContext:
    """What admission reads about the run, taken now."""
    pipeline = view.pipeline
    control = state.control
    return AdmissionContext(
        run_id=state.run_id,
        round=turn.round,
        loop=view.config.loop,
        used=state.used,
        budget_hit="max_tool_calls" in turn.limits,
        cancel_requested=count and control.cancel is not None and control.cancel.is_set(),
        deadline_passed=count and control.deadline is not None and control.deadline_passed(),
        seen=state.seen,
        refusal_reason=pipeline.refusal_reason,
        approval_reason=pipeline.approval_reason,
        count=count,
        approved=approved,
        tools=view.host.tools,
    )


def refuse(turn: Turn, slot: CallSlot, verdict: Refused) -> None:
    """Answer a refused call with the verdict's result; note the limit it hit."""
    if verdict.tool is not None:
        slot.tool = verdict.tool
    if verdict.arguments is not None:
        slot.arguments = verdict.arguments
    if verdict.budget_hit:
        turn.limits.add("max_tool_calls")
    if verdict.deadline_hit:
        turn.limits.add("deadline")
    slot.answer(CallEvent.REFUSE, verdict.outcome, verdict.result)


async def decide(
    view: LoopView, state: RunState, turn: Turn, slot: CallSlot, verdict: NeedsDecision
) -> ToolCall | None:
    """Ask about a call admission did not let run and apply the answer: the run's approver
    about one ``[policy]`` wants approved, its external handler about a call the host does not
    run (``external``); returns the call to admit again, as approved (with the arguments
    approved)."""
    step(slot, CallEvent.DEFER)  # it waits while the approver decides
    request = verdict.request
    external = verdict.reason == "external"
    if external:
        decision = await external_decision(state.control, request, verdict.tool)
    else:
        decision = await state.control.ask(request)
    applied = apply_decision(request, decision)
    name = verdict.tool.name
    if applied.kind in ("wait", "stale"):
        defer(view, state, turn, slot, request)
        return None
    if applied.kind != "approve":
        answer_for_caller(view, state, turn, slot, name, applied, inline=external)
        return None
    assert applied.arguments is not None
    approved(view, state, turn, slot, verdict.tool, applied)
    return edited_call(slot.request, name, applied.arguments)
