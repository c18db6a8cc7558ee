"""Lifecycle events of a run, delivered to every ``toolwire_event`` implementation.

Every event names its run and, where it has them, the round and the tool call id. Events carry no
secrets: sensitive arguments are redacted before an event is built.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, Literal, TypeAlias, TypeVar

import attrs

from ._json.scan import ArgumentScanner
from .messages import AssistantMessage, Message, ToolCall
from .tools._result import ToolResult
from .usage import Usage


@attrs.frozen(kw_only=True)
class ParentCall:
    """The call of another run that an event's run works for: a run started as a tool
    (:func:`toolwire.agent_tool`) reports its events under the call that started it."""

    run_id: str
    call_id: str
    round: int | None = None


@attrs.frozen(kw_only=True, slots=False)
class Event:
    """Base of all events: the run id and the round (None outside a round).

    ``parent`` is set on the events of a run started as a tool of another run: the parent
    run's call whose card the event belongs under (None for a run of its own).

    Events are frozen classes without ``__slots__``: such a class sets its fields in the
    instance's ``__dict__``, where a slotted frozen one calls ``object.__setattr__`` for each,
    and a run makes several events a round (one per delta when it streams).
    """

    run_id: str
    round: int | None = None
    parent: ParentCall | None = None

    @property
    def kind(self) -> str:
        """The event's name in snake case, as written to traces (``tool_started``)."""
        return _kind_of(type(self))


def _kind_of(cls: type) -> str:
    kind = _KINDS.get(cls)
    if kind is not None:
        return kind
    name = cls.__name__
    out = [name[0].lower()]
    for ch in name[1:]:
        if ch.isupper():
            out.append("_")
            out.append(ch.lower())
        else:
            out.append(ch)
    kind = _KINDS[cls] = "".join(out)
    return kind


_KINDS: dict[type, str] = {}
"""Each event class's kind, worked out once (a run's JSON names the kind of every event)."""


# -- run and round -----------------------------------------------------------------------------


EmitEvent: TypeAlias = Callable[[Event], None]
"""The callback that receives events as they happen."""


@attrs.frozen(kw_only=True, slots=False)
class RunStarted(Event):
    """A run began (``resumed`` when it continues a deferred run).

    ``messages`` is the conversation the run starts from (the prompt, or the history it
    continues), sensitive arguments redacted; with the later events (each answer and each
    result) an observer rebuilds what every request of the run held.
    """

    api: str
    model: str | None = None
    resumed: bool = False
    messages: tuple[Message, ...] = ()


@attrs.frozen(kw_only=True, slots=False)
class RunFinished(Event):
    """A run ended; ``stop_reason`` says why (``answered``, ``deferred``, ``max_rounds`` …)."""

    stop_reason: str
    detail: str | None = None


@attrs.frozen(kw_only=True, slots=False)
class RoundStarted(Event):
    """A round began with these tools offered (stable, sorted order)."""

    offered: tuple[str, ...] = ()


@attrs.frozen(kw_only=True, slots=False)
class RoundFinished(Event):
    """A round ended (after its tool calls, if any, were answered)."""

    tool_calls: int = 0


@attrs.frozen(kw_only=True, slots=False)
class ToolOmitted(Event):
    """A tool was left out of a round's offer, and why (its resolution raised or offered none)."""

    tool: str
    reason: str


@attrs.frozen(kw_only=True, slots=False)
class ToolResolutionCorrected(Event):
    """A resolution changed what only the registration decides (the function's name, its strict
    mode); the tool is offered under its registered name and strict mode. ``changes`` says what
    was put back."""

    tool: str
    changes: tuple[str, ...] = ()


@attrs.frozen(kw_only=True, slots=False)
class ToolsDeferred(Event):
    """The round's tools were over the catalogue budget (``[tools] max_direct`` or
    ``max_direct_bytes``) or set ``deferred``: these are left to ``tool_search``."""

    tools: tuple[str, ...]
    reason: str


@attrs.frozen(kw_only=True, slots=False)
class ToolsPromoted(Event):
    """``tool_search`` found these deferred tools: they are offered from this round on."""

    tools: tuple[str, ...]


