"""A decision on a call that waits: what it means, in one place (:func:`apply_decision`), and the
events of a call that waits (:func:`defer`), is approved (:func:`approved`) or is answered by
the caller instead of the tool (:func:`answer_for_caller`).

A decision comes from the run's approver or external handler (:func:`external_decision`) while
the run goes (on a call admission deferred, or one that asked for approval or deferred itself
while it ran) or from ``resume`` (on a stored run's request). What
it does to the call is the same; how it is carried out depends on where the call is in its life
(:mod:`toolwire.loop._lifecycle`): a call that has not started is answered or admitted again, one
that is running gets its answer or goes on.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import attrs

from .._redact import redact_arguments
from ..events import ToolApproved, ToolDeferred, ToolStarted
from ..tools._errors import Retry, decision_result, result_for
from ..tools._model import returned_result
from ..tools._result import ToolResult
from ._lifecycle import CallEvent
from ._run import Approve, Decision, DeferredRequest, Deny, Supply
from ._settle import settle_events
from ._state import CallSlot, RunControl, RunState, Turn

if TYPE_CHECKING:
    from ..tools import Tool
    from ._view import LoopView


@attrs.frozen
class Applied:
    """What a decision does to the call it answers.

    ``wait``: nothing yet (no decision); ``stale``: the decision answers another request of
    the call than the one it waits on (an earlier one: the call was interrupted since), so the
    call waits again; ``deny``, ``supply`` and ``retry``: the call is answered with ``result``
    instead of running (``retry``: the retryable error of a ``Retry``, which tells the model
    to call again); ``approve``: the call runs with ``arguments`` (``edited``: other than
    those it asked with, validated again before it runs).
    """

    kind: Literal["wait", "stale", "deny", "supply", "retry", "approve"]
    result: ToolResult | None = None
    arguments: Mapping[str, Any] | None = None
    edited: bool = False

    @property
    def outcome(self) -> Literal["denied", "supplied", "retry"]:
        """The outcome of a call this decision answered (``deny``, ``supply`` or ``retry``)."""
        return _ANSWERED[self.kind]


_ANSWERED: dict[str, Literal["denied", "supplied", "retry"]] = {
    "deny": "denied",
    "supply": "supplied",
    "retry": "retry",
}


WAIT = Applied("wait")
STALE = Applied("stale")


def apply_decision(request: DeferredRequest, decision: Any) -> Applied:
    """What ``decision`` (an approver's answer, or one given to ``resume``) does to the call
    waiting on ``request``: a decision answers the request whose attempt it names (none named:
    the one it was asked about).

    :raises TypeError: for an answer that is not a decision (nor None, which waits).
    """
    if decision is None:
        return WAIT
    attempt = getattr(decision, "attempt", None)
    if attempt is not None and attempt != request.attempt:
        return STALE
    if isinstance(decision, Deny):
        return Applied("deny", result=ToolResult.denied(decision.message))
    if isinstance(decision, Supply):
        return Applied("supply", result=decision.result)
    if isinstance(decision, Retry):
        return Applied("retry", result=decision_result(decision, request.tool))
    if isinstance(decision, Approve):
        if decision.arguments is None:
            return Applied("approve", arguments=request.arguments)
        return Applied("approve", arguments=decision.arguments, edited=True)
    raise TypeError(
        f"the approval callback returned {decision!r}; expected Approve, Deny, Supply, Retry "
        "or None"
    )


async def external_decision(
    control: RunControl, request: DeferredRequest, tool: Tool
) -> Decision | None:
    """The run's external handler's answer to a call the host does not run (``request``: an
    external tool's call, or one deferred by ``CallDeferred``), as a decision: its own
    decision, its result as :class:`Supply`, or None (no handler, or it left the call deferred).
    Nothing it does ends the run: an exception it raises, a value that is not JSON, or an
    ``Approve`` of a call the host cannot run answer the call with an error result."""
    handler = control.external
    if handler is None:
        return None
    try:
        answer = handler(request)
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception as exc:
        return Supply(result_for(exc, tool, request.arguments, by_tool=True))
    if answer is None or isinstance(answer, Deny | Supply | Retry):
        return answer
    if isinstance(answer, Approve):
        if request.reason != "external":
            return answer
        return Supply(
            ToolResult.error(
                f"Not run: the external handler answered Approve() for {tool.name}, which the "
                "host cannot run (its calls are the caller's to run); it answers with the "
                "call's result, Deny(message) or Retry(message).",
                retryable=False,
            )
        )
    return Supply(returned_result(answer, by="the external handler"))


def answer_for_caller(
    view: LoopView,
    state: RunState,
    turn: Turn,
    slot: CallSlot,
    name: str,
    applied: Applied,
    *,
    inline: bool = False,
) -> None:
    """Answer a call that has not started as the caller decided (``ToolStarted`` saying so,
    then the result's event): denied, with the result the caller supplied, or with a retry
    prompt. A retry counts against ``[loop] max_tool_calls`` like a call that ran and raised
    ``Retry`` (it invites the model to call again), and so does a result the external handler
    supplied while the run goes on (``inline``: the call ran, elsewhere, within the run)."""
    assert applied.result is not None
    slot.tool = slot.tool or view.host.tools.get(name)
    answer = applied.outcome
    if answer == "retry" or (inline and answer == "supplied"):
        state.used += 1
    sensitive = slot.tool.sensitive_arguments if slot.tool is not None else frozenset()
    view.emit(
        state,
        ToolStarted(
            run_id=state.run_id,
            round=turn.round,
            call_id=slot.call.id,
            name=name,
            arguments=redact_arguments(slot.arguments or {}, sensitive),
            answer=answer,
        ),
    )
    slot.answer(CallEvent.RETRY if answer == "retry" else CallEvent.ANSWER, answer, applied.result)
    settle_events(view, state, turn, slot, name)


def approved(
    view: LoopView, state: RunState, turn: Turn, slot: CallSlot, tool: Tool, applied: Applied
) -> None:
    """Emit ``ToolApproved`` for a call the approver or a ``resume`` approved."""
    view.emit(
        state,
        ToolApproved(
            run_id=state.run_id,
            round=turn.round,
            call_id=slot.call.id,
            name=tool.name,
            arguments=redact_arguments(applied.arguments or {}, tool.sensitive_arguments),
            edited=applied.edited,
        ),
    )


def defer(
    view: LoopView,
    state: RunState,
    turn: Turn,
    slot: CallSlot,
    request: DeferredRequest,
    event: str = CallEvent.DEFER,
) -> None:
    """Leave the call waiting for a decision on ``request`` (``ToolDeferred``); ``event``:
    ``defer``, or ``ask`` for a call that asked while it ran."""
    slot.defer(event, request)
    state.forget(slot)
    view.emit(
        state,
        ToolDeferred(
            run_id=state.run_id,
            round=turn.round,
            call_id=slot.call.id,
            name=request.tool,
            reason=request.detail,
        ),
    )
