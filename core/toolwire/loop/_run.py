"""The outcome of a run: ``Run``, its tool-call records, deferred requests and decisions."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import attrs

from .._trust import TrustLevel, declared_level
from ..adapters._base import NamedToolChoice, ToolChoice
from ..events import Event
from ..messages import Message, ToolCall
from ..output import OutputSpec
from ..tools._convert import unstructure_result
from ..tools._errors import Retry, check_attempt
from ..tools._names import call_sensitive, flat_sensitive, sensitive_arguments
from ..tools._result import Source, ToolResult, ToolStatus
from ..usage import Usage
from ._codec import (
    CallRedactor,
    Redactor,
    call_from_json,
    call_to_json,
    event_to_json,
    message_from_json,
    message_to_json,
    redact_arguments,
    result_from_json,
    result_to_json,
    source_to_json,
    usage_from_json,
    usage_to_json,
)

if TYPE_CHECKING:
    from ..tools import Tool

StopReason: TypeAlias = Literal[
    "answered",
    "truncated",
    "empty",
    "deferred",
    "max_rounds",
    "max_tool_calls",
    "deadline",
    "cancelled",
    "error",
    "fail_policy",
    "trust",
    "interrupted",
    "tool_fatal",
    "budget",
    "output_invalid",
]
"""Why a run ended.

``answered``: the model answered without calls. ``deferred``: calls wait for decisions (see
:meth:`ToolCallingLoop.resume`). ``max_rounds`` / ``max_tool_calls`` / ``deadline``: a limit of
``[loop]`` was reached. ``cancelled``: the run was cancelled. ``error``: the provider failed.
``fail_policy``: an admission policy set to ``fail`` stopped the run. ``trust``: the provider is
below the trust level the run's results require. ``interrupted``: the process ended while the
run was in progress (only seen on runs loaded from the ledger). ``truncated``: the answer was
cut off at the provider's token limit. ``empty``: the answer had no text and no calls.
``tool_fatal``: a tool raised ``ToolFatal``; the detail names the tool, the call and why.
``budget``: the run's usage reached a limit of ``[limits]`` (tokens or cost); the detail names
it. ``output_invalid``: the final answer did not match the run's output type within
``[run] output_retries``; the detail says what was wrong.
"""

Outcome: TypeAlias = Literal[
    "executed",
    "unknown_tool",
    "invalid_arguments",
    "duplicate",
    "limit",
    "cancelled",
    "deferred",
    "denied",
    "supplied",
    "retry",
    "not_run",
    "recovered",
    "provider_executed",
    "final_answer",
]
"""How a call was handled: run (``executed``), refused at admission (``unknown_tool``,
``invalid_arguments``, ``duplicate``, ``limit``, ``cancelled``), waiting (``deferred``),
decided by the caller (``denied``, ``supplied``, or ``retry``: the model is told to call
again), never run because the run stopped (``not_run``), answered from the ledger after a crash
(``recovered``), run by the provider (``provider_executed``), or the call of the answer tool
that gave a run's typed answer (``final_answer``)."""

RAN: frozenset[Outcome] = frozenset({"executed", "recovered", "supplied"})
"""The outcomes whose result a tool produced (here, before a crash, or the caller's own run of
an external tool); the others are answered by the host itself."""


@attrs.frozen(kw_only=True)
class ToolCallRecord:
    """One tool call of a run and how it ended.

    ``call`` is the call as the model sent it and the turn records it (argument text that
    was repaired is recorded as the object it was read as, the text kept in its
    ``raw_arguments``); ``tool`` and ``arguments`` are what actually ran (they differ after a
    ``rewrite:`` of an unknown tool, validation, or an approval with
    edited arguments). ``result`` is None while the call is deferred and for calls
    the provider ran itself.
    """

    call: ToolCall
    round: int
    outcome: Outcome
    result: ToolResult | None = None
    tool: str | None = None
    arguments: Mapping[str, Any] | None = None
    attempts: int = 0
    duration: float | None = None

    @property
    def status(self) -> ToolStatus | None:
        """The result's status (None while deferred)."""
        return self.result.status if self.result is not None else None

    def to_json(self, redact: Redactor | None = None) -> dict[str, Any]:
        """The record as JSON (artifacts left out, sensitive arguments redacted with ``redact``,
        asked for the tool that ran and for the name the model wrote; in a bridge call,
        ``tool_call``, inside its arguments)."""
        return record_to_json(self, redact)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolCallRecord:
        """The inverse of :meth:`to_json` (unredacted JSON round-trips exactly)."""
        result = data.get("result")
        return cls(
            call=call_from_json(data["call"]),
            round=int(data["round"]),
            outcome=data["outcome"],
            result=result_from_json(result) if result is not None else None,
            tool=data.get("tool"),
            arguments=data.get("arguments"),
            attempts=int(data.get("attempts", 0)),
            duration=data.get("duration"),
        )