@attrs.frozen(kw_only=True, slots=False)
class ToolChoiceDegraded(Event):
    """The run's tool choice is one the adapter (or the server profile it talks to) cannot
    express: the round sent the nearest one it can instead of failing the request."""

    requested: str
    sent: str
    detail: str


@attrs.frozen(kw_only=True, slots=False)
class RequestSent(Event):
    """A request went to the provider."""

    api: str
    model: str | None = None
    tools: int = 0
    stream: bool = False
    attempt: int = 1


@attrs.frozen(kw_only=True, slots=False)
class RequestBody(Event):
    """The body of one provider request exactly as it left the host, with secrets redacted.

    Emitted by the host's HTTP transport once per request (retries send the same body) when
    ``[trace] request_bodies = true`` or ``toolwire run --show-wire`` asks for it, after the
    round's :class:`RequestSent`. ``url`` is the endpoint's host and path (no query, no
    credentials); ``body`` is the JSON value sent, with the API key and the values of sensitive
    arguments replaced by ``"[redacted]"``.
    """

    api: str
    url: str
    body: Mapping[str, Any]
    stream: bool = False


@attrs.frozen(kw_only=True, slots=False)
class ProviderRetry(Event):
    """A provider request failed in a retryable way and will be sent again after ``delay`` s."""

    api: str
    status: int | None
    delay: float
    attempt: int
    reason: str


@attrs.frozen(kw_only=True, slots=False)
class ProviderFallback(Event):
    """The provider ``failed`` could not answer the round's request (``error``: a connection
    error, a 429 or 5xx left after its retries, a refusal of tools), so the request goes to
    ``next``, the following entry of ``[[provider.fallback]]``. Providers are named as
    :attr:`AssistantMessage.provider` names them."""

    failed: str
    error: str
    next: str
    status: int | None = None


@attrs.frozen(kw_only=True, slots=False)
class ResponseReceived(Event):
    """The provider's answer for the round, in canonical form; ``cost`` is what the request
    cost at ``[prices]`` (None without a price for its model)."""

    message: AssistantMessage
    usage: Usage | None = None
    cost: float | None = None


@attrs.frozen(kw_only=True, slots=False)
class ContextCompacted(Event):
    """The conversation neared ``[provider] context_tokens`` and was made smaller before the
    round's request: the results of the calls ``cleared`` were replaced by stubs, and
    ``summarised`` earlier messages by one summary. Token counts are the host's estimates."""

    cleared: tuple[str, ...] = ()
    summarised: int = 0
    tokens_before: int = 0
    tokens_after: int = 0


@attrs.frozen(kw_only=True, slots=False)
class InvalidOutput(Event):
    """The model's final answer did not match the run's output type; ``recovery`` says
    whether it was sent back to be corrected (``returned``) or ended the run (``failed``, the
    retries spent). ``attempt`` counts the wrong answers so far."""

    reason: str
    recovery: Literal["returned", "failed"]
    attempt: int = 1


# -- streaming ---------------------------------------------------------------------------------


@attrs.frozen(kw_only=True, slots=False)
class TextDelta(Event):
    """A piece of visible text streamed by the model."""

    text: str


@attrs.frozen(kw_only=True, slots=False)
class ThinkingDelta(Event):
    """A piece of reasoning text streamed by the model."""

    text: str


@attrs.frozen(kw_only=True, slots=False)
class ToolCallStarted(Event):
    """The model began a tool call (streaming); arguments follow as deltas.
    ``provider_executed``: a tool the provider runs itself (its card says so from the start)."""

    call_id: str
    name: str
    index: int = 0
    provider_executed: bool = False


@attrs.frozen(kw_only=True, slots=False)
class ToolCallArgumentsDelta(Event):
    """More argument text of a streaming call, with the arguments parsed leniently so far."""

    call_id: str
    delta: str
    partial_arguments: Any = None


@attrs.frozen(kw_only=True, slots=False)
class ToolCallCompleted(Event):
    """A tool call of the model is complete (valid, or invalid with its raw text)."""

    call: ToolCall


