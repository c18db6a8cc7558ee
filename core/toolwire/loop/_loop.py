"""``ToolCallingLoop``: rounds of offer, request, admission and execution until the run ends."""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import types
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .._trust import TrustLevel
from ..adapters._base import ModelRequest, NamedToolChoice, ProviderError, ToolChoice
from ..adapters._outcome import answer_outcome
from ..config import Config
from ..context._gather import gather_request_context
from ..context._records import ContextRequest
from ..events import (
    Event,
    LimitReached,
    PluginFailed,
    RequestSent,
    ResponseReceived,
    RoundFinished,
    RoundStarted,
    RunFinished,
    RunStarted,
    ToolBlockedEvent,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolCompleted,
    ToolDeferred,
    ToolDenied,
    ToolFailed,
    ToolProgress,
    ToolStarted,
)
from ..messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ..tools._context import FILTERED_SERVICE, ToolContext
from ..tools._errors import ArgumentsInvalid
from ..tools._result import ToolBlocked, ToolResult, ToolStatus
from ._admission import (
    AdmissionContext,
    Admitted,
    NeedsDecision,
    Refused,
    admit,
    duplicate_key,
)
from ._cancel import answer_cancelled
from ._codec import redact_arguments
from ._execution import (
    Attempt,
    CoarseBounds,
    LedgerRow,
    describe,
    record_start,
    with_backstop,
    with_ledger,
    with_retries,
)
from ._ids import run_call_id, taken_ids, with_run_id, with_run_ids
from ._ledger import Ledger, LedgerEntry, ledger_for
from ._offer import Offer, Selection, resolve_offer
from ._protocol import LoopHost
from ._resume import edited_call, interrupted_request, pending_turn, rebuild_results
from ._run import (
    Approve,
    Decision,
    DeferredRequest,
    Deny,
    Outcome,
    Run,
    RunOptions,
    Supply,
    ToolCallRecord,
)
from ._schedule import schedule
from ._state import Approver, CallSlot, RunState
from ._stream import RunStream

if TYPE_CHECKING:
    from ..adapters import ProviderAdapter
    from ..tools import Tool

_ANY_TOOL_CHOICE = ("auto", "none", "required")


