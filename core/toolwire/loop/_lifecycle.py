"""A tool call's life, as one state machine: its states, the events that move it, the allowed
transitions, and for each the ledger write that comes first.

Every call the model makes starts ``proposed`` and ends ``refused``, ``answered``, ``settled`` or
``recovered``, or waits ``deferred`` when the run ends. A call of a tool that is not idempotent
has one row in the tool-effect ledger from its first start on, and every change of that row is
a compare-and-set (see :class:`~toolwire.loop._ledger_store.LedgerStore`): started once per
attempt, by one owner that keeps a lease while it runs (:mod:`toolwire.loop._lease`), settled
or deferred only by that owner at that attempt, started again only from the row exactly as a
decision on its latest request found it. :data:`TRANSITIONS` is the table ``docs/ledger.md``
shows; :func:`step` is how the stages move a call, and refuses a move the table does not have.

The ledger writes of the transitions are here too: :func:`send_recorded` (``start``, then
``settle``: :func:`record_start`, :func:`with_ledger`) and :func:`ask_running`; and the run's
own record, with the turn's first ``started`` row (:func:`pending_snapshot`), at the end of a
turn that wrote rows and at the end of the run (:func:`store`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import attrs

from .._contain import describe
from ..events import PluginFailed
from ..tools._result import ToolResult
from ._run import Outcome, Run

if TYPE_CHECKING:
    from ._ledger import Ledger
    from ._state import CallSlot, RunState, Turn
    from ._view import LoopView


class CallState:
    """Where a call is in its life (plain strings: a transition is looked up per call)."""

    PROPOSED: Final = "proposed"
    """In the model's answer, not admitted yet (or admitted again after an approval)."""
    REFUSED: Final = "refused"
    """Answered by admission: unknown tool, invalid arguments, duplicate, a limit."""
    DEFERRED: Final = "deferred"
    """Waits for a decision on a request (approval, external, deferred, interrupted)."""
    ADMITTED: Final = "admitted"
    """Will run: its tool and validated arguments are known."""
    STARTED: Final = "started"
    """Runs; a non-idempotent call's ledger row is ``started``, held by this process."""
    SETTLED: Final = "settled"
    """It ran and has its result."""
    ANSWERED: Final = "answered"
    """Answered without running: denied or supplied by the caller, told to retry, or not run."""
    RECOVERED: Final = "recovered"
    """A resume found it settled in the ledger: its stored result answers it."""


class CallEvent:
    """What happens to a call."""

    ADMIT: Final = "admit"
    REFUSE: Final = "refuse"
    DEFER: Final = "defer"
    APPROVE: Final = "approve"
    ANSWER: Final = "answer"
    RETRY: Final = "retry"
    START: Final = "start"
    CLAIMED: Final = "claimed"
    SETTLE: Final = "settle"
    ASK: Final = "ask"
    STOP: Final = "stop"
    RESUME: Final = "resume"
    RECOVER: Final = "recover"


@attrs.frozen
class Transition:
    """One allowed move: from ``source`` on ``event`` to ``target``; ``ledger`` is what the
    ledger writes first (for a call of a tool that is not idempotent), ``emits`` the events."""

    source: str
    event: str
    target: str
    ledger: str
    emits: str


_P, _R, _D = CallState.PROPOSED, CallState.REFUSED, CallState.DEFERRED
_A, _S, _X = CallState.ADMITTED, CallState.STARTED, CallState.SETTLED
_N, _C = CallState.ANSWERED, CallState.RECOVERED
_E = CallEvent
_NONE = "—"