@attrs.frozen(kw_only=True, slots=False)
class ToolCallRecovered(Event):
    """A call the model wrote into its text (native tools on) was read back as a tool call.

    ``form`` says how it was written: ``tool_call`` (a ``<tool_call>`` block), ``json`` (a
    bare ``{"name": …}`` object), ``python`` (``name(…)``) or ``routing`` (a server's routing
    text, ``functions.NAME:``). The call itself arrives with the answer, like any other.
    """

    call_id: str
    name: str
    form: str


# -- admission ---------------------------------------------------------------------------------


@attrs.frozen(kw_only=True, slots=False)
class UnknownTool(Event):
    """The model called a tool that was not offered.

    ``arguments`` and ``raw_arguments`` are what the model sent, verbatim, except that the
    sensitive arguments of a registered tool of that name (or of the tool the call was
    repaired or rewritten to) are redacted, and then the raw text too.
    """

    call_id: str
    name: str
    offered: tuple[str, ...]
    action: str
    arguments: Mapping[str, Any] | None = None
    raw_arguments: str | None = None


@attrs.frozen(kw_only=True, slots=False)
class InvalidArguments(Event):
    """A call's arguments did not parse or validate; ``recovery`` says what the host did."""

    call_id: str
    name: str
    recovery: Literal["repaired", "returned", "failed"]
    reason: str


@attrs.frozen(kw_only=True, slots=False)
class DuplicateSuppressed(Event):
    """An identical call (name and canonical arguments) was already made in this run."""

    call_id: str
    name: str
    first_call_id: str


@attrs.frozen(kw_only=True, slots=False)
class LimitReached(Event):
    """A limit of the run was reached (``max_rounds``, ``max_tool_calls``, ``deadline``, and the
    budgets of ``[limits]``: ``max_input_tokens``, ``max_output_tokens``, ``max_cost``)."""

    limit: str
    value: float | int


# -- execution ---------------------------------------------------------------------------------


@attrs.frozen(kw_only=True, slots=False)
class ToolStarted(Event):
    """A call is being answered (arguments with sensitive values redacted).

    ``answer`` says how: ``run`` (the tool runs), ``supplied`` (the caller supplied its
    result), ``denied`` (a person declined it) or ``retry`` (the caller's ``Retry`` tells the
    model to call again). Every ``ToolStarted`` is followed by one of
    ``ToolCompleted``, ``ToolFailed``, ``ToolBlockedEvent`` or ``ToolDenied`` for the same
    call, or by ``ToolDeferred`` when the call defers itself while it runs.
    """

    call_id: str
    name: str
    arguments: Mapping[str, Any] = attrs.field(factory=dict)
    answer: Literal["run", "supplied", "denied", "retry"] = "run"


@attrs.frozen(kw_only=True, slots=False)
class ToolApproved(Event):
    """A call that needed approval was approved (by the run's approver or a ``resume``);
    ``arguments`` are those it runs with, sensitive values redacted."""

    call_id: str
    name: str
    arguments: Mapping[str, Any] = attrs.field(factory=dict)
    edited: bool = False


@attrs.frozen(kw_only=True, slots=False)
class ArgumentsAdjusted(Event):
    """An execution middleware (or an approval's edit) changed a call's arguments before the
    tool ran; both are validated. ``before`` and ``after`` have sensitive values redacted."""

    call_id: str
    name: str
    before: Mapping[str, Any] = attrs.field(factory=dict)
    after: Mapping[str, Any] = attrs.field(factory=dict)
    reason: str = ""


@attrs.frozen(kw_only=True, slots=False)
class ToolProgress(Event):
    """A running tool reported progress."""

    call_id: str
    name: str
    message: str
    fraction: float | None = None


@attrs.frozen(kw_only=True, slots=False)
class ToolCompleted(Event):
    """A tool call ended with an ``ok`` result."""

    call_id: str
    name: str
    result: ToolResult


@attrs.frozen(kw_only=True, slots=False)
class ToolFailed(Event):
    """A tool call ended with an ``error`` result (exception, timeout, cancellation)."""

    call_id: str
    name: str
    result: ToolResult


@attrs.frozen(kw_only=True, slots=False)
class ToolBlockedEvent(Event):
    """A tool call was refused by a policy (``blocked`` result)."""

    call_id: str
    name: str
    result: ToolResult

    @property
    def kind(self) -> str:
        return "tool_blocked"