class ToolCallingLoop:
    """The provider-independent tool-calling loop of one host (DESIGN §5).

    Each round resolves the offer, sends the conversation through the provider adapter, admits
    every tool call of the answer (fail-closed: limits, unknown tool, unparseable arguments,
    schema, duplicates, approval) and executes the admitted ones through
    ``toolwire_execute_tool``; every call of a turn gets exactly one result. The run ends when
    the model answers without calls, a limit is reached, the provider fails, a ``fail`` policy
    fires, or calls wait for a decision (see :meth:`resume`).

    Cancellation: when the task running :meth:`run` is cancelled, running tools are cancelled,
    every call of the turn is answered as cancelled, ``RunFinished(stop_reason="cancelled")``
    is emitted and the run is stored in the ledger, then ``CancelledError`` propagates (the
    run is also kept as :attr:`last_run`). Setting the ``cancel`` event passed to :meth:`run`
    does the same but returns the run with stop reason ``cancelled`` instead of raising.

    :param host: the host whose config, tools, hooks and adapter the loop uses.
    :param adapter: a provider adapter to use instead of the host's configured one (tests).
    :param ledger: a ledger to use instead of the host's (``[ledger]``); set the attribute
        :attr:`ledger` to None to run without one.
    """

    retry_backoff: float = 0.25
    """Seconds before the first retry of a retryable error result; doubled for each next one."""
    retry_backoff_max: float = 8.0

    def __init__(
        self,
        host: LoopHost,
        *,
        adapter: ProviderAdapter | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        self.host = host
        self._adapter = adapter
        config: Config = host.config
        self.config = config
        self.ledger = ledger if ledger is not None else ledger_for(host)
        self._pipeline = host.pipeline
        self.last_run: Run | None = None
        self._trust = config.provider.trust_level
        self._services: Mapping[str, Any] = types.MappingProxyType({"host": host, "config": config})
        self._thread = threading.get_ident()
        self._loop_of_run: asyncio.AbstractEventLoop | None = None
        self._coarse = CoarseBounds()  # the default tool bound's shared timers

    # -- public API ------------------------------------------------------------------------

    async def run(
        self,
        prompt_or_messages: str | Sequence[Message],
        *,
        system_prompt: str | None = None,
        tools: Sequence[str] | None = None,
        profile: str | None = None,
        tool_choice: ToolChoice | str = "auto",
        stream: bool | None = None,
        run_id: str | None = None,
        approval: Approver | None = None,
        cancel: asyncio.Event | None = None,
    ) -> Run:
        """Run one conversation to its end.

        :param prompt_or_messages: a user prompt, or a conversation (a leading
            :class:`~toolwire.messages.SystemMessage` is the base system prompt).
        :param system_prompt: the base system prompt (overrides a leading system message and
            ``[loop] system_prompt``); tool instructions are appended to it each round.
        :param tools: names of the tools to offer, instead of ``[tools] enable``.
        :param profile: a ``[profiles.<name>]`` to apply instead of ``[tools] profile``.
        :param tool_choice: ``auto``, ``none``, ``required``, a tool name or a
            :class:`~toolwire.adapters.NamedToolChoice`; ``required`` and a named tool apply to
            the first round only (later rounds use ``auto`` so the model can answer).
        :param stream: ask the adapter to stream (default ``[provider] stream``).
        :param run_id: the run's id (default: a new random id).
        :param approval: decides calls that need approval as they come (return None to defer).
        :param cancel: set it to stop the run: running tools are cancelled, pending calls
            answered as cancelled, and the run returns with stop reason ``cancelled``.
        :raises ValueError: for an unknown tool name, profile or tool choice.
        """
        state = self._new_state(
            prompt_or_messages,
            system_prompt=system_prompt,
            tools=tools,
            profile=profile,
            tool_choice=tool_choice,
            stream=stream,
            run_id=run_id,
        )
        state.approval = approval
        state.cancel = cancel
        return await self._drive(state, resumed=False, decisions=None)

    def _prepare_stream(
        self, prompt_or_messages: str | Sequence[Message], options: Mapping[str, Any]
    ) -> RunState:
        options = dict(options)
        approval = options.pop("approval", None)
        cancel = options.pop("cancel", None)
        state = self._new_state(
            prompt_or_messages,
            system_prompt=options.pop("system_prompt", None),
            tools=options.pop("tools", None),
            profile=options.pop("profile", None),
            tool_choice=options.pop("tool_choice", "auto"),
            stream=options.pop("stream", None),
            run_id=options.pop("run_id", None),
        )
        if options:
            raise TypeError(f"stream() got unknown option(s): {', '.join(sorted(options))}")
        state.approval = approval
        state.cancel = cancel
        return state

    async def resume(
        self,
        run: Run | str,
        decisions: Mapping[str, Decision] | None = None,
        *,
        approval: Approver | None = None,
        cancel: asyncio.Event | None = None,
    ) -> Run:
        """Continue a run: decide its deferred calls, answer its unfinished turn, go on.

        ``run`` is a :class:`Run` or a run id (loaded from the ledger with :meth:`load`, for
        example after the process running it was killed). Each decision is
        :class:`Approve` (optionally with edited arguments, admitted again like the model's
        own), :class:`Deny` (the message goes to the model) or :class:`Supply` (the result
        given). Calls left undecided stay deferred. A call of an interrupted turn that the
        ledger shows settled is not run again; one that started but never settled is run again
        when its tool is idempotent, otherwise it is deferred for approval
        (``reason="interrupted"``). The run keeps its trust requirement and counters; the
        deadline starts again.

        :raises ValueError: for decisions naming unknown call ids (the message lists the
            pending ones), an :class:`Approve` of an external tool, or a run that answered.
        """
        if isinstance(run, str):
            run = self.load(run)
        decisions = dict(decisions or {})
        if run.stop_reason == "answered":
            raise ValueError(
                f"run {run.id} already answered; to go on, start a new run with its messages "
                "and a new user message"
            )
        pending = {d.call_id: d for d in run.deferred}
        unknown = sorted(set(decisions) - set(pending))
        if unknown:
            listed = ", ".join(sorted(pending)) or "none"
            raise ValueError(
                f"run {run.id} has no deferred call with id {', '.join(map(repr, unknown))}; "
                f"deferred calls: {listed}"
            )
        for call_id, decision in decisions.items():
            if not isinstance(decision, Approve | Deny | Supply):
                raise ValueError(
                    f"decision for call {call_id!r} is {decision!r}; expected Approve, Deny or "
                    "Supply"
                )
            if isinstance(decision, Approve) and pending[call_id].reason == "external":
                raise ValueError(
                    f"call {call_id!r} is for the external tool {pending[call_id].tool!r}, which "
                    "the host cannot run: answer it with Supply(result) or Deny(message)"
                )
        state = self._restore(run)
        state.approval = approval
        state.cancel = cancel
        return await self._drive(state, resumed=True, decisions=decisions)

    def stream(self, prompt_or_messages: str | Sequence[Message], **options: Any) -> RunStream:
        """Run like :meth:`run`, yielding every event as it happens (the last is ``RunFinished``).

        The returned iterator's :attr:`RunStream.run` holds the :class:`Run` once the iteration
        ended. Closing the iterator early (``aclose``, leaving ``async for`` by ``break``)
        cancels the run.
        """
        return RunStream(self, self._prepare_stream(prompt_or_messages, options))

    def load(self, run_id: str) -> Run:
        """The run ``run_id`` as last stored in the ledger.

        A run whose process ended in the middle comes back with stop reason ``interrupted``;
        the calls of its last turn that started and never settled and whose tools are not
        idempotent are listed in ``deferred`` (``reason="interrupted"``), for :meth:`resume`.

        :raises ValueError: when the ledger is disabled or does not know the run.
        """
        if self.ledger is None:
            raise ValueError(
                f"cannot load run {run_id!r}: the ledger is disabled ([ledger] enabled = false)"
            )
        data = self.ledger.load_run(run_id)
        if data is None:
            raise ValueError(f"the ledger {str(self.ledger.path)!r} has no run {run_id!r}")
        run = Run.from_json(data)
        if run.stop_reason != "interrupted":
            return run
        turn = pending_turn(run.messages)
        if turn is None:
            return run
        answered = {r.call.id for r in run.tool_calls if r.round == run.rounds}
        entries = self.ledger.entries(run.id, run.rounds)
        deferred = list(run.deferred)
        used = run.tool_calls_used
        for call in turn.tool_calls:
            entry = entries.get(call.id)
            if call.provider_executed or call.id in answered or entry is None:
                continue
            used += 1  # admitted before the process ended
            if entry.settled:
                continue
            if not entry.idempotent:
                deferred.append(
                    interrupted_request(entry.tool, call.id, entry.arguments, run.rounds)
                )
        return attrs.evolve(run, deferred=tuple(deferred), tool_calls_used=used)

    async def call(
        self, name: str, arguments: Mapping[str, Any], *, run_id: str | None = None
    ) -> ToolResult:
        """Run one call of the tool ``name`` without a model.

        The arguments are validated against the tool's schema (a refusal is an ``error``
        result), then executed like a call of a run: ``toolwire_execute_tool`` with every
        middleware (``[policy]`` included), the tool's timeout and retries, the result-size
        limits, and the ledger when the loop has one. Events go to ``toolwire_event``.

        :raises KeyError: when no tool of that name is registered (the message lists them).
        """
        tool = self.host.tools.get(name)
        if tool is None:
            known = ", ".join(self.host.tools) or "none are registered"
            raise KeyError(f"no tool named {name!r}; registered tools: {known}")
        state = RunState(run_id or f"call_{uuid.uuid4().hex}", RunOptions(), [])
        state.cancelled_flag = asyncio.Event()
        self._loop_of_run = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        slot = CallSlot(ToolCall(id="call_1", name=name, arguments=dict(arguments)))
        slot.tool = tool
        try:
            slot.arguments = tool.validate(arguments)
        except ArgumentsInvalid as exc:
            return ToolResult.error(str(exc), exception=exc)
        try:
            await self._run_call(state, 0, slot, ())
        finally:
            if self.ledger is not None and self.ledger.pending:
                self.ledger.flush()
        assert slot.result is not None
        return slot.result

    # -- state -----------------------------------------------------------------------------

    def _new_state(
        self,
        prompt: str | Sequence[Message],
        *,
        system_prompt: str | None,
        tools: Sequence[str] | None,
        profile: str | None,
        tool_choice: ToolChoice | str,
        stream: bool | None,
        run_id: str | None,
    ) -> RunState:
        messages: list[Message]
        if isinstance(prompt, str):
            messages = [UserMessage(prompt)]
        elif isinstance(prompt, Sequence):
            messages = [*prompt]
            for i, message in enumerate(messages):
                if not isinstance(
                    message, SystemMessage | UserMessage | AssistantMessage | ToolResultMessage
                ):
                    raise TypeError(
                        f"messages[{i}] is a {type(message).__name__}; expected a message of "
                        "toolwire.messages"
                    )
        else:
            raise TypeError(
                f"the prompt must be a str or a sequence of messages, got {type(prompt).__name__}"
            )
        base = self.config.loop.system_prompt
        first = messages[0] if messages else None
        if isinstance(first, SystemMessage):
            messages.pop(0)
            base = first.content
        if system_prompt is not None:
            base = system_prompt
        tool_names: tuple[str, ...] | None = None
        if tools is not None:
            if isinstance(tools, str):
                raise TypeError("tools= takes a list of tool names, not a str")
            tool_names = tuple(tools)
            registered = self.host.tools
            unknown = [n for n in tool_names if n not in registered]
            if unknown:
                known = ", ".join(registered) or "none are registered"
                raise ValueError(
                    f"tools={list(tool_names)!r} names unknown tool(s) "
                    f"{', '.join(map(repr, unknown))}; registered tools: {known}"
                )
        choice = _tool_choice(tool_choice)
        options = RunOptions(
            system_prompt=base,
            tools=tool_names,
            profile=profile,
            tool_choice=choice,
            stream=stream,
        )
        Selection.from_config(self.config, tool_names, profile)  # refuses an unknown profile now
        return RunState(run_id or f"run_{uuid.uuid4().hex}", options, messages)

    def _restore(self, run: Run) -> RunState:
        messages = list(run.messages)
        if messages and isinstance(messages[0], SystemMessage):
            messages.pop(0)
        state = RunState(run.id, run.options, messages)
        state.base_system = run.options.system_prompt
        state.records = list(run.tool_calls)
        state.events = list(run.events)
        state.sources = {s.url: s for s in run.sources}
        state.rounds = run.rounds
        state.used = run.tool_calls_used
        state.required_trust = run.required_trust
        state.usage = run.usage
        state.deferred = list(run.deferred)
        state.forced_choice_used = run.rounds > 0
        for record in run.tool_calls:
            if (
                record.outcome == "executed"
                and record.result is not None
                and record.result.is_ok
                and record.arguments is not None
                and record.tool is not None
            ):
                tool = self.host.tools.get(record.tool)
                if tool is not None and not tool.allow_duplicates:
                    key = duplicate_key(tool, record.arguments)
                    state.seen.setdefault(key, record.call.id)
        return state

    # -- events ----------------------------------------------------------------------------

    async def _start_round(
        self,
        state: RunState,
        adapter: ProviderAdapter,
        round: int,
        messages: tuple[Message, ...],
    ) -> Offer:
        """Resolve the round's offer from the config and the run's options, and announce it."""
        selection = Selection.from_config(self.config, state.options.tools, state.options.profile)
        offer = await resolve_offer(
            self.host,
            adapter,
            selection,
            run_id=state.run_id,
            round=round,
            messages=messages,
            base_system_prompt=state.base_system,
            provider_trust=self._trust,
            emit=lambda event: self._emit(state, event),
        )
        self._emit(state, RoundStarted(run_id=state.run_id, round=round, offered=offer.names))
        return offer

    def _emit(self, state: RunState, event: Event) -> None:
        if isinstance(event, ToolCallArgumentsDelta) and event.partial_arguments is not None:
            # The partial value is the parser's live object, right only at emit time; the run
            # keeps the delta text, from which the arguments at any point can be rebuilt.
            state.events.append(attrs.evolve(event, partial_arguments=None))
        else:
            state.events.append(event)
        self.host.emit(event)
        if state.sink is not None:
            state.sink(event)

    def _sensitive(self, name: str) -> frozenset[str]:
        tool = self.host.tools.get(name)
        return tool.sensitive_arguments if tool is not None else frozenset()

    def _redacted_call(self, call: ToolCall) -> ToolCall:
        sensitive = self._sensitive(call.name)
        if not sensitive:
            return call
        return attrs.evolve(
            call,
            arguments=redact_arguments(call.arguments, sensitive)
            if call.arguments is not None
            else None,
            raw_arguments="[redacted]" if call.raw_arguments is not None else None,
        )

    def _redacted_message(self, message: AssistantMessage) -> AssistantMessage:
        parts = tuple(
            self._redacted_call(p) if isinstance(p, ToolCall) else p for p in message.parts
        )
        if all(a is b for a, b in zip(parts, message.parts, strict=True)):
            return message
        return attrs.evolve(message, parts=parts)

    def _adapter_emitter(self, state: RunState, round: int) -> Callable[[Event], None]:
        run_id = state.run_id
        taken = taken_ids(state.messages)  # ids a provider may number afresh each round

        def emit(event: Event) -> None:
            if event.run_id != run_id or event.round != round:
                event = attrs.evolve(event, run_id=run_id, round=round)
            if isinstance(event, ToolCallStarted | ToolCallArgumentsDelta) and taken:
                if event.call_id in taken:
                    event = attrs.evolve(event, call_id=run_call_id(event.call_id, round, taken))
            elif isinstance(event, ToolCallCompleted) and taken:
                event = attrs.evolve(event, call=with_run_id(event.call, round, taken))
            if isinstance(event, ToolCallStarted):
                state.call_names[event.call_id] = event.name
            elif isinstance(event, ToolCallArgumentsDelta):
                name = state.call_names.get(event.call_id)
                if name is not None and self._sensitive(name):
                    event = attrs.evolve(event, delta="", partial_arguments=None)
            elif isinstance(event, ToolCallCompleted):
                redacted = self._redacted_call(event.call)
                if redacted is not event.call:
                    event = attrs.evolve(event, call=redacted)
            self._emit(state, event)

        return emit

    # -- driving ---------------------------------------------------------------------------

    async def _drive(
        self, state: RunState, *, resumed: bool, decisions: Mapping[str, Decision] | None
    ) -> Run:
        adapter = self._adapter or await self.host.get_adapter()
        self._loop_of_run = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        deadline_seconds = self.config.loop.deadline_seconds
        if deadline_seconds is not None:
            state.deadline = asyncio.get_running_loop().time() + deadline_seconds
        state.cancelled_flag = state.cancel or asyncio.Event()
        trace_token = self._pipeline.begin_trace()
        state.stop = None
        state.detail = None
        state.error = None
        cancelled: asyncio.CancelledError | None = None
        try:
            self._emit(
                state,
                RunStarted(
                    run_id=state.run_id,
                    api=adapter.api,
                    model=self.config.provider.model,
                    resumed=resumed,
                ),
            )
            try:
                if resumed:
                    await self._resume_turn(state, adapter, decisions or {})
                while state.stop is None:
                    await self._round(state, adapter)
            except asyncio.CancelledError as exc:
                cancelled = exc
                state.cancelled_flag.set()
                state.finish("cancelled", "the task running the run was cancelled")
            run = state.build()
            self.last_run = run
            if state.ledger_written or run.stop_reason != "answered" or resumed:
                self._store(state, run)
            elif self.ledger is not None:
                # Nothing to recover from an answered run without side effects: no I/O.
                self.ledger.discard(run.id)
            self._emit(
                state,
                RunFinished(
                    run_id=state.run_id,
                    round=state.rounds or None,
                    stop_reason=run.stop_reason,
                    detail=run.detail,
                ),
            )
            run = attrs.evolve(run, events=tuple(state.events))
            self.last_run = run
        finally:
            self._pipeline.end_trace(trace_token)
        if cancelled is not None:
            raise cancelled
        return run

    def _store(self, state: RunState, run: Run | None) -> None:
        """Store the run's final snapshot (None: only the pending settled rows)."""
        if self.ledger is None:
            return
        try:
            if run is None:
                self.ledger.flush()
            else:
                self.ledger.save_run(run.id, self._snapshot(run))
        except Exception as exc:  # the ledger must never cost the run its result
            self._emit(
                state,
                PluginFailed(
                    run_id=state.run_id,
                    round=state.rounds or None,
                    plugin="toolwire.ledger",
                    hook="ledger",
                    error=f"the run could not be stored in {str(self.ledger.path)!r}: "
                    f"{describe(exc)}",
                ),
            )

    def _snapshot(self, run: Run) -> str:
        return json.dumps(run.to_json(events=False), ensure_ascii=False, default=str)

    async def _round(self, state: RunState, adapter: ProviderAdapter) -> None:
        """One round: the checks before it, then offer, request, answer and turn.

        A round that started ends with exactly one ``RoundFinished``, emitted here.
        """
        if not self._may_start_round(state, adapter):
            return
        state.rounds += 1
        round = state.rounds
        tool_calls = await self._play_round(state, adapter, round)
        self._emit(state, RoundFinished(run_id=state.run_id, round=round, tool_calls=tool_calls))

    def _may_start_round(self, state: RunState, adapter: ProviderAdapter) -> bool:
        """False (the run finished) when cancellation, a limit or trust forbid another round."""
        loop_config = self.config.loop
        if state.cancel_requested:
            state.finish("cancelled", "the run was cancelled")
            return False
        if state.rounds >= loop_config.max_rounds:
            self._emit(
                state,
                LimitReached(
                    run_id=state.run_id,
                    round=state.rounds,
                    limit="max_rounds",
                    value=loop_config.max_rounds,
                ),
            )
            state.finish(
                "max_rounds",
                f"the model was still calling tools after {loop_config.max_rounds} round(s) "
                "([loop] max_rounds)",
            )
            return False
        if self._deadline_passed(state):
            self._deadline_reached(state)
            return False
        provider_trust = self._trust
        if state.required_trust is not None and provider_trust < state.required_trust:
            state.finish(
                "trust",
                f"round {state.rounds + 1} refused: results of this run (from "
                f"{state.trust_origin or 'an earlier call'}) require a provider trusted at least "
                f"{state.required_trust.label!r}, and the provider {adapter.api!r} is trusted "
                f"{provider_trust.label!r} ([provider] trust)",
            )
            return False
        return True

    async def _play_round(self, state: RunState, adapter: ProviderAdapter, round: int) -> int:
        """Offer, request, answer and turn of round ``round``; the number of calls it answered."""
        messages = tuple(state.messages)
        offer = await self._start_round(state, adapter, round, messages)
        messages = await self._request_context(state, adapter, round, offer, messages)
        request = self._model_request(state, adapter, round, offer, messages)
        if request is None:
            return 0
        message = await self._ask_model(state, adapter, request)
        if message is None:
            return 0
        calls = self._take_answer(state, round, message, adapter.api)
        if not calls:
            return 0
        slots = [CallSlot(call) for call in calls]
        state.snapshot_used = state.used
        state.snapshot_pending = self.ledger is not None
        await self._turn(state, round, slots, offer)
        return len(calls)

    async def _request_context(
        self,
        state: RunState,
        adapter: ProviderAdapter,
        round: int,
        offer: Offer,
        messages: tuple[Message, ...],
    ) -> tuple[Message, ...]:
        """The round's messages with the context plugins contribute (``toolwire_request_context``);
        their sources join the run's, and their trust requirement tightens the run's."""
        if not self._pipeline.request_context:
            return messages
        context = await gather_request_context(
            self.host.hook,
            ContextRequest(
                run_id=state.run_id,
                round=round,
                messages=messages,
                offered=offer.names,
                api=adapter.api,
                model=self.config.provider.model,
                provider_trust=self._trust,
                native_tools=adapter.capabilities.native_tools,
                services=self._run_services(state),
            ),
            lambda event: self._emit(state, event),
            bound=self.config.loop.hook_timeout,
        )
        for source in context.sources:
            state.sources.setdefault(source.url, source)
        if context.required_trust is not None and (
            state.required_trust is None or context.required_trust > state.required_trust
        ):
            state.required_trust = context.required_trust
            state.trust_origin = f"the context passages of round {round}"
        return context.apply(messages)

    def _model_request(
        self,
        state: RunState,
        adapter: ProviderAdapter,
        round: int,
        offer: Offer,
        messages: tuple[Message, ...],
    ) -> ModelRequest | None:
        """The round's request (announced with ``RequestSent``), or None when the run's
        tool choice cannot be met by this offer (the run finished with an error)."""
        choice = state.options.tool_choice
        if state.forced_choice_used and choice != "none":
            choice = "auto"
        state.forced_choice_used = True
        if isinstance(choice, NamedToolChoice) and choice.name not in offer.tools:
            state.finish(
                "error",
                f"tool_choice names the tool {choice.name!r}, which is not offered in round "
                f"{round} (offered: {', '.join(offer.names) or 'none'})",
            )
            return None
        if choice == "required" and not offer.functions:
            state.finish("error", f"tool_choice is 'required' but round {round} offers no tool")
            return None
        stream = state.options.stream
        if stream is None:
            stream = self.config.provider.stream
        if offer.system_prompt:
            messages = (SystemMessage(offer.system_prompt), *messages)
        request = ModelRequest(
            run_id=state.run_id,
            round=round,
            messages=messages,
            functions=offer.functions,
            tool_choice=choice,
            parallel_tool_calls=(
                False if self.config.loop.concurrency == 1 and offer.functions else None
            ),
            stream=stream,
        )
        self._emit(
            state,
            RequestSent(
                run_id=state.run_id,
                round=round,
                api=adapter.api,
                model=self.config.provider.model,
                tools=len(offer.functions),
                stream=stream,
            ),
        )
        return request

    async def _ask_model(
        self, state: RunState, adapter: ProviderAdapter, request: ModelRequest
    ) -> AssistantMessage | None:
        """The adapter's answer to ``request``, or None when it failed (the run finished)."""
        round = request.round
        emit = self._adapter_emitter(state, round)
        try:
            if state.deadline is None:
                message = await adapter.complete(request, emit)
            else:
                async with asyncio.timeout_at(state.deadline):
                    message = await adapter.complete(request, emit)
        except TimeoutError as exc:
            if self._deadline_passed(state):
                self._deadline_reached(state)
            else:
                state.error = exc
                state.finish(
                    "error", f"the {adapter.api} adapter failed in round {round}: {describe(exc)}"
                )
            return None
        except ProviderError as exc:
            state.error = exc
            state.finish("error", f"the provider ({adapter.api}) failed in round {round}: {exc}")
            return None
        except Exception as exc:
            state.error = exc
            state.finish(
                "error", f"the {adapter.api} adapter raised in round {round}: {describe(exc)}"
            )
            return None
        if not isinstance(message, AssistantMessage):
            state.finish(
                "error",
                f"the {adapter.api} adapter returned {type(message).__name__}, not an "
                "AssistantMessage",
            )
            return None
        return message

    def _take_answer(
        self, state: RunState, round: int, message: AssistantMessage, api: str
    ) -> list[ToolCall]:
        """Record the model's answer; the calls the host must answer (none: the run answered)."""
        message = with_run_ids(message, round, taken_ids(state.messages))
        state.messages.append(message)
        state.add_usage(message.usage)
        self._emit(
            state,
            ResponseReceived(
                run_id=state.run_id,
                round=round,
                message=self._redacted_message(message),
                usage=message.usage,
            ),
        )
        calls: list[ToolCall] = []
        for call in message.tool_calls:
            if call.provider_executed:
                state.records.append(
                    ToolCallRecord(call=call, round=round, outcome="provider_executed")
                )
            else:
                calls.append(call)
        if not calls:
            state.text = message.text
            state.finish(
                *answer_outcome(message, api=api, max_tokens=self.config.provider.max_tokens)
            )
        return calls

    async def _resume_turn(
        self, state: RunState, adapter: ProviderAdapter, decisions: Mapping[str, Decision]
    ) -> None:
        """Answer the calls of the run's last turn that have no result yet."""
        turn = pending_turn(tuple(state.messages))
        if turn is None:
            state.deferred = []
            return
        round = state.rounds
        by_id = {r.call.id: r for r in state.records if r.round == round}
        deferred = {d.call_id: d for d in state.deferred}
        calls = [c for c in turn.tool_calls if not c.provider_executed]
        if all(by_id.get(c.id) is not None and by_id[c.id].result is not None for c in calls):
            state.deferred = []
            rebuild_results(state, turn, round)
            return
        offer = await self._start_round(state, adapter, round, tuple(state.messages))
        unanswered = any(
            c.id not in deferred and (c.id not in by_id or by_id[c.id].result is None)
            for c in calls
        )
        entries = (
            self.ledger.entries(state.run_id, round)
            if unanswered and self.ledger is not None
            else {}
        )
        kept = [
            r
            for r in state.records
            if not (r.round == round and r.call.id in {c.id for c in calls})
        ]
        slots: list[CallSlot] = []
        to_admit: list[tuple[CallSlot, bool]] = []
        for call in calls:
            slot, approved = self._resumed_slot(
                state, round, call, offer, by_id.get(call.id), deferred, decisions, entries
            )
            slots.append(slot)
            if approved is not None:
                to_admit.append((slot, approved))
        state.records = kept
        state.deferred = []
        await self._answer_turn(state, round, offer, turn, slots, to_admit)
        self._emit(state, RoundFinished(run_id=state.run_id, round=round, tool_calls=len(calls)))

    def _resumed_slot(
        self,
        state: RunState,
        round: int,
        call: ToolCall,
        offer: Offer,
        record: ToolCallRecord | None,
        deferred: Mapping[str, DeferredRequest],
        decisions: Mapping[str, Decision],
        entries: Mapping[str, LedgerEntry],
    ) -> tuple[CallSlot, bool | None]:
        """The slot of one call of a resumed turn, and whether it goes to admission (None: it
        is answered or deferred already; True: approved by a decision)."""
        slot = CallSlot(call)
        if record is not None and record.result is not None:
            slot.tool = self.host.tools.get(record.tool) if record.tool else None
            slot.arguments = record.arguments
            slot.attempts = record.attempts
            slot.duration = record.duration
            slot.answer(record.outcome, record.result)
            return slot, None
        request = deferred.get(call.id)
        if request is not None:
            return slot, self._decided(state, round, slot, offer, request, decisions.get(call.id))
        entry = entries.get(call.id)
        if entry is not None and entry.settled and entry.result is not None:
            slot.tool = self.host.tools.get(entry.tool)
            slot.arguments = entry.arguments
            slot.answer("recovered", entry.result)
            self._settle_events(state, round, slot, entry.tool)
            return slot, None
        if entry is not None and not entry.idempotent:
            slot.tool = self.host.tools.get(entry.tool)
            slot.arguments = entry.arguments
            interrupted = interrupted_request(entry.tool, call.id, entry.arguments, round)
            slot.defer(interrupted)
            self._emit(
                state,
                ToolDeferred(
                    run_id=state.run_id,
                    round=round,
                    call_id=call.id,
                    name=entry.tool,
                    reason=interrupted.detail,
                ),
            )
            return slot, None
        # Never started, or an idempotent call (those get no started row): admit it again.
        return slot, False

    def _decided(
        self,
        state: RunState,
        round: int,
        slot: CallSlot,
        offer: Offer,
        request: DeferredRequest,
        decision: Decision | None,
    ) -> bool | None:
        """Apply the caller's decision on a deferred call; True when it goes to admission."""
        slot.arguments = request.arguments
        if decision is None:
            slot.defer(request)
            slot.tool = offer.tools.get(request.tool) or self.host.tools.get(request.tool)
        elif isinstance(decision, Deny):
            self._deny(state, round, slot, request.tool, decision.message)
        elif isinstance(decision, Supply):
            slot.tool = self.host.tools.get(request.tool)
            slot.answer("supplied", decision.result)
            self._settle_events(state, round, slot, request.tool)
        else:
            arguments = decision.arguments
            if arguments is None:
                arguments = request.arguments
            slot.request = edited_call(slot.call, request.tool, arguments)
            return True
        return None

    async def _answer_turn(
        self,
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
                fail = await self._admit(state, round, slot, offer, count=True, approved=approved)
            if fail is not None:
                for slot, _ in to_admit:
                    if slot.result is None:
                        slot.answer("not_run", _not_run(fail))
                state.finish("fail_policy", fail)
            else:
                await self._execute(
                    state,
                    round,
                    [s for s, _ in to_admit if s.result is None and s.deferred is None],
                )
        except BaseException:
            answer_cancelled(slots)
            raise
        finally:
            self._close_turn(state, round, slots, turn)

    # -- admission -------------------------------------------------------------------------

    async def _turn(self, state: RunState, round: int, slots: list[CallSlot], offer: Offer) -> None:
        turn = state.messages[-1]
        assert isinstance(turn, AssistantMessage)
        await self._answer_turn(state, round, offer, turn, slots, [(s, False) for s in slots])

    def _close_turn(
        self, state: RunState, round: int, slots: list[CallSlot], turn: AssistantMessage
    ) -> None:
        for slot in slots:
            state.records.append(slot.record(round))
            if slot.deferred is not None:
                state.deferred.append(slot.deferred)
        rebuild_results(state, turn, round)
        if state.turn_started and self.ledger is not None:
            state.turn_started = False
            self._store(state, None)  # the turn's side effects are settled: say so now
        if state.deferred:
            listed = ", ".join(f"{d.tool} ({d.call_id}: {d.reason})" for d in state.deferred)
            state.finish("deferred", f"waiting for a decision on: {listed}")
        elif state.cancel_requested or (
            state.cancelled_flag is not None and state.cancelled_flag.is_set()
        ):
            state.finish("cancelled", "the run was cancelled")
        elif state.budget_hit:
            state.finish(
                "max_tool_calls",
                f"the run reached its limit of {self.config.loop.max_tool_calls} tool call(s) "
                "([loop] max_tool_calls)",
            )
        elif state.deadline_hit:
            self._deadline_reached(state)

    def _deadline_passed(self, state: RunState) -> bool:
        return state.deadline is not None and asyncio.get_running_loop().time() >= state.deadline

    def _deadline_reached(self, state: RunState) -> None:
        seconds = self.config.loop.deadline_seconds or 0
        if state.stop is None:
            self._emit(
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

    async def _admit(
        self,
        state: RunState,
        round: int,
        slot: CallSlot,
        offer: Offer,
        *,
        count: bool = True,
        approved: bool = False,
    ) -> str | None:
        """Admit one call through :func:`admit` and apply the verdict; returns a reason when a
        ``fail`` policy stops the run.

        On return the slot is answered (refused), deferred, or admitted (``tool`` and
        ``arguments`` set, no result yet). A call approved with edited arguments is admitted
        again, as approved; a call that waits for a decision counts only once approved.
        """
        while True:
            verdict = admit(slot.request, offer, self._admission(state, round, count, approved))
            for event in verdict.events:
                self._emit(state, event)
            if verdict.counted:
                state.used += 1
            if isinstance(verdict, Refused):
                self._refuse(state, slot, verdict)
                return verdict.fail
            slot.tool = verdict.tool
            slot.arguments = verdict.arguments
            if isinstance(verdict, Admitted):
                self._remember(state, slot, verdict.key)
                return None
            if verdict.reason == "external":
                self._defer(state, round, slot, verdict.request)
                return None
            edited = await self._decide(state, round, slot, verdict)
            if edited is None:
                return None
            slot.request = edited
            slot.tool = None
            slot.arguments = None
            count, approved = True, True  # not counted while it waited

    def _admission(
        self, state: RunState, round: int, count: bool, approved: bool
    ) -> AdmissionContext:
        """What admission reads about the run, taken now."""
        return AdmissionContext(
            run_id=state.run_id,
            round=round,
            loop=self.config.loop,
            used=state.used,
            budget_hit=state.budget_hit,
            cancel_requested=count and state.cancel_requested,
            deadline_passed=count and self._deadline_passed(state),
            seen=state.seen,
            refusal_reason=self._pipeline.refusal_reason,
            approval_reason=self._pipeline.approval_reason,
            count=count,
            approved=approved,
        )

    def _refuse(self, state: RunState, slot: CallSlot, verdict: Refused) -> None:
        if verdict.tool is not None:
            slot.tool = verdict.tool
        if verdict.arguments is not None:
            slot.arguments = verdict.arguments
        if verdict.budget_hit:
            state.budget_hit = True
        if verdict.deadline_hit:
            state.deadline_hit = True
        slot.answer(verdict.outcome, verdict.result)

    def _remember(self, state: RunState, slot: CallSlot, key: str | None) -> None:
        """Record the admitted call's duplicate key (forgotten again if it does not succeed)."""
        if key is not None:
            state.seen[key] = slot.request.id
            slot.key = key

    async def _decide(
        self, state: RunState, round: int, slot: CallSlot, verdict: NeedsDecision
    ) -> ToolCall | None:
        """Ask the run's approver about a call ``[policy]`` wants approved and apply the answer;
        returns the edited call when it was approved with other arguments."""
        decision: Any = None
        if state.approval is not None:
            decision = state.approval(verdict.request)
            if inspect.isawaitable(decision):
                decision = await decision
        name = verdict.tool.name
        if decision is None:
            self._defer(state, round, slot, verdict.request)
        elif isinstance(decision, Deny):
            self._deny(state, round, slot, name, decision.message)
        elif isinstance(decision, Supply):
            slot.answer("supplied", decision.result)
            self._settle_events(state, round, slot, name)
        elif isinstance(decision, Approve):
            if decision.arguments is not None:
                return edited_call(slot.request, name, decision.arguments)
            state.used += 1  # it runs now: a call that waited counts when it runs
            self._remember(state, slot, verdict.key)
        else:
            raise TypeError(
                f"the approval callback returned {decision!r}; expected Approve, Deny, Supply "
                "or None"
            )
        return None

    def _forget(self, state: RunState, slot: CallSlot) -> None:
        if slot.key is not None and state.seen.get(slot.key) == slot.call.id:
            del state.seen[slot.key]
        slot.key = None

    def _defer(self, state: RunState, round: int, slot: CallSlot, request: DeferredRequest) -> None:
        slot.defer(request)
        self._forget(state, slot)
        self._emit(
            state,
            ToolDeferred(
                run_id=state.run_id,
                round=round,
                call_id=slot.call.id,
                name=request.tool,
                reason=request.detail,
            ),
        )

    def _deny(self, state: RunState, round: int, slot: CallSlot, name: str, message: str) -> None:
        slot.tool = slot.tool or self.host.tools.get(name)
        slot.answer("denied", ToolResult.denied(message))
        self._settle_events(state, round, slot, name)

    # -- execution -------------------------------------------------------------------------

    async def _execute(self, state: RunState, round: int, slots: list[CallSlot]) -> None:
        """Run admitted calls: serially, or up to ``[loop] concurrency`` at once with sequential
        tools as barriers. Every slot has a result afterwards, also when cancelled."""
        if not slots:
            return
        messages = tuple(state.messages)
        if state.base_system:  # the caller's words, as a tool reading the conversation expects
            messages = (SystemMessage(state.base_system), *messages)
        limit = self.config.loop.concurrency
        state.direct_execution = self._pipeline.direct_execution
        running: set[asyncio.Task[None]] = set()
        try:
            for group in schedule(slots, limit=limit, sequential=_sequential):
                if not group.concurrent:
                    await self._run_call(state, round, group.items[0], messages)
                    continue
                for slot in group.items:
                    while len(running) >= limit:
                        running = await _reap(running, asyncio.FIRST_COMPLETED)
                    call = self._run_call(state, round, slot, messages)
                    running.add(asyncio.ensure_future(call))
                while running:
                    running = await _reap(running, asyncio.ALL_COMPLETED)
        except asyncio.CancelledError:
            assert state.cancelled_flag is not None
            state.cancelled_flag.set()
            for task in running:
                task.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)
            answer_cancelled(slots)
            raise
        finally:
            for slot in slots:
                if slot.result is None:  # only when the host itself failed: still answer it
                    slot.answer(
                        "not_run",
                        ToolResult.error(
                            "Tool execution failed: the host could not run this call."
                        ),
                    )

    async def _run_call(
        self, state: RunState, round: int, slot: CallSlot, messages: tuple[Message, ...]
    ) -> None:
        tool = slot.tool
        assert tool is not None
        arguments = slot.arguments if slot.arguments is not None else {}
        call = ToolCall(id=slot.call.id, name=tool.name, arguments=arguments)
        run_id = state.run_id
        self._emit(
            state,
            ToolStarted(
                run_id=run_id,
                round=round,
                call_id=call.id,
                name=tool.name,
                arguments=redact_arguments(arguments, tool.sensitive_arguments),
            ),
        )
        context = self._context(state, round, tool, call, messages)
        ledger = self.ledger
        row = None
        if ledger is not None:  # no row to build per call without a ledger
            row = LedgerRow(
                run_id=run_id,
                round=round,
                call_id=call.id,
                tool=tool.name,
                arguments=arguments,
                idempotent=tool.policy.idempotent,
            )
        if ledger is not None and row is not None and not row.idempotent:
            refused = record_start(ledger, row, self._pending_snapshot(state))
            if refused is not None:
                slot.answer("not_run", refused)
                self._settle_events(state, round, slot, tool.name)
                return
            state.ledger_written = state.turn_started = True
        one = self._attempt(state, tool, call, arguments, context)

        def send() -> Awaitable[tuple[ToolResult, Outcome]]:
            return with_retries(
                one, slot, backoff=self.retry_backoff, backoff_max=self.retry_backoff_max
            )

        if tool.returns_untrusted_content:
            send = self._backstop(state, round, tool, call.id, context, send)
        result, outcome = await with_ledger(ledger, row, slot, send)
        slot.answer(outcome, self._limit_size(tool, result))
        self._settle_events(state, round, slot, tool.name)

    def _backstop(
        self,
        state: RunState,
        round: int,
        tool: Tool,
        call_id: str,
        context: ToolContext,
        send: Callable[[], Awaitable[tuple[ToolResult, Outcome]]],
    ) -> Callable[[], Awaitable[tuple[ToolResult, Outcome]]]:
        limits = [
            n
            for n in (
                tool.policy.max_result_bytes,
                self.config.policy.max_result_bytes,
                self.config.policy.max_untrusted_result_bytes,
            )
            if n
        ]
        key = (round, call_id)
        return lambda: with_backstop(
            send,
            context,
            filtered=lambda: key in state.filtered_calls,
            max_bytes=min(limits),
        )

    def _pending_snapshot(self, state: RunState) -> str | None:
        """The run as it stands, once per turn, to store with the turn's first ledger row."""
        if not state.snapshot_pending:
            return None
        state.snapshot_pending = False
        interrupted = state.build(stop="interrupted")
        return self._snapshot(attrs.evolve(interrupted, tool_calls_used=state.snapshot_used))

    def _context(
        self,
        state: RunState,
        round: int,
        tool: Tool,
        call: ToolCall,
        messages: tuple[Message, ...],
    ) -> ToolContext:
        run_id = state.run_id
        call_id = call.id
        name = tool.name

        def progress(message: str, fraction: float | None = None) -> None:
            event = ToolProgress(
                run_id=run_id,
                round=round,
                call_id=call_id,
                name=name,
                message=message,
                fraction=fraction,
            )
            if threading.get_ident() == self._thread:
                self._emit(state, event)
            elif self._loop_of_run is not None:
                self._loop_of_run.call_soon_threadsafe(self._emit, state, event)

        plugin = tool.plugin
        settings = state.settings.get(plugin, _NO_SETTINGS)
        if settings is _NO_SETTINGS:
            try:
                settings = self.host.plugin_settings(plugin)
            except Exception:
                settings = None
            state.settings[plugin] = settings
        return ToolContext(
            tool=tool,
            call_id=call_id,
            run_id=run_id,
            round=round,
            messages=messages,
            settings=settings,
            provider_trust=self._trust,
            services=self._run_services(state),
            progress=progress,
            cancelled=state.cancelled_flag,
        )

    def _run_services(self, state: RunState) -> Mapping[str, Any]:
        """The host's services plus ``emit``, which records an event in this run (a tool's
        untrusted-content warning belongs to the run, not only to observers)."""
        if state.services is None:
            state.services = types.MappingProxyType(
                {
                    **self._services,
                    "emit": lambda event: self._emit(state, event),
                    FILTERED_SERVICE: lambda round, call_id: state.filtered_calls.add(
                        (round, call_id)
                    ),
                }
            )
        return state.services

    def _attempt(
        self,
        state: RunState,
        tool: Tool,
        call: ToolCall,
        arguments: Mapping[str, Any],
        context: ToolContext,
    ) -> Attempt:
        """One attempt at the call: the execution hook under the tool's timeout and the run's
        deadline. When the only implementations of ``toolwire_execute_tool`` are the built-in
        ones, they are done inline (same behaviour, without the hook machinery on every call).
        """
        timeout = tool.policy.timeout
        setting = None
        if timeout is None:  # the tool's own timeout wins
            timeout, setting = self.config.loop.tool_timeout, "[loop] tool_timeout"
        deadline_bound = False
        if state.deadline is not None:
            remaining = state.deadline - asyncio.get_running_loop().time()
            if timeout is None or remaining < timeout:
                timeout, deadline_bound = max(remaining, 0.0), True
        direct = state.direct_execution
        refusal_reason = self._pipeline.refusal_reason
        hook = self.host.hook

        def send() -> Awaitable[Any] | None:
            if direct is None:
                awaitable: Awaitable[Any] | None = hook.toolwire_execute_tool(
                    call=call, context=context
                )
                return awaitable
            if direct:  # the default policy middleware, inline
                reason = refusal_reason(tool)
                if reason is not None:
                    raise ToolBlocked(reason)
            return tool.invoke_validated(arguments, context)

        def on_deadline() -> None:
            state.deadline_hit = True

        return Attempt(
            tool=tool,
            send=send,
            timeout=timeout,
            deadline_bound=deadline_bound,
            timeout_setting=None if deadline_bound else setting,
            coarse=self._coarse if setting is not None and not deadline_bound else None,
            cancel=state.cancel,
            on_deadline=on_deadline,
        )

    def _limit_size(self, tool: Tool, result: ToolResult) -> ToolResult:
        limits = [
            n for n in (tool.policy.max_result_bytes, self.config.policy.max_result_bytes) if n
        ]
        if not limits:
            return result
        from ..tools import truncate_result

        return truncate_result(result, min(limits))

    def _settle_events(self, state: RunState, round: int, slot: CallSlot, name: str) -> None:
        """Events, sources, trust and duplicate bookkeeping of a call that got its result."""
        result = slot.result
        assert result is not None
        run_id = state.run_id
        call_id = slot.call.id
        status = result.status
        event: Event
        if status is ToolStatus.OK:
            event = ToolCompleted(
                run_id=run_id, round=round, call_id=call_id, name=name, result=result
            )
            for source in result.sources:
                known = state.sources.get(source.url)
                if known is None or (known.title is None and source.title is not None):
                    state.sources[source.url] = source
        elif status is ToolStatus.ERROR:
            event = ToolFailed(
                run_id=run_id, round=round, call_id=call_id, name=name, result=result
            )
        elif status is ToolStatus.BLOCKED:
            event = ToolBlockedEvent(
                run_id=run_id, round=round, call_id=call_id, name=name, result=result
            )
        else:
            event = ToolDenied(
                run_id=run_id, round=round, call_id=call_id, name=name, result=result
            )
        if not result.is_ok:
            self._forget(state, slot)
        needed = result.required_trust
        if needed is not None and (state.required_trust is None or needed > state.required_trust):
            state.required_trust = TrustLevel.parse(needed)
            state.trust_origin = f"{name} call {call_id}"
        self._emit(state, event)


def _sequential(slot: CallSlot) -> bool:
    assert slot.tool is not None
    return slot.tool.policy.sequential


async def _reap(tasks: set[asyncio.Task[None]], when: str) -> set[asyncio.Task[None]]:
    """Wait for tasks (``FIRST_COMPLETED`` or ``ALL_COMPLETED``); the ones still running."""
    done, pending = await asyncio.wait(tasks, return_when=when)
    for task in done:
        if not task.cancelled():
            task.exception()  # retrieved: a failure here already answered its call
    return pending


_NO_SETTINGS: Any = object()


def _not_run(reason: str) -> ToolResult:
    return ToolResult.error(f"Not run: the run stopped before this call ({reason}).")


def _tool_choice(value: ToolChoice | str) -> ToolChoice:
    if isinstance(value, NamedToolChoice):
        return value
    if value in _ANY_TOOL_CHOICE:
        return value  # type: ignore[return-value]
    if isinstance(value, str) and value:
        return NamedToolChoice(value)
    raise ValueError(
        f"tool_choice={value!r}; expected 'auto', 'none', 'required', a tool name or "
        "NamedToolChoice"
    )
