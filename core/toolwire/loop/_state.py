"""The state of a run while it goes (:class:`RunState`), how it is steered (:class:`RunControl`),
one turn of it (:class:`Turn`), each call's slot (:class:`CallSlot`), and how a run ends
(:class:`End`)."""

from __future__ import annotations

import asyncio
import inspect
import types
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs

from .._request import conversation_key
from .._trust import TrustLevel
from ..adapters._base import NamedToolChoice
from ..events import Event
from ..messages import AssistantMessage, Message, SystemMessage, ToolCall
from ..tools._errors import ToolFatal
from ..tools._result import Source, ToolResult
from ..usage import Usage, total_usage
from ._ids import taken_ids
from ._lifecycle import CallEvent, CallState, step
from ._run import Decision, DeferredRequest, Outcome, Run, RunOptions, StopReason, ToolCallRecord

if TYPE_CHECKING:
    from .._selection import Selection
    from ..tools import Tool
    from ._offer import Offer


_NO_VALUES: Mapping[str, Any] = types.MappingProxyType({})

Approver: TypeAlias = Callable[[DeferredRequest], Decision | Awaitable[Decision | None] | None]
"""Decides a call that needs approval while the run goes on; None defers it (ends the run)."""

ExternalHandler: TypeAlias = Callable[[DeferredRequest], Any]
"""Answers a call the host does not run itself while the run goes on: a call of an external
tool (or any call, with ``[loop] execute_tools = false``), or one a tool or a middleware
deferred (``CallDeferred``). It gets the call's :class:`DeferredRequest` and returns (or, when
async, resolves to) a decision (``Supply``, ``Deny``, ``Retry``; ``Approve`` runs a deferred
call again, approved), the call's result (what a tool may return: a ``ToolResult``, a ``str``,
JSON data), or None to leave the call deferred (the run ends ``deferred``, as without a
handler). An exception it raises answers the call with an error result."""


@attrs.frozen
class End:
    """How a run ends: its stop reason, the detail for people, and the exception behind an
    ``error``. Stages return it; only the driver writes it into the run."""

    reason: StopReason
    detail: str | None = None
    error: BaseException | None = attrs.field(default=None, eq=False, repr=False)


class CallSlot:
    """The working state of one call of a turn: where it is in its life (:attr:`state`, moved
    only along :data:`~toolwire.loop._lifecycle.TRANSITIONS`), what it runs as, its answer."""

    __slots__ = (
        "answers",
        "approved",
        "arguments",
        "attempts",
        "call",
        "deferred",
        "duration",
        "key",
        "outcome",
        "request",
        "result",
        "row",
        "state",
        "tool",
    )

    def __init__(self, call: ToolCall) -> None:
        self.call = call  # as the model sent it
        self.request = call  # what admission looks at (edited arguments after an approval)
        self.tool: Tool | None = None
        self.arguments: Mapping[str, Any] | None = None
        self.result: ToolResult | None = None
        self.outcome: Outcome | None = None
        self.deferred: DeferredRequest | None = None
        self.attempts = 0
        self.duration: float | None = None
        self.key: str | None = None
        self.approved = False  # a person (or the approver) approved this call
        self.answers: DeferredRequest | None = None  # the request an approval answered
        self.row = 0  # the attempt its ledger row started as (0: no started row)
        self.state = CallState.PROPOSED

    def answer(self, event: str, outcome: Outcome, result: ToolResult) -> None:
        """Give the call its result on ``event`` (a call that waited for a decision waits no
        more)."""
        step(self, event)
        self.outcome = outcome
        self.result = result
        self.deferred = None

    def defer(self, event: str, request: DeferredRequest) -> None:
        """Leave the call without a result until the caller decides ``request``."""
        step(self, event)
        self.outcome = "deferred"
        self.deferred = request

    def approve(self, request: DeferredRequest, call: ToolCall) -> None:
        """A decision on ``request`` approved the call: it is admitted again as ``call`` (its
        approved arguments) and waits no more."""
        step(self, CallEvent.APPROVE)
        self.answers = request
        self.request = call
        self.outcome = None
        self.deferred = None
        self.tool = None
        self.arguments = None

    def as_recorded(self, record: ToolCallRecord, tool: Tool | None) -> None:
        """The call as a stored run answered it (its life ended before this process)."""
        self.tool = tool
        self.arguments = record.arguments
        self.attempts = record.attempts
        self.duration = record.duration
        self.outcome = record.outcome
        self.result = record.result
        self.state = CallState.ANSWERED

    def next_request(self) -> int:
        """The attempt of the next request this call waits on."""
        return self.answers.attempt + 1 if self.answers is not None else 1

    def record(self, round: int) -> ToolCallRecord:
        return ToolCallRecord(
            call=self.call,
            round=round,
            outcome=self.outcome or "not_run",
            result=self.result,
            tool=self.tool.name if self.tool is not None else None,
            arguments=self.arguments,
            attempts=self.attempts,
            duration=self.duration,
        )