@attrs.frozen(kw_only=True, slots=False)
class ToolDenied(Event):
    """A tool call was denied by a person or an approval policy (``denied`` result)."""

    call_id: str
    name: str
    result: ToolResult


@attrs.frozen(kw_only=True, slots=False)
class ToolDeferred(Event):
    """A tool call waits for a decision of the caller (approval, or an external tool)."""

    call_id: str
    name: str
    reason: str


@attrs.frozen(kw_only=True, slots=False)
class ContentFiltered(Event):
    """Untrusted content of a tool result was changed by a filter (one report per call)."""

    call_id: str | None
    name: str | None
    report: str


@attrs.frozen(kw_only=True, slots=False)
class PluginFailed(Event):
    """A plugin's hook raised; the plugin is left out of this step and the run goes on."""

    plugin: str
    hook: str
    error: str


# -- consuming events --------------------------------------------------------------------------

_R = TypeVar("_R")


class EventVisitor(ABC, Generic[_R]):
    """One method per event class, ``on_<kind>``; :meth:`visit` calls the one an event's class
    names, so a consumer of events writes methods rather than an ``isinstance`` chain.

    Every method is abstract: a subclass that leaves one out cannot be instantiated, and mypy
    names the events it does not handle (``Cannot instantiate abstract class``), including
    events added in a later version. An event a consumer has nothing to do for is handled by
    saying so, with a method of its own or by naming the catch-all :meth:`on_event`::

        class Counter(EventVisitor[int]):
            def on_event(self, event: Event) -> int:
                return 0

            def on_tool_completed(self, event: ToolCompleted) -> int:
                return 1

            on_run_started = on_event
            on_run_finished = on_event
            ...  # every other on_<kind>

    The type argument is what a handler returns (``None`` for an observer). :meth:`on_event`
    also receives events of classes outside this module (a plugin's own); a subclass of an
    event class here goes to its nearest base's method. The table from class to method is built
    once per subclass, so one dispatch is a dictionary look-up and a call.
    """

    __slots__ = ()
    _handlers: ClassVar[dict[type[Event], Callable[[Any, Any], Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._handlers = {event: getattr(cls, name) for event, name in _HANDLER_NAMES.items()}

    def visit(self, event: Event) -> _R:
        """Call the method that handles ``event``'s class and return what it returns."""
        handlers = self._handlers
        handler = handlers.get(type(event))
        if handler is None:
            handler = handlers[type(event)] = getattr(type(self), _handler_name(type(event)))
        result: _R = handler(self, event)
        return result

    @abstractmethod
    def on_event(self, event: Event) -> _R:
        """Handle an event of a class that has no method of its own here (a plugin's event)."""

    @abstractmethod
    def on_run_started(self, event: RunStarted) -> _R: ...

    @abstractmethod
    def on_run_finished(self, event: RunFinished) -> _R: ...

    @abstractmethod
    def on_round_started(self, event: RoundStarted) -> _R: ...

    @abstractmethod
    def on_round_finished(self, event: RoundFinished) -> _R: ...

    @abstractmethod
    def on_tool_omitted(self, event: ToolOmitted) -> _R: ...

    @abstractmethod
    def on_tool_resolution_corrected(self, event: ToolResolutionCorrected) -> _R: ...

    @abstractmethod
    def on_tools_deferred(self, event: ToolsDeferred) -> _R: ...

    @abstractmethod
    def on_tools_promoted(self, event: ToolsPromoted) -> _R: ...

    @abstractmethod
    def on_tool_choice_degraded(self, event: ToolChoiceDegraded) -> _R: ...

    @abstractmethod
    def on_request_sent(self, event: RequestSent) -> _R: ...

    @abstractmethod
    def on_request_body(self, event: RequestBody) -> _R: ...

    @abstractmethod
    def on_provider_retry(self, event: ProviderRetry) -> _R: ...

    @abstractmethod
    def on_provider_fallback(self, event: ProviderFallback) -> _R: ...

    @abstractmethod
    def on_response_received(self, event: ResponseReceived) -> _R: ...

    @abstractmethod
    def on_context_compacted(self, event: ContextCompacted) -> _R: ...

    @abstractmethod
    def on_invalid_output(self, event: InvalidOutput) -> _R: ...

    @abstractmethod
    def on_text_delta(self, event: TextDelta) -> _R: ...

    @abstractmethod
    def on_thinking_delta(self, event: ThinkingDelta) -> _R: ...

    @abstractmethod
    def on_tool_call_started(self, event: ToolCallStarted) -> _R: ...

    @abstractmethod
    def on_tool_call_arguments_delta(self, event: ToolCallArgumentsDelta) -> _R: ...

    @abstractmethod
    def on_tool_call_completed(self, event: ToolCallCompleted) -> _R: ...

    @abstractmethod
    def on_tool_call_recovered(self, event: ToolCallRecovered) -> _R: ...

    @abstractmethod
    def on_unknown_tool(self, event: UnknownTool) -> _R: ...

    @abstractmethod
    def on_invalid_arguments(self, event: InvalidArguments) -> _R: ...

    @abstractmethod
    def on_duplicate_suppressed(self, event: DuplicateSuppressed) -> _R: ...

    @abstractmethod
    def on_limit_reached(self, event: LimitReached) -> _R: ...

    @abstractmethod
    def on_tool_started(self, event: ToolStarted) -> _R: ...

    @abstractmethod
    def on_tool_approved(self, event: ToolApproved) -> _R: ...

    @abstractmethod
    def on_arguments_adjusted(self, event: ArgumentsAdjusted) -> _R: ...

    @abstractmethod
    def on_tool_progress(self, event: ToolProgress) -> _R: ...

    @abstractmethod
    def on_tool_completed(self, event: ToolCompleted) -> _R: ...

    @abstractmethod
    def on_tool_failed(self, event: ToolFailed) -> _R: ...

    @abstractmethod
    def on_tool_blocked(self, event: ToolBlockedEvent) -> _R: ...

    @abstractmethod
    def on_tool_denied(self, event: ToolDenied) -> _R: ...

    @abstractmethod
    def on_tool_deferred(self, event: ToolDeferred) -> _R: ...

    @abstractmethod
    def on_content_filtered(self, event: ContentFiltered) -> _R: ...

    @abstractmethod
    def on_plugin_failed(self, event: PluginFailed) -> _R: ...


def _handler_name(cls: type) -> str:
    """The visitor method for an event class: its own, else its nearest base's, else
    ``on_event``."""
    for base in cls.__mro__:
        name = _HANDLER_NAMES.get(base)
        if name is not None:
            return name
    return "on_event"


_HANDLER_NAMES: dict[type[Event], str] = {
    cls: f"on_{'tool_blocked' if cls is ToolBlockedEvent else _kind_of(cls)}"
    for cls in (v for v in tuple(globals().values()) if isinstance(v, type))
    if issubclass(cls, Event) and cls is not Event and cls.__module__ == __name__
}


__all__ = [
    "ArgumentScanner",
    "ArgumentsAdjusted",
    "ContentFiltered",
    "ContextCompacted",
    "DuplicateSuppressed",
    "Event",
    "EventVisitor",
    "InvalidArguments",
    "InvalidOutput",
    "LimitReached",
    "ParentCall",
    "PluginFailed",
    "ProviderFallback",
    "ProviderRetry",
    "RequestBody",
    "RequestSent",
    "ResponseReceived",
    "RoundFinished",
    "RoundStarted",
    "RunFinished",
    "RunStarted",
    "TextDelta",
    "ThinkingDelta",
    "ToolApproved",
    "ToolBlockedEvent",
    "ToolCallArgumentsDelta",
    "ToolCallCompleted",
    "ToolCallRecovered",
    "ToolCallStarted",
    "ToolChoiceDegraded",
    "ToolCompleted",
    "ToolDeferred",
    "ToolDenied",
    "ToolFailed",
    "ToolOmitted",
    "ToolProgress",
    "ToolResolutionCorrected",
    "ToolStarted",
    "ToolsDeferred",
    "ToolsPromoted",
    "UnknownTool",
]