TRANSITIONS: tuple[Transition, ...] = (
    Transition(_P, _E.ADMIT, _A, _NONE, "`UnknownTool`/`InvalidArguments` when repaired"),
    Transition(
        _P,
        _E.REFUSE,
        _R,
        _NONE,
        "`UnknownTool`, `InvalidArguments`, `DuplicateSuppressed` or `LimitReached`",
    ),
    Transition(_P, _E.DEFER, _D, "the run record when the run ends", "`ToolDeferred`"),
    Transition(_D, _E.APPROVE, _P, _NONE, "`ToolApproved`; admitted again, as approved"),
    Transition(
        _D,
        _E.ANSWER,
        _N,
        _NONE,
        "`ToolStarted` (`answer`: denied or supplied), then `ToolDenied` or the result's event",
    ),
    Transition(
        _D,
        _E.RETRY,
        _N,
        _NONE,
        "`ToolStarted` (`answer`: retry), then `ToolFailed` (a `retryable` error: the model "
        "is told to call again; counted against `max_tool_calls`)",
    ),
    Transition(
        _D,
        _E.DEFER,
        _D,
        "the run record when the run ends",
        "`ToolDeferred` when the request is new to the caller or the decision was on an "
        "earlier one",
    ),
    Transition(
        _A,
        _E.START,
        _S,
        "`started` row: inserted (attempt 1), or taken over from the row as a decision on its "
        "latest request found it (attempt + 1); owner and lease; the turn's first also writes "
        "the run record",
        "`ToolStarted`",
    ),
    Transition(
        _A,
        _E.CLAIMED,
        _N,
        "the `started` row is refused (another process has the call, or the ledger fails)",
        "`ToolStarted`, `ToolFailed` (Not run: …)",
    ),
    Transition(
        _S,
        _E.SETTLE,
        _X,
        "`settled` row by its owner at its attempt, with the next write; the lease is let go",
        "`ToolCompleted`, `ToolFailed`, `ToolBlocked` or `ToolDenied`",
    ),
    Transition(
        _S,
        _E.ASK,
        _D,
        "row to `deferred` by its owner at its attempt, with the next write; the lease is let go",
        "`ToolDeferred` (or the approver or the external handler answers and it goes on running)",
    ),
    *(
        Transition(
            state,
            _E.STOP,
            _N,
            _NONE,
            "— (the run stops: a `fail` policy, a fatal call, cancellation, a budget, the "
            "typed answer)",
        )
        for state in (_P, _D, _A, _S)
    ),
    Transition(
        _P,
        _E.RESUME,
        _D,
        "— (reads its row: a start nobody runs any more makes the request an interrupted one)",
        "— (a `defer` follows when the caller was not shown that request)",
    ),
    Transition(_P, _E.RECOVER, _C, "— (reads its `settled` row)", "the result's event"),
)
"""Every allowed transition of a call."""

_NEXT: dict[tuple[str, str], str] = {(t.source, t.event): t.target for t in TRANSITIONS}


class LifecycleError(AssertionError):
    """A stage moved a call in a way the lifecycle does not allow: a bug of the loop."""


def step(slot: CallSlot, event: str) -> None:
    """Move the call of ``slot`` on ``event``.

    :raises LifecycleError: when :data:`TRANSITIONS` has no such move from its state.
    """
    target = _NEXT.get((slot.state, event))
    if target is None:
        raise LifecycleError(
            f"call {slot.call.id}: {event!r} is not allowed while it is {slot.state} "
            "(see toolwire.loop._lifecycle.TRANSITIONS)"
        )
    slot.state = target


def transition_table() -> str:
    """:data:`TRANSITIONS` as the Markdown table of ``docs/ledger.md``."""
    lines = [
        "| state | event | next state | ledger write first | events emitted |",
        "|---|---|---|---|---|",
    ]
    for t in TRANSITIONS:
        cells = (t.source, t.event, t.target, t.ledger, t.emits)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# -- the ledger writes of start, settle and ask ------------------------------------------------


class LedgerRow(NamedTuple):
    """The identity of a call's rows in the tool-effect ledger (a tuple: one is made for every
    call the ledger records)."""

    run_id: str
    round: int
    call_id: str
    tool: str
    arguments: Mapping[str, Any]
    idempotent: bool


Send = Callable[[], Awaitable[tuple[ToolResult, Outcome]]]