@attrs.define(kw_only=True)
class Checkpoint:
    """What to store with the first ``started`` row of a turn: the run as it stood when the turn
    began (``used`` calls counted), or a resume's own recovery snapshot."""

    used: int
    recovery: Run | None = None


class Turn:
    """One turn of a run: its round, what was offered, the model's answer and a slot per call.

    Made for each round (``message`` and ``slots`` once the answer has calls) and for the
    unfinished turn a resume answers; the stages take it instead of a round number and an offer.
    """

    __slots__ = (
        "checkpoint",
        "limits",
        "message",
        "offer",
        "recorded",
        "round",
        "slots",
        "wrote_rows",
    )

    def __init__(
        self,
        round: int,
        offer: Offer,
        message: AssistantMessage | None = None,
        slots: list[CallSlot] | None = None,
    ) -> None:
        self.round = round
        self.offer = offer
        self.message = message
        self.slots: list[CallSlot] = slots if slots is not None else []
        self.checkpoint: Checkpoint | None = None  # stored with the turn's first started row
        self.wrote_rows = False  # a started row was written (flush the settled ones at the end)
        self.limits: set[str] = set()  # "max_tool_calls", "deadline": what stopped a call
        self.recorded = False  # the message holds the calls as admitted (``record_calls``)

    def fatal(self) -> str | None:
        """Why the run stops after this turn, when one of its calls raised ``ToolFatal``."""
        for slot in self.slots:
            result = slot.result
            if result is not None and isinstance(result.exception, ToolFatal):
                name = slot.tool.name if slot.tool is not None else slot.call.name
                return (
                    f"the run stopped when {name} (call {slot.call.id}) failed: "
                    f"{result.exception.message}"
                )
        return None


@attrs.frozen(kw_only=True)
class RunControl:
    """How one run is steered, set as it starts: its deadline, cancellation, approver, external
    handler, event sink, and what its tools are given (the application's values, the run's
    services)."""

    approval: Approver | None = None
    external: ExternalHandler | None = None  # answers external and deferred calls inline
    cancel: asyncio.Event | None = None  # the caller's cancel event
    values: Mapping[str, Any] = _NO_VALUES  # the app's run(context={...})
    sink: Callable[[Event], None] | None = None  # a stream's queue
    deadline: float | None = None  # on the event loop's clock
    cancelled: asyncio.Event | None = None  # set when the run is being cancelled
    services: Mapping[str, Any] = _NO_VALUES  # the tools' services, with the run's emitter

    @property
    def cancel_requested(self) -> bool:
        """The caller set the run's cancel event."""
        return self.cancel is not None and self.cancel.is_set()

    @property
    def cancelling(self) -> bool:
        """The run is being cancelled (the caller asked, or its task was cancelled)."""
        return self.cancel_requested or (self.cancelled is not None and self.cancelled.is_set())

    async def ask(self, request: DeferredRequest) -> Any:
        """The approver's decision on ``request`` (None without an approver: defer it)."""
        if self.approval is None:
            return None
        decision = self.approval(request)
        if inspect.isawaitable(decision):
            decision = await decision
        return decision

    def deadline_passed(self) -> bool:
        """The run's deadline is set and has passed."""
        return self.deadline is not None and asyncio.get_running_loop().time() >= self.deadline


@attrs.define
class Spending:
    """What a run's requests spent: their tokens, their cost at ``[prices]``, and how many
    reported tokens but had no price; added to as each request answers.

    Each request's usage is kept and the tokens added up when read (:func:`total_usage`): a
    :class:`Usage` made for every request cost more than the rest of its accounting.
    """

    before: Usage = attrs.field(factory=Usage)  # the tokens summed so far
    cost: float = 0.0  # of the requests with a price
    unpriced: int = 0
    added: list[Usage] = attrs.field(factory=list)  # the requests' usage since

    def add(self, usage: Usage | None, cost: float | None) -> None:
        """Add one more request's spending (``cost`` None: its model has no price)."""
        if usage is not None:
            self.added.append(usage)
        if cost is not None:
            self.cost += cost
        elif usage is not None and usage.reported:
            self.unpriced += 1

    @property
    def usage(self) -> Usage:
        """The tokens of the requests so far."""
        if self.added:
            self.before = total_usage([self.before, *self.added])
            self.added.clear()
        return self.before

    @property
    def spent(self) -> float | None:
        """The cost so far (None when a request that used tokens had no price)."""
        return None if self.unpriced else self.cost


@attrs.frozen
class TrustNeed:
    """The trust level later providers of a run must have, and what required it (None: not
    known, for a run restored from its record)."""

    level: TrustLevel
    origin: str | None = None


