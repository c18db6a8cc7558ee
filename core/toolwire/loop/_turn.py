"""A turn: the calls of one answer of the model admitted, executed and closed.

:func:`turn` answers a fresh turn (:func:`~toolwire.loop._resume_turn.resume_turn` the
unfinished turn of a stored run); both go through :func:`answer_turn`, and :func:`close_turn`
records the results and decides whether the run stops after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..events import LimitReached
from ..messages import AssistantMessage, TextPart, UserMessage, UserPart
from ..tools._result import ToolResult
from ._approval import admit_call
from ._budget import over_budget
from ._cancel import answer_cancelled
from ._records import store
from ._resume import rebuild_results
from ._run import RAN
from ._settle import execute
from ._state import CallSlot, RunState

if TYPE_CHECKING:
    from ._offer import Offer
    from ._protocol import LoopView


async def turn(
    view: LoopView,
    state: RunState,
    round: int,
    slots: list[CallSlot],
    offer: Offer,
    to_admit: Sequence[CallSlot] | None = None,
) -> None:
    """Answer every call of the model's last answer (``slots``): admit and run ``to_admit``
    (default: every slot; the others are answered already), unless the answer spent the run's
    budget (``[limits]``): then none runs, and the run stops."""
    last = state.messages[-1]
    assert isinstance(last, AssistantMessage)
    over = over_budget(view, state)
    if over is not None:
        stop_turn(view, state, round, slots, over.detail)
        state.finish("budget", over.detail)
        return
    state.turn.snapshot_used = state.used
    state.turn.snapshot_pending = view.ledger is not None
    admit = slots if to_admit is None else to_admit
    await answer_turn(view, state, round, offer, last, slots, [(s, False) for s in admit])


async def answer_turn(
    view: LoopView,
    state: RunState,
    round: int,
    offer: Offer,
    turn: AssistantMessage,
    slots: list[CallSlot],
    to_admit: Sequence[tuple[CallSlot, bool]],
) -> None:
    """Admit then execute the calls ``to_admit`` (each with whether it is approved already);
    afterwards every call of ``slots`` has its answer, also when the run is cancelled."""
    try:
        fail: str | None = None
        for slot, approved in to_admit:
            if fail is not None:
                slot.answer("not_run", _not_run(fail))
                continue
            fail = await admit_call(view, state, round, slot, offer, count=True, approved=approved)
        if fail is not None:
            for slot, _ in to_admit:
                if slot.result is None:
                    slot.answer("not_run", _not_run(fail))
            state.finish("fail_policy", fail)
        else:
            await execute(
                view,
                state,
                round,
                [s for s, _ in to_admit if s.result is None and s.deferred is None],
            )
    except BaseException:
        answer_cancelled(slots)
        raise
    finally:
        close_turn(view, state, round, slots, turn)


def _not_run(reason: str) -> ToolResult:
    return ToolResult.error(f"Not run: the run stopped before this call ({reason}).")


def stop_turn(
    view: LoopView, state: RunState, round: int, slots: list[CallSlot], reason: str
) -> None:
    """Answer every call of the model's last answer as not run (the run stops before any runs,
    for ``reason``) and close the turn."""
    last = state.messages[-1]
    assert isinstance(last, AssistantMessage)
    for slot in slots:
        if slot.result is None:
            slot.answer("not_run", _not_run(reason))
    close_turn(view, state, round, slots, last)


def close_turn(
    view: LoopView, state: RunState, round: int, slots: list[CallSlot], turn: AssistantMessage
) -> None:
    """Record the turn's calls and results; finish the run when a call was fatal to it, or
    when the turn left it deferred, cancelled, out of tool calls or past its deadline."""
    fatal = state.turn.fatal
    for slot in slots:
        if fatal is not None and slot.result is None:  # the run ends: nothing waits on it
            slot.answer("not_run", ToolResult.error(f"Not run: {fatal}."))
        state.records.append(slot.record(round))
        if slot.deferred is not None:
            state.deferred.append(slot.deferred)
        spent = slot.result
        if slot.outcome == "executed" and spent is not None and spent.usage is not None:
            state.charge(spent.usage, spent.cost)  # a run started as a tool
    rebuild_results(state, turn, round)
    if not any(slot.deferred is not None for slot in slots):
        message = follow_up(slots)
        if message is not None:
            state.messages.append(message)
    if state.turn.turn_started and view.ledger is not None:
        state.turn.turn_started = False
        store(view, state, None)  # the turn's side effects are settled: say so now
    if fatal is not None:
        state.finish("tool_fatal", fatal)
    elif state.deferred:
        listed = ", ".join(f"{d.tool} ({d.call_id}: {d.reason})" for d in state.deferred)
        state.finish("deferred", f"waiting for a decision on: {listed}")
    elif state.control.cancel_requested or (
        state.control.cancelled_flag is not None and state.control.cancelled_flag.is_set()
    ):
        state.finish("cancelled", "the run was cancelled")
    elif state.turn.budget_hit:
        state.finish(
            "max_tool_calls",
            f"the run reached its limit of {view.config.loop.max_tool_calls} tool call(s) "
            "([loop] max_tool_calls)",
        )
    elif state.turn.deadline_hit:
        deadline_reached(view, state)


def follow_up(slots: list[CallSlot]) -> UserMessage | None:
    """The user message of the follow-up content of a turn's results (of the calls a tool or
    the caller answered), in call order; None when there is none."""
    parts: list[UserPart] = []
    for slot in slots:
        result = slot.result
        if result is None or not result.follow_up or slot.outcome not in RAN:
            continue
        parts.extend(TextPart(p) if isinstance(p, str) else p for p in result.follow_up)
    return UserMessage(tuple(parts)) if parts else None


def deadline_reached(view: LoopView, state: RunState) -> None:
    """Finish the run as past its deadline (``LimitReached`` unless it had stopped already)."""
    seconds = view.config.loop.deadline_seconds or 0
    if state.stop is None:
        view.emit(
            state,
            LimitReached(
                run_id=state.run_id,
                round=state.rounds or None,
                limit="deadline",
                value=seconds,
            ),
        )
    state.finish(
        "deadline", f"the run's deadline of {seconds:g} s passed ([loop] deadline_seconds)"
    )