async def send_recorded(
    view: LoopView,
    state: RunState,
    turn: Turn,
    slot: CallSlot,
    arguments: Mapping[str, Any],
    send: Send,
) -> tuple[ToolResult, Outcome] | ToolResult:
    """``start`` an admitted call and ``send`` it, timed: for a tool that is not idempotent,
    the ``started`` row first (with the run record when it is the turn's first), then its
    result as the ``settled`` row. What ``send`` returned, or the refusal of a start the
    ledger did not record (``claimed``: the call did not run, its slot is not answered yet).
    """
    tool = slot.tool
    assert tool is not None
    ledger = view.ledger
    if ledger is None:  # no rows to build or write: the retries are the outermost layer
        step(slot, CallEvent.START)
        started = time.perf_counter()
        try:
            return await send()
        finally:
            slot.duration = time.perf_counter() - started
    row = LedgerRow(
        state.run_id, turn.round, slot.call.id, tool.name, arguments, tool.policy.idempotent
    )
    if not row.idempotent:
        after = slot.answers.starts if slot.answers is not None else 0
        attempt = record_start(ledger, row, pending_snapshot(state, turn), after)
        if isinstance(attempt, ToolResult):
            return attempt
        slot.row = attempt
        turn.wrote_rows = True
    step(slot, CallEvent.START)
    return await with_ledger(ledger, row, slot, send)


def pending_snapshot(state: RunState, turn: Turn | None) -> Run | None:
    """The run as it stands, once per turn, to store with the turn's first ``started`` row (a
    resume's own recovery snapshot when it has one)."""
    checkpoint = turn.checkpoint if turn is not None else None
    if checkpoint is None:
        return None
    turn.checkpoint = None  # type: ignore[union-attr]
    if checkpoint.recovery is not None:
        return attrs.evolve(checkpoint.recovery, tool_calls_used=checkpoint.used)
    return state.build(stop="interrupted", events=False, used=checkpoint.used)


def record_start(
    ledger: Ledger, row: LedgerRow, snapshot: Run | None, after: int = 0
) -> int | ToolResult:
    """Commit the ``started`` row of a call with side effects, its start after ``after`` earlier
    ones (see :meth:`Ledger.started`); the attempt it started as, or the refusal when the
    ledger cannot record it or another process has the call (fail closed: it does not run)."""
    try:
        return ledger.started(
            row.run_id,
            row.round,
            row.call_id,
            row.tool,
            row.arguments,
            idempotent=False,
            snapshot=snapshot,
            after=after,
        )
    except Exception as exc:
        return ToolResult.error(
            f"Not run: the tool-effect ledger {ledger.location!r} cannot record the call "
            f"({describe(exc)})."
        )


async def with_ledger(
    ledger: Ledger | None, row: LedgerRow | None, slot: CallSlot, send: Send
) -> tuple[ToolResult, Outcome]:
    """Run ``send`` timed into ``slot.duration``; with a ledger, the result goes to it as the
    call's ``settled`` row (also when the task is cancelled and the slot was answered)."""
    started = time.perf_counter()
    result: ToolResult | None = None
    try:
        result, outcome = await send()
    finally:
        slot.duration = time.perf_counter() - started
        if result is None:
            result = slot.result
        if result is not None and ledger is not None and row is not None:
            ledger.settled(
                row.run_id,
                row.round,
                row.call_id,
                row.tool,
                row.arguments,
                result,
                idempotent=row.idempotent,
            )
    return result, outcome


def ask_running(view: LoopView, state: RunState, turn: Turn, slot: CallSlot) -> None:
    """The ledger write of ``ask``: a call that started asked for a decision before it took
    effect; its row waits for it (``deferred``, with the ledger's next write) and nobody runs
    it any more."""
    if slot.row and view.ledger is not None and slot.tool is not None:
        view.ledger.waiting(
            state.run_id, turn.round, slot.call.id, slot.tool.name, slot.arguments or {}
        )


def store(view: LoopView, state: RunState, run: Run | None) -> None:
    """Store the run's final snapshot (None: only the pending settled rows); a ledger that
    fails is reported as a ``PluginFailed`` and never costs the run its result."""
    ledger = view.ledger
    if ledger is None:
        return
    try:
        if run is None:
            ledger.flush()
        else:
            ledger.save_run(run)
    except Exception as exc:
        view.emit(
            state,
            PluginFailed(
                run_id=state.run_id,
                round=state.rounds or None,
                plugin="toolwire.ledger",
                hook="ledger",
                error=f"the run could not be stored in {ledger.location!r}: {describe(exc)}",
            ),
        )
