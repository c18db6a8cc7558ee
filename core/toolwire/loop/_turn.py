"""A turn: the calls of one answer of the model admitted, executed and closed.

:func:`answer_turn` answers the calls of a fresh turn and of the unfinished turn of a resumed
run (:func:`~toolwire.loop._resume_turn.resume_turn`); :func:`close_turn` records the results
and says whether the run ends after the turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from ..events import LimitReached
from ..messages import (
    AssistantMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    UserPart,
)
from ..tools._result import ToolResult
from ._admit import admit_call
from ._budget import over_budget
from ._cancel import answer_cancelled
from ._execute import execute
from ._lifecycle import CallEvent, store
from ._run import RAN, ToolCallRecord
from ._state import CallSlot, Checkpoint, End, RunState, Turn

if TYPE_CHECKING:
    from ._view import LoopView


async def take_turn(
    view: LoopView,
    state: RunState,
    turn: Turn,
    slots: list[CallSlot],
    to_admit: Sequence[CallSlot] | None = None,
) -> End | None:
    """Answer every call of the model's last answer (``slots``): admit and run ``to_admit``
    (default: every slot; the others are answered already), unless the answer spent the run's
    budget (``[limits]``): then none runs, and the run ends. Returns the end of the run when
    the turn ends it."""
    turn.message = state.messages[-1]  # type: ignore[assignment]
    turn.slots = slots
    over = over_budget(view, state)
    if over is not None:
        stop_turn(view, state, turn, over.detail)
        return End("budget", over.detail)
    if view.ledger is not None:
        turn.checkpoint = Checkpoint(used=state.used)
    admit = slots if to_admit is None else to_admit
    return await answer_turn(view, state, turn, [(s, False) for s in admit])  # none approved


async def answer_turn(
    view: LoopView, state: RunState, turn: Turn, to_admit: Sequence[tuple[CallSlot, bool]]
) -> End | None:
    """Admit then execute the calls ``to_admit`` (each with whether it is approved already);
    afterwards every call of the turn has its answer, also when the run is cancelled. Returns
    the end of the run when the turn ends it."""
    end: End | None = None
    turn.recorded = False  # admission may read the calls anew
    try:
        fail: str | None = None
        for slot, approved in to_admit:
            if fail is not None:
                slot.answer(CallEvent.STOP, "not_run", _not_run(fail))
                continue
            fail = await admit_call(view, state, turn, slot, count=True, approved=approved)
        record_calls(state, turn)  # before any call starts: the ledger's snapshot shows them
        if fail is not None:
            for slot, _ in to_admit:
                if slot.result is None:
                    slot.answer(CallEvent.STOP, "not_run", _not_run(fail))
            end = End("fail_policy", fail)
        else:
            admitted = []  # neither answered at admission nor waiting for a decision
            for slot, _ in to_admit:
                if slot.result is None and slot.deferred is None:
                    admitted.append(slot)
            await execute(view, state, turn, admitted)
    except BaseException:
        answer_cancelled(turn.slots)
        raise
    finally:
        close_turn(view, state, turn)
    return end or turn_end(view, state, turn)


def _not_run(reason: str) -> ToolResult:
    return ToolResult.error(f"Not run: the run stopped before this call ({reason}).")


def stop_turn(view: LoopView, state: RunState, turn: Turn, reason: str) -> None:
    """Answer every call of the turn that has no answer as not run (the run stops for
    ``reason``) and close the turn."""
    for slot in turn.slots:
        if slot.result is None:
            slot.answer(CallEvent.STOP, "not_run", _not_run(reason))
    close_turn(view, state, turn)


def close_turn(view: LoopView, state: RunState, turn: Turn) -> None:
    """Record the turn's calls and results (a call fatal to the run leaves the ones that did
    not start answered as not run), and charge the run what the runs its calls started as
    tools spent."""
    fatal = turn.fatal()
    waiting = False  # a call of the turn waits for a decision
    for slot in turn.slots:
        if fatal is not None and slot.result is None:  # the run ends: nothing waits on it
            slot.answer(CallEvent.STOP, "not_run", ToolResult.error(f"Not run: {fatal}."))
        state.records.append(slot.record(turn.round))
        if slot.deferred is not None:
            state.deferred.append(slot.deferred)
            waiting = True
        spent = slot.result
        if slot.outcome == "executed" and spent is not None and spent.usage is not None:
            state.charge(spent.usage, spent.cost)  # a run started as a tool
    if not turn.recorded:  # not since the calls were admitted
        record_calls(state, turn)
    assert turn.message is not None
    rebuild_results(state, turn.message, turn.round)
    if not waiting:
        message = follow_up(turn.slots)
        if message is not None:
            state.messages.append(message)
    if turn.wrote_rows and view.ledger is not None:
        turn.wrote_rows = False
        store(view, state, None)  # the turn's side effects are settled: say so now


def record_calls(state: RunState, turn: Turn) -> None:
    """Put the turn's calls as admission read them (:func:`~toolwire.loop._admission.as_read`:
    repaired arguments) into its message, in the run's messages, so the history holds the
    arguments that ran and the next request sends them back to the model."""
    message = turn.message
    if message is None:
        return
    turn.recorded = True
    read: dict[str, ToolCall] = {}
    for slot in turn.slots:
        read[slot.call.id] = slot.call
    for part in message.parts:
        if isinstance(part, ToolCall) and read.get(part.id, part) is not part:
            break
    else:
        return  # every call is in the message as read
    parts = tuple(
        read.get(part.id, part) if isinstance(part, ToolCall) else part for part in message.parts
    )
    turn.message = attrs.evolve(message, parts=parts)
    messages = state.messages
    for index in range(len(messages) - 1, -1, -1):
        if messages[index] is message:
            messages[index] = turn.message
            break


def turn_end(view: LoopView, state: RunState, turn: Turn) -> End | None:
    """Whether the run ends after a closed turn, and why (None: it goes on): a call was fatal
    to it, or the turn left it deferred, cancelled, out of tool calls or past its deadline."""
    fatal = turn.fatal()
    if fatal is not None:
        return End("tool_fatal", fatal)
    if state.deferred:
        listed = ", ".join(f"{d.tool} ({d.call_id}: {d.reason})" for d in state.deferred)
        return End("deferred", f"waiting for a decision on: {listed}")
    if state.control.cancelling:
        return End("cancelled", "the run was cancelled")
    if "max_tool_calls" in turn.limits:
        return End(
            "max_tool_calls",
            f"the run reached its limit of {view.config.loop.max_tool_calls} tool call(s) "
            "([loop] max_tool_calls)",
        )
    if "deadline" in turn.limits:
        return deadline_reached(view, state)
    return None


def rebuild_results(state: RunState, turn: AssistantMessage, round: int) -> None:
    """Put the turn's results after it, in call order (deferred calls have none yet)."""
    messages = state.messages
    index = len(messages)
    while index > 0 and isinstance(messages[index - 1], ToolResultMessage):
        index -= 1
    del messages[index:]
    results = round_records(state.records, round)
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


def round_records(records: list[ToolCallRecord], round: int) -> dict[str, ToolCallRecord]:
    """The records of round ``round`` by call id (of a call recorded twice, the later record).

    Records are kept in round order and ``round`` is the run's last, so its records are the
    tail of the list: the scan stops at the first earlier round, and a round costs what its
    own calls do, not what the whole run recorded so far.
    """
    found: dict[str, ToolCallRecord] = {}
    for index in range(len(records) - 1, -1, -1):
        record = records[index]
        if record.round < round:
            break
        if record.round == round:
            found.setdefault(record.call.id, record)
    return found


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


def deadline_reached(view: LoopView, state: RunState) -> End:
    """The run ends past its deadline (``LimitReached`` announces it)."""
    seconds = view.config.loop.deadline_seconds or 0
    view.emit(
        state,
        LimitReached(
            run_id=state.run_id, round=state.rounds or None, limit="deadline", value=seconds
        ),
    )
    return End("deadline", f"the run's deadline of {seconds:g} s passed ([loop] deadline_seconds)")
