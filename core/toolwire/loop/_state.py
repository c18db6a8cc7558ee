"""The state of a run while it goes: what becomes the run, its controls, the turn's flags, and
each call's slot."""

from __future__ import annotations

import asyncio
import inspect
import types
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs

from .._request import conversation_key
from .._trust import TrustLevel
from ..events import Event
from ..messages import Message, SystemMessage, ToolCall, Usage
from ..tools._result import Source, ToolResult
from ._ids import taken_ids
from ._run import Decision, DeferredRequest, Outcome, Run, RunOptions, StopReason, ToolCallRecord

if TYPE_CHECKING:
    from .._selection import Selection
    from ..tools import Tool


_NO_VALUES: Mapping[str, Any] = types.MappingProxyType({})

Approver: TypeAlias = Callable[[DeferredRequest], Decision | Awaitable[Decision | None] | None]
"""Decides a call that needs approval while the run goes on; None defers it (ends the run)."""


class CallSlot:
    """The working state of one call of the current turn."""

    __slots__ = (
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

    def answer(self, outcome: Outcome, result: ToolResult) -> None:
        """Give the call its result (a call that waited for a decision waits no more)."""
        self.outcome = outcome
        self.result = result
        self.deferred = None

    def defer(self, request: DeferredRequest) -> None:
        """Leave the call without a result until the caller decides ``request``."""
        self.outcome = "deferred"
        self.deferred = request

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


class RunControl:
    """How one run is steered while it goes: its deadline, cancellation, approver, event sink,
    and what its tools are given (services, plugin settings)."""

    __slots__ = (
        "approval",
        "cancel",
        "cancelled_flag",
        "deadline",
        "services",
        "settings",
        "sink",
        "values",
    )

    def __init__(self) -> None:
        self.deadline: float | None = None  # on the event loop's clock
        self.approval: Approver | None = None
        self.cancel: asyncio.Event | None = None  # the caller's cancel event
        self.cancelled_flag: asyncio.Event | None = None  # set when the run is being cancelled
        self.sink: Callable[[Event], None] | None = None  # a stream's queue
        self.services: Mapping[str, Any] | None = None  # the tools' services, with the emitter
        self.settings: dict[str | None, Any] = {}  # plugin settings, looked up once per plugin
        self.values: Mapping[str, Any] = _NO_VALUES  # the app's run(context={...})

    @property
    def cancel_requested(self) -> bool:
        """The caller set the run's cancel event."""
        return self.cancel is not None and self.cancel.is_set()

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


class TurnState:
    """The flags of the current turn (and of the round it belongs to)."""

    __slots__ = (
        "budget_hit",
        "call_names",
        "deadline_hit",
        "direct_execution",
        "fatal",
        "forced_choice_used",
        "message_id",
        "recovery",
        "snapshot_pending",
        "snapshot_used",
        "turn_started",
    )

    def __init__(self) -> None:
        self.snapshot_pending = False  # write a snapshot with the turn's first ledger row
        self.snapshot_used = 0  # the run's counted calls when the turn began (for that snapshot)
        self.turn_started = False  # the turn wrote a started row (flush its settled rows)
        self.forced_choice_used = False  # a forced tool choice applies to the first round only
        self.budget_hit = False  # admission announced ``[loop] max_tool_calls``
        self.deadline_hit = False  # the run's deadline stopped a call
        self.call_names: dict[str, str] = {}  # streamed call id → tool name (for redaction)
        self.direct_execution: bool | None = None  # Pipeline.direct_execution, for this turn
        self.recovery: Run | None = None  # a resume's snapshot, for its first started row
        self.fatal: str | None = None  # a call's ToolFatal: the run stops after this turn
        self.message_id: str | None = None  # the provider's id of the answer being executed


class RunState:
    """What a run accumulates, turned into a :class:`Run` at the end; it holds the run's
    :class:`RunControl` and the current turn's :class:`TurnState`."""

    __slots__ = (
        "base_system",
        "call_ids",
        "control",
        "conversation",
        "cost",
        "deferred",
        "detail",
        "error",
        "events",
        "filtered_calls",
        "ledger_written",
        "messages",
        "options",
        "output",
        "records",
        "required_trust",
        "rounds",
        "run_id",
        "seen",
        "selection",
        "sources",
        "stop",
        "text",
        "trust_origin",
        "turn",
        "unpriced",
        "usage",
        "used",
    )

    def __init__(self, run_id: str, options: RunOptions, messages: list[Message]) -> None:
        self.run_id = run_id
        self.options = options
        self.base_system: str | None = options.system_prompt
        self.messages = messages
        self.records: list[ToolCallRecord] = []
        self.events: list[Event] = []
        self.sources: dict[str, Source] = {}
        self.rounds = 0
        self.used = 0
        self.required_trust: TrustLevel | None = None
        self.trust_origin: str | None = None
        self.usage = Usage()
        self.cost = 0.0  # of the requests with a price
        self.unpriced = 0  # requests that reported usage and had no price
        self.output: Any = None  # the typed answer, once the model gave a valid one
        self.seen: dict[str, str] = {}  # duplicate key → the call id that made it
        self.stop: StopReason | None = None
        self.detail: str | None = None
        self.error: BaseException | None = None
        self.deferred: list[DeferredRequest] = []
        self.text = ""
        self.ledger_written = False  # this run wrote started rows (its snapshot must be final)
        self.filtered_calls: set[tuple[int, str]] = set()  # (round, call id) that filtered
        self.call_ids: set[str] | None = None  # ids of the calls of the turns so far
        self.control = RunControl()
        self.turn = TurnState()
        self.conversation: str | None = None
        self.selection: Selection | None = None  # the run's candidate tools, taken once

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

    def finish(self, reason: StopReason, detail: str | None = None) -> None:
        if self.stop is None:
            self.stop = reason
            self.detail = detail

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

    def add_usage(self, usage: Usage | None) -> None:
        if usage is not None:
            self.usage = self.usage + usage

    def charge(self, usage: Usage | None, cost: float | None) -> None:
        """Add what a request (or a run started as a tool) spent: its usage, and its cost
        (None: its model has no price)."""
        self.add_usage(usage)
        if cost is not None:
            self.cost += cost
        elif usage is not None and usage.reported:
            self.unpriced += 1

    @property
    def spent(self) -> float | None:
        """The run's cost so far (None when a request that used tokens had no price)."""
        return None if self.unpriced else self.cost

    def build(
        self, *, stop: StopReason | None = None, events: bool = True, used: int | None = None
    ) -> Run:
        """The run as it stands (``stop`` instead of its own stop reason, ``used`` instead of
        its count of tool calls, when given)."""
        messages: tuple[Message, ...] = tuple(self.messages)
        if self.base_system:
            messages = (SystemMessage(self.base_system), *messages)
        return Run(
            id=self.run_id,
            messages=messages,
            stop_reason=stop or self.stop or "interrupted",
            detail=self.detail if stop is None else None,
            text=self.text,
            tool_calls=tuple(self.records),
            sources=tuple(self.sources.values()),
            events=tuple(self.events) if events else (),
            deferred=tuple(self.deferred),
            required_trust=self.required_trust,
            usage=self.usage,
            cost=self.spent,
            output=self.output,
            rounds=self.rounds,
            tool_calls_used=self.used if used is None else used,
            options=attrs.evolve(self.options, system_prompt=self.base_system),
            error=self.error,
        )