def tighten(
    need: TrustNeed | None, level: TrustLevel | str | None, origin: str
) -> TrustNeed | None:
    """``need``, or ``level`` required by ``origin`` when that is stricter."""
    if level is None:
        return need
    level = TrustLevel.parse(level)
    if need is None:
        return TrustNeed(level, origin)
    joined = level.strictest(need.level)
    return need if joined == need.level else TrustNeed(joined, origin)


class RunState:
    """What a run accumulates, turned into a :class:`Run` at the end.

    Written by the stages through a few operations (a message, a record, an event, a source,
    the counters); its :attr:`end` is written by the driver alone.
    """

    __slots__ = (
        "__weakref__",  # the run's services refer to it weakly (see ``_execute.emitter``)
        "call_ids",
        "chosen_tool",
        "control",
        "conversation",
        "deferred",
        "end",
        "events",
        "filtered_calls",
        "messages",
        "options",
        "output",
        "records",
        "rounds",
        "run_id",
        "seen",
        "selection",
        "sources",
        "spending",
        "text",
        "trust",
        "used",
    )

    def __init__(
        self,
        run_id: str,
        options: RunOptions,
        messages: list[Message],
        selection: Selection | None = None,
    ) -> None:
        self.run_id = run_id
        self.options = options
        self.selection = selection  # the run's candidate tools (config and options), taken once
        choice = options.tool_choice
        # The tool the run's tool choice names, taken once: every round's OfferRequest carries it.
        self.chosen_tool = choice.name if isinstance(choice, NamedToolChoice) else None
        self.control = RunControl()
        self.messages = messages
        self.records: list[ToolCallRecord] = []
        self.events: list[Event] = []
        self.sources: dict[str, Source] = {}
        self.rounds = 0
        self.used = 0
        self.trust: TrustNeed | None = None
        self.spending = Spending()
        self.output: Any = None  # the typed answer, once the model gave a valid one
        self.seen: dict[str, str] = {}  # duplicate key → the call id that made it
        self.deferred: list[DeferredRequest] = []
        self.text = ""
        self.end: End | None = None
        self.filtered_calls: set[tuple[int, str]] = set()  # (round, call id) that filtered
        self.call_ids: set[str] | None = None  # ids of the calls of the turns so far
        self.conversation: str | None = None

    @property
    def base_system(self) -> str | None:
        """The run's base system prompt."""
        return self.options.system_prompt

    def conversation_id(self) -> str:
        """The conversation's key (``OfferRequest.conversation_key``'s rule), taken once."""
        if self.conversation is None:
            self.conversation = conversation_key(self.messages)
        return self.conversation

    def taken_call_ids(self) -> set[str]:
        """The ids of every call of the run's turns so far: read from the messages once, then
        kept up to date as answers arrive (:func:`~toolwire.loop._round.take_answer`)."""
        if self.call_ids is None:
            self.call_ids = set(taken_ids(self.messages))
        return self.call_ids

    def remember(self, slot: CallSlot, key: str | None) -> None:
        """Record the admitted call's duplicate key (forgotten again if it does not succeed)."""
        if key is not None:
            self.seen[key] = slot.request.id
            slot.key = key

    def forget(self, slot: CallSlot) -> None:
        """Drop the call's duplicate key: a call that did not succeed may be made again."""
        if slot.key is not None and self.seen.get(slot.key) == slot.call.id:
            del self.seen[slot.key]
        slot.key = None

    def require(self, level: TrustLevel | str | None, origin: str) -> None:
        """Tighten the trust later providers of the run must have (``origin`` required it)."""
        self.trust = tighten(self.trust, level, origin)

    def charge(self, usage: Usage | None, cost: float | None) -> None:
        """Add what a request (or a run started as a tool) spent: its usage, and its cost
        (None: its model has no price)."""
        self.spending.add(usage, cost)

    @property
    def usage(self) -> Usage:
        """The tokens of the run's requests so far."""
        return self.spending.usage

    @property
    def spent(self) -> float | None:
        """The run's cost so far (None when a request that used tokens had no price)."""
        return self.spending.spent

    def build(
        self, *, stop: StopReason | None = None, events: bool = True, used: int | None = None
    ) -> Run:
        """The run as it stands (``stop`` instead of its own stop reason, ``used`` instead of
        its count of tool calls, when given)."""
        messages: tuple[Message, ...] = tuple(self.messages)
        if self.base_system:
            messages = (SystemMessage(self.base_system), *messages)
        end = self.end
        return Run(
            id=self.run_id,
            messages=messages,
            stop_reason=stop or (end.reason if end is not None else "interrupted"),
            detail=end.detail if stop is None and end is not None else None,
            text=self.text,
            tool_calls=tuple(self.records),
            sources=tuple(self.sources.values()),
            events=tuple(self.events) if events else (),
            deferred=tuple(self.deferred),
            required_trust=self.trust.level if self.trust is not None else None,
            usage=self.usage,
            cost=self.spent,
            output=self.output,
            rounds=self.rounds,
            tool_calls_used=self.used if used is None else used,
            options=self.options,
            error=end.error if end is not None else None,
        )