DeferReason: TypeAlias = Literal["approval", "deferred", "external", "interrupted"]
"""Why a call waits: for a person's approval, a tool's later answer, an outside handler, or
after an interrupted run."""


@attrs.frozen(kw_only=True)
class DeferredRequest:
    """A call that waits for a decision of the caller.

    ``reason`` is ``approval`` (the tool, a middleware or ``[policy] require_approval`` asks
    for it), ``deferred`` (the tool or a middleware left the call for later, by raising
    ``CallDeferred``), ``external`` (a schema-only tool the caller runs: supply its result) or
    ``interrupted`` (the process ended while a non-idempotent call ran; approve to run it
    again). ``detail`` says it in words. ``arguments`` are the validated arguments the call
    would run with. ``started`` is set when the call deferred itself while it ran, after the
    ledger's ``started`` row (it is not an interrupted call: approving it runs it again).

    ``attempt`` numbers the requests of one call: 1 for the first it waits on, one more for
    each later one (it was interrupted after an approval, or asked again while it ran). A
    decision answers one request (``Approve(attempt=…)``; by default the request of the
    :class:`Run` given to ``resume``, or the first one for a run given by id): a decision on an
    earlier request than the call's current one leaves the call waiting. ``starts`` is how many
    times the call had started when it began to wait on this request (its ledger row's
    attempt; 0: never), the start an approval of it may follow.
    """

    call_id: str
    tool: str
    arguments: Mapping[str, Any]
    reason: DeferReason
    detail: str
    round: int
    started: bool = False
    attempt: int = 1
    starts: int = 0

    def to_json(self, redact: Redactor | None = None) -> dict[str, Any]:
        """The request as JSON (sensitive arguments redacted with ``redact``)."""
        arguments = self.arguments
        if redact is not None:
            arguments = redact_arguments(arguments, redact(self.tool))
        return {
            "call_id": self.call_id,
            "tool": self.tool,
            "arguments": dict(arguments),
            "reason": self.reason,
            "detail": self.detail,
            "round": self.round,
            **({"started": True} if self.started else {}),
            **({"attempt": self.attempt} if self.attempt != 1 else {}),
            **({"starts": self.starts} if self.starts else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DeferredRequest:
        """The inverse of :meth:`to_json`."""
        return cls(
            call_id=data["call_id"],
            tool=data["tool"],
            arguments=data.get("arguments") or {},
            reason=data["reason"],
            detail=data.get("detail", ""),
            round=int(data["round"]),
            started=bool(data.get("started", False)),
            attempt=int(data.get("attempt", 1)),
            starts=int(data.get("starts", 0)),
        )


# -- decisions ---------------------------------------------------------------------------------


def _optional_arguments(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"Approve(arguments=...) takes a mapping, got {type(value).__name__}")
    return dict(value)


@attrs.frozen
class Approve:
    """Run the deferred call; with ``arguments``, run it with these instead (they are parsed,
    validated and checked for duplicates again, like the model's own). ``attempt``: the request
    it answers (see :data:`Decision`)."""

    arguments: Mapping[str, Any] | None = attrs.field(default=None, converter=_optional_arguments)
    attempt: int | None = attrs.field(default=None, kw_only=True, converter=check_attempt)


@attrs.frozen
class Deny:
    """Do not run the call; ``message`` is what the model is told. ``attempt``: the request it
    answers (see :data:`Decision`)."""

    message: str = "The user denied this tool call."
    attempt: int | None = attrs.field(default=None, kw_only=True, converter=check_attempt)


def _as_result(value: ToolResult | str) -> ToolResult:
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult.ok(value)
    raise TypeError(f"Supply(result=...) takes a ToolResult or a str, got {type(value).__name__}")


@attrs.frozen
class Supply:
    """Answer the call with this result instead of running it (external tools; a str is an
    ``ok`` result with that text). ``attempt``: the request it answers (see :data:`Decision`)."""

    result: ToolResult = attrs.field(converter=_as_result)
    attempt: int | None = attrs.field(default=None, kw_only=True, converter=check_attempt)


Decision: TypeAlias = Approve | Deny | Supply | Retry
"""A decision for one deferred call: run it (:class:`Approve`), answer it without running it
(:class:`Deny`, :class:`Supply`), or tell the model to call again (:class:`~toolwire.Retry`,
answered as if the tool had raised it). Each takes ``attempt=``, the request it answers
(:attr:`DeferredRequest.attempt`); left out, it answers the request of the :class:`Run` given
to ``resume``, or the call's first request for a run given by id."""

DECISIONS = (Approve, Deny, Supply, Retry)
"""The classes of :data:`Decision`, for ``isinstance``."""


def with_attempt(decision: Decision, attempt: int) -> Decision:
    """``decision`` naming the request ``attempt`` it answers."""
    if isinstance(decision, Retry):
        return Retry(decision.message, attempt=attempt)
    return attrs.evolve(decision, attempt=attempt)


# -- options and run ---------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class RunOptions:
    """The options a run was started with, kept so that ``resume`` continues the same way."""

    system_prompt: str | None = None
    tools: tuple[str, ...] | None = None
    profile: str | None = None
    tool_choice: ToolChoice = "auto"
    stream: bool | None = None
    output: OutputSpec | None = None

    def to_json(self) -> dict[str, Any]:
        """The options as JSON."""
        choice: Any = self.tool_choice
        if isinstance(choice, NamedToolChoice):
            choice = {"name": choice.name}
        out: dict[str, Any] = {
            "system_prompt": self.system_prompt,
            "tools": list(self.tools) if self.tools is not None else None,
            "profile": self.profile,
            "tool_choice": choice,
            "stream": self.stream,
        }
        if self.output is not None:
            out["output"] = self.output.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunOptions:
        """The inverse of :meth:`to_json`."""
        choice = data.get("tool_choice", "auto")
        if isinstance(choice, Mapping):
            choice = NamedToolChoice(choice["name"])
        tools = data.get("tools")
        output = data.get("output")
        return cls(
            system_prompt=data.get("system_prompt"),
            tools=tuple(tools) if tools is not None else None,
            profile=data.get("profile"),
            tool_choice=choice,
            stream=data.get("stream"),
            output=OutputSpec.from_json(output) if output is not None else None,
        )


@attrs.frozen(kw_only=True)
class Run:
    """A finished (or deferred) run.

    ``messages`` is the canonical conversation, starting with the base system prompt when there
    is one (the per-round tool instructions are not stored). Every tool call of every turn has
    exactly one result in it, except the calls listed in ``deferred`` while the run waits for
    decisions. ``text`` is the final answer (empty unless ``stop_reason`` is ``answered``).
    ``sources`` are the sources of every result, deduplicated by URL in first-seen order.
    ``required_trust`` is the trust level later providers of this run must have (it only tightens).
    ``tool_calls_used`` counts the budget slots consumed against ``[loop] max_tool_calls``.
    ``error`` keeps the exception behind a ``stop_reason`` of ``error`` (not serialised).
    ``output`` is the typed final answer of a run with an output type (``run(..., output=T)``,
    ``[run] output_schema``): a ``T``, or the JSON value for a schema (and for a run loaded
    from storage). ``usage`` totals every request of the run (and of runs it started as tools);
    ``cost`` prices it at ``[prices]`` (None when a model that answered has no price).
    """

    id: str
    messages: tuple[Message, ...]
    stop_reason: StopReason
    detail: str | None = None
    text: str = ""
    tool_calls: tuple[ToolCallRecord, ...] = ()
    sources: tuple[Source, ...] = ()
    events: tuple[Event, ...] = ()
    deferred: tuple[DeferredRequest, ...] = ()
    required_trust: TrustLevel | None = None
    usage: Usage = attrs.field(factory=Usage)
    rounds: int = 0
    tool_calls_used: int = 0
    options: RunOptions = RunOptions()
    error: BaseException | None = attrs.field(default=None, eq=False, repr=False)
    output: Any = None
    cost: float | None = None

    @property
    def ok(self) -> bool:
        """True when the model answered."""
        return self.stop_reason == "answered"

    def __repr__(self) -> str:
        """The run in one line: how it ended and how much it holds, not every message and event
        (``asyncio.run`` writes the repr of the run its main task returned when it restores the
        Ctrl-C handler, so a long run's full repr cost every command a noticeable time)."""
        return (
            f"Run(id={self.id!r}, stop_reason={self.stop_reason!r}, rounds={self.rounds}, "
            f"messages={len(self.messages)}, tool_calls={len(self.tool_calls)}, "
            f"deferred={len(self.deferred)}, events={len(self.events)})"
        )

    def to_json(
        self, *, redact: Redactor | Mapping[str, Tool] | None = None, events: bool = True
    ) -> dict[str, Any]:
        """The run as JSON (what ``toolwire run --json`` prints).

        Artifacts and exceptions are left out. With ``redact``, sensitive argument values are
        replaced in calls, records and deferred requests: give the host's tools (``host.tools``),
        or a function from a tool name to its sensitive arguments. A call is redacted by the
        tool it ran as, whatever spelling the model used for its name (``Login`` for ``login``);
        with the tools, also a call that named a tool it did not run as. ``events=False`` leaves
        the event list out.
        """
        if isinstance(redact, Mapping):
            tools = redact
            redact = lambda name: sensitive_arguments(tools, name)  # noqa: E731
        calls = _call_redactor(self, redact) if redact is not None else None
        out: dict[str, Any] = {
            "id": self.id,
            "stop_reason": self.stop_reason,
            "detail": self.detail,
            "text": self.text,
            "messages": [message_to_json(m, calls) for m in self.messages],
            "tool_calls": [r.to_json(redact) for r in self.tool_calls],
            "sources": [source_to_json(s) for s in self.sources],
            "deferred": [d.to_json(redact) for d in self.deferred],
            "required_trust": self.required_trust.label if self.required_trust else None,
            "usage": usage_to_json(self.usage),
            "cost": self.cost,
            "output": unstructure_result(self.output) if self.output is not None else None,
            "rounds": self.rounds,
            "tool_calls_used": self.tool_calls_used,
            "options": self.options.to_json(),
        }
        if events:
            out["events"] = [event_to_json(e) for e in self.events]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Run:
        """A run from :meth:`to_json` output (events are not restored)."""
        trust = data.get("required_trust")
        return cls(
            id=data["id"],
            messages=tuple(message_from_json(m) for m in data.get("messages", ())),
            stop_reason=data["stop_reason"],
            detail=data.get("detail"),
            text=data.get("text", ""),
            tool_calls=tuple(ToolCallRecord.from_json(r) for r in data.get("tool_calls", ())),
            sources=tuple(Source(s["url"], s.get("title")) for s in data.get("sources", ())),
            deferred=tuple(DeferredRequest.from_json(d) for d in data.get("deferred", ())),
            required_trust=declared_level(trust) if trust is not None else None,
            usage=usage_from_json(data.get("usage")) or Usage(),
            cost=data.get("cost"),
            output=data.get("output"),
            rounds=int(data.get("rounds", 0)),
            tool_calls_used=int(data.get("tool_calls_used", 0)),
            options=RunOptions.from_json(data.get("options") or {}),
        )


def _call_redactor(run: Run, redact: Redactor) -> CallRedactor:
    """What to redact in each call of ``run``'s messages: by the name the model wrote, and by the
    tool the call ran as or waits for (the records know it after a name was repaired, or a
    bridge call was taken as a call of the tool it names)."""
    resolved = {r.call.id: r.tool for r in run.tool_calls if r.tool and r.tool != r.call.name}
    resolved.update((d.call_id, d.tool) for d in run.deferred)

    def sensitive(call: ToolCall) -> frozenset[str]:
        return call_sensitive(call.name, call.arguments, redact, resolved.get(call.id))

    return sensitive


def record_to_json(
    record: ToolCallRecord,
    redact: Redactor | None = None,
    *,
    result_json: Callable[[ToolResult], dict[str, Any]] = result_to_json,
) -> dict[str, Any]:
    """:meth:`ToolCallRecord.to_json`, with the result as ``result_json`` gives it."""
    arguments = record.arguments
    sensitive: frozenset[str] = frozenset()
    if redact is not None:
        sensitive = call_sensitive(record.call.name, record.call.arguments, redact, record.tool)
    if arguments is not None:
        arguments = redact_arguments(arguments, flat_sensitive(sensitive))
    return {
        "call": call_to_json(record.call, sensitive),
        "round": record.round,
        "outcome": record.outcome,
        "result": result_json(record.result) if record.result is not None else None,
        "tool": record.tool,
        "arguments": dict(arguments) if arguments is not None else None,
        "attempts": record.attempts,
        "duration": record.duration,
    }
