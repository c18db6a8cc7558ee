"""``ToolCallingLoop``: the public API of a run and its driver, :meth:`ToolCallingLoop._drive`,
the only code that ends a run.

The stages of a run live in their own modules and return the end of the run (an ``End``) or
None: :mod:`._round` (the checks before a round, the offer, the request, the answer),
:mod:`._turn` and :mod:`._resume_turn` (a turn's calls admitted, executed and closed),
:mod:`._admit` (admission's verdict applied), :mod:`._decision` (a decision applied),
:mod:`._execute` (calls run), :mod:`._settle` (results settled); a call moves through them along
the state machine of :mod:`._lifecycle`, which also writes the ledger. :mod:`._setup` makes a
run's state from its arguments or a stored run.
"""

from __future__ import annotations

import asyncio
import types
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .._contain import describe
from .._trust import levels_in_use
from ..adapters._base import ToolChoice
from ..config import Config
from ..events import RunFinished, RunStarted
from ..messages import AssistantMessage, Message, ToolCall
from ..tools._errors import ArgumentsInvalid
from ..tools._result import ToolResult
from ._contract import UnknownRun
from ._execute import run_call, run_services
from ._execution import CoarseBounds
from ._journal import LedgerCorrupt
from ._ledger import Ledger, LedgerEntry, ledger_for
from ._lifecycle import CallEvent, step, store
from ._offer import Offer, OfferCache
from ._protocol import LoopHost
from ._reconcile import reconcile
from ._resume_turn import Resumed, resolve_decisions, resume_turn
from ._round import run_round
from ._run import Decision, Run, RunOptions
from ._setup import new_state, restore
from ._state import Approver, CallSlot, End, ExternalHandler, RunControl, RunState, Turn
from ._stream import RunStream
from ._view import LoopView

if TYPE_CHECKING:
    from ..adapters import ProviderAdapter


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
        self.last_run: Run | None = None
        self._levels = config.trust.levels  # the scheme its runs read levels in, the host's
        with levels_in_use(self._levels):
            self._trust = config.provider.trust_level
        self._services: Mapping[str, Any] = types.MappingProxyType(
            {**getattr(host, "services", {}), "host": host, "config": config}
        )
        self._offers = OfferCache()  # the offer kept from round to round while nothing changed
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
        external: ExternalHandler | None = None,
        cancel: asyncio.Event | None = None,
        context: Mapping[str, Any] | None = None,
        output: Any = None,
    ) -> Run:
        """Run one conversation to its end.

        :param prompt_or_messages: a user prompt, or a conversation (a leading
            :class:`~toolwire.messages.SystemMessage` is the base system prompt).
        :param system_prompt: the base system prompt (overrides a leading system message and
            ``[loop] system_prompt``); tool instructions are appended to it each round.
        :param tools: names of the tools to offer, instead of ``[tools] enable``.
        :param profile: a ``[profiles.<name>]`` to apply instead of ``[tools] profile``.
        :param tool_choice: ``auto``, ``none``, ``required``, a tool name or a
            :class:`~toolwire.adapters.NamedToolChoice`; ``required`` and a named tool apply to the
            first round only (later rounds use ``auto`` so the model can answer).
        :param stream: ask the adapter to stream (default ``[provider] stream``).
        :param run_id: the run's id (default: a new random id).
        :param approval: decides calls that need approval as they come (return None to defer).
        :param external: answers the calls the host does not run as they come, so the run goes on:
            calls of external tools (every call with ``[loop] execute_tools = false``) and calls a
            tool or a middleware deferred (``CallDeferred``); see
            :data:`~toolwire.loop.ExternalHandler` (return None to defer).
        :param cancel: set it to stop the run: running tools are cancelled, pending calls answered
            as cancelled, and the run returns with stop reason ``cancelled``.
        :param context: the application's own values for its tools, by name
            (``ToolContext.values``); never shown to the model.
        :param output: the type of the final answer (a dataclass, an attrs class, a TypedDict, any
            type a tool parameter may have, or a JSON Schema; default ``[run] output_schema``): the
            answer is checked, sent back while wrong (``[run] output_retries``) and structured into
            :attr:`Run.output`.
        :raises ValueError: for an unknown tool name, profile or tool choice, or an output type that
            has no JSON Schema.
        :raises TypeError: for a ``context`` that is not a mapping with string keys, or an
            ``external`` handler that cannot be called."""
        state = new_state(
            self.config,
            self.host.tools,
            prompt_or_messages,
            system_prompt=system_prompt,
            tools=tools,
            profile=profile,
            tool_choice=tool_choice,
            stream=stream,
            run_id=run_id,
            output=output,
        )
        state.control = run_control(approval, external, cancel, context)
        return await self._drive(state)

    def _prepare_stream(
        self, prompt_or_messages: str | Sequence[Message], options: Mapping[str, Any]
    ) -> RunState:
        options = dict(options)
        control = run_control(
            options.pop("approval", None),
            options.pop("external", None),
            options.pop("cancel", None),
            options.pop("context", None),
        )
        state = new_state(
            self.config,
            self.host.tools,
            prompt_or_messages,
            system_prompt=options.pop("system_prompt", None),
            tools=options.pop("tools", None),
            profile=options.pop("profile", None),
            tool_choice=options.pop("tool_choice", "auto"),
            stream=options.pop("stream", None),
            run_id=options.pop("run_id", None),
            output=options.pop("output", None),
        )
        if options:
            raise TypeError(f"stream() got unknown option(s): {', '.join(sorted(options))}")
        state.control = control
        return state

    async def resume(
        self,
        run: Run | str,
        decisions: Mapping[str, Decision] | None = None,
        *,
        approval: Approver | None = None,
        external: ExternalHandler | None = None,
        cancel: asyncio.Event | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> Run:
        """Continue a run: decide its deferred calls, answer its unfinished turn, go on.

        ``run`` is a :class:`Run` or a run id (loaded from the ledger with :meth:`load`, for
        example after the process running it was killed); the run goes on from the ledger's
        record of it when it has one, which may be newer than a :class:`Run` given. Each
        decision is :class:`Approve` (optionally with edited arguments, admitted again like
        the model's own), :class:`Deny` (the message goes to the model), :class:`Supply` (the
        result given) or :class:`~toolwire.Retry` (its message goes to the model as a
        retryable error, as if the tool had raised it, so that it may call again), and answers
        one request of its call: the one named by its ``attempt``, else the
        one in the given :class:`Run`, else (a run given by id) the call's first. Calls left
        undecided stay deferred. The ledger wins over the decisions: a call it shows settled is
        never run again, whatever the decision (its stored result answers it); one that started
        but never settled is run again when its tool is idempotent, otherwise it waits on a
        fresh request (``reason="interrupted"``) and a decision on an earlier request leaves it
        waiting. A resume stores the run, to recover from, before the first call it starts. The
        run keeps its trust requirement and counters; the deadline starts again. ``approval``,
        ``external`` and ``context`` are as for :meth:`run` (they answer the calls of the
        rounds that follow; the calls that waited are answered by ``decisions``).

        :raises ValueError: for decisions naming unknown call ids (the message lists the
            pending ones) or a request that does not exist yet, an :class:`Approve` of an
            external tool, or a run that answered.
        :raises RunInProgress: (a ``ValueError``) when a call of the run's last turn is running
            in a live process, which keeps its lease.
        """
        given = None if isinstance(run, str) else run
        with levels_in_use(self._levels):  # the stored levels are read in the host's scheme
            stored, entries = self._stored(run) if isinstance(run, str) else self._latest(run)
            current = reconcile(stored, entries)
            resolved = resolve_decisions(current, given, decisions or {}, entries)
            state = restore(self.config, self.host.tools, current)
        state.control = run_control(approval, external, cancel, context)
        return await self._drive(state, resolved)

    def stream(self, prompt_or_messages: str | Sequence[Message], **options: Any) -> RunStream:
        """Run like :meth:`run`, yielding every event as it happens (the last is ``RunFinished``).

        The returned iterator's :attr:`RunStream.run` holds the :class:`Run` once the iteration
        ended. Closing the iterator early (``aclose``, leaving ``async for`` by ``break``)
        cancels the run.
        """
        return RunStream(self, self._prepare_stream(prompt_or_messages, options))

    def load(self, run_id: str) -> Run:
        """The run ``run_id`` as last stored in the ledger.

        The ledger's rows win over the stored snapshot: a run whose process ended in the middle
        comes back with stop reason ``interrupted``; the calls of its last turn that started and
        never settled, whose tools are not idempotent and that nobody runs any more, are listed
        in ``deferred`` (``reason="interrupted"``, on a new request, also when they waited on an
        approval that was given), and a call that settled waits on nothing (its stored result
        answers it on :meth:`resume`).

        :raises UnknownRun: (a ``ValueError``) when the ledger is disabled or does not know the
            run, or ``LedgerCorrupt`` (a ``ValueError``) when its rows do not make up a run.
        :raises RunInProgress: (a ``ValueError``) when a call of its last turn is running in a
            live process (this one or another), which keeps its lease: it is not interrupted.
        """
        with levels_in_use(self._levels):
            return reconcile(*self._stored(run_id))

    def _latest(self, run: Run) -> tuple[Run, Mapping[str, LedgerEntry]]:
        """The run as the ledger last stored it when it holds it (another resume, or the
        recovery record of one a crash ended, may be newer than ``run``), with ``run``'s events
        (the ledger keeps none); else ``run``. With the ledger's calls of its last round."""
        if self.ledger is None:
            return run, {}
        found = self._read(run.id)
        if found is None:  # no record to read them with: rows of a run never stored
            return run, self.ledger.entries(run.id, run.rounds)
        stored, entries = found
        return attrs.evolve(stored, events=run.events), entries

    def _stored(self, run_id: str) -> tuple[Run, Mapping[str, LedgerEntry]]:
        """The run ``run_id`` as the ledger stored it (not reconciled with its call rows) and
        the ledger's calls of its last round."""
        if self.ledger is None:
            raise UnknownRun(
                f"cannot load run {run_id!r}: the ledger is disabled ([ledger] enabled = false)"
            )
        found = self._read(run_id)
        if found is None:
            raise UnknownRun(f"the ledger {self.ledger.location!r} has no run {run_id!r}")
        return found

    def _read(self, run_id: str) -> tuple[Run, Mapping[str, LedgerEntry]] | None:
        """The stored run and the ledger's calls of its last round, read in one snapshot (a
        record with the rows of another moment could call a live call interrupted)."""
        assert self.ledger is not None
        found = self.ledger.load_turn(run_id)
        if found is None:
            return None
        data, entries = found
        try:
            return Run.from_json(data), entries
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise LedgerCorrupt(
                f"the ledger {self.ledger.location!r} holds run {run_id!r} in a form this "
                f"toolwire cannot read ({describe(exc)})"
            ) from None

    async def call(
        self, name: str, arguments: Mapping[str, Any], *, run_id: str | None = None
    ) -> ToolResult:
        """Run one call of the tool ``name`` without a model.

        The arguments are validated against the tool's schema (a refusal is an ``error``
        result), then executed like a call of a run: ``toolwire_execute_tool`` with every
        middleware (``[policy]`` included), the tool's timeout and retries, the result-size
        limits, and the ledger when the loop has one. Events go to ``toolwire_event``. The
        call counts as approved (``ToolContext.approved``); a call that defers itself
        (``CallDeferred``) gets an error result saying why.

        :raises KeyError: when no tool of that name is registered (the message lists them).
        """
        tool = self.host.tools.get(name)
        if tool is None:
            known = ", ".join(self.host.tools) or "none are registered"
            raise KeyError(f"no tool named {name!r}; registered tools: {known}")
        state = RunState(run_id or f"call_{uuid.uuid4().hex}", RunOptions(), [])
        view = self._view()
        state.control = RunControl(cancelled=asyncio.Event(), services=run_services(view, state))
        call = ToolCall(id="call_1", name=name, arguments=dict(arguments))
        slot = CallSlot(call)
        slot.tool = tool
        slot.approved = True  # the person calling the tool directly is the approval
        try:
            slot.arguments = tool.validate(arguments)
        except ArgumentsInvalid as exc:
            return ToolResult.error(str(exc), exception=exc)
        step(slot, CallEvent.ADMIT)
        turn = Turn(0, Offer(), AssistantMessage(parts=(call,)), [slot])
        try:
            with levels_in_use(self._levels):
                await run_call(view, state, turn, slot, ())
        finally:
            if view.ledger is not None and view.ledger.pending:
                view.ledger.flush()
        if slot.deferred is not None:  # CallDeferred: nobody is there to resume it
            return ToolResult.error(f"Not run: {slot.deferred.detail}.")
        assert slot.result is not None
        return slot.result

    # -- driving ---------------------------------------------------------------------------

    async def _drive(self, state: RunState, resumed: Resumed | None = None) -> Run:
        """Run the stages until one returns the end of the run, which is written here and
        nowhere else; then store the run, emit ``RunFinished`` and return it. Trust levels
        are read in the host's scheme meanwhile."""
        with levels_in_use(self._levels):
            return await self._drive_stages(state, resumed)

    async def _drive_stages(self, state: RunState, resumed: Resumed | None) -> Run:
        adapter = self._adapter or await self.host.get_adapter()
        view = self._view()
        self._start(view, state)
        trace_token = view.pipeline.begin_trace(state.run_id)
        cancelled: asyncio.CancelledError | None = None
        try:
            view.emit(state, self._started(view, state, adapter.api, resumed is not None))
            try:
                end = None
                if resumed is not None:
                    end = await resume_turn(view, state, adapter, resumed)
                while end is None:
                    end = await run_round(view, state, adapter)
            except asyncio.CancelledError as exc:
                cancelled = exc
                assert state.control.cancelled is not None
                state.control.cancelled.set()
                end = End("cancelled", "the task running the run was cancelled")
            state.end = end
            run = self._finish(view, state, resumed is not None)
        finally:
            view.pipeline.end_trace(trace_token)
        if cancelled is not None:
            raise cancelled
        return run

    def _start(self, view: LoopView, state: RunState) -> None:
        """Set the run's deadline, cancellation flag and services as it starts."""
        seconds = self.config.loop.deadline_seconds
        deadline = None
        if seconds is not None:
            deadline = asyncio.get_running_loop().time() + seconds
        state.control = attrs.evolve(
            state.control,
            deadline=deadline,
            cancelled=state.control.cancel or asyncio.Event(),
            services=run_services(view, state),
        )

    def _started(self, view: LoopView, state: RunState, api: str, resumed: bool) -> RunStarted:
        return RunStarted(
            run_id=state.run_id,
            api=api,
            model=self.config.provider.model,
            resumed=resumed,
            messages=tuple(
                view.shown(m) if isinstance(m, AssistantMessage) else m for m in state.messages
            ),
        )

    def _finish(self, view: LoopView, state: RunState, resumed: bool) -> Run:
        """The ended run, stored when there is something to recover from, ``RunFinished``
        emitted, its events attached."""
        run = state.build()
        self.last_run = run
        ledger = view.ledger
        if (
            run.stop_reason != "answered"
            or resumed
            or (ledger is not None and ledger.wrote(run.id))
        ):
            store(view, state, run)
        elif ledger is not None:
            # Nothing to recover from an answered run without side effects: no I/O.
            ledger.discard(run.id)
        view.emit(
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
        return run

    def _view(self) -> LoopView:
        """What the stages of a run see of this loop, taken as the run starts."""
        view = LoopView(
            self.host,
            ledger=self.ledger,
            trust=self._trust,
            retry_backoff=self.retry_backoff,
            retry_backoff_max=self.retry_backoff_max,
            services=self._services,
            offers=self._offers,
            coarse=self._coarse,
        )
        view.bind()
        return view


def run_control(
    approval: Approver | None,
    external: ExternalHandler | None,
    cancel: asyncio.Event | None,
    context: Mapping[str, Any] | None,
) -> RunControl:
    """What a run's caller gives it to steer it (``approval=``, ``external=``, ``cancel=``,
    ``context=``), checked."""
    return RunControl(
        approval=approval,
        external=external_handler(external),
        cancel=cancel,
        values=context_values(context),
    )


def context_values(context: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The application's ``context={...}`` of a run, checked and frozen for its tools."""
    if context is None:
        return types.MappingProxyType({})
    if not isinstance(context, Mapping):
        raise TypeError(
            f"context must be a mapping of names to values for the run's tools, "
            f"got {type(context).__name__}"
        )
    bad = sorted(repr(k) for k in context if not isinstance(k, str))
    if bad:
        raise TypeError(f"context keys must be strings (names); got {', '.join(bad)}")
    return types.MappingProxyType(dict(context))


def external_handler(handler: ExternalHandler | None) -> ExternalHandler | None:
    """The ``external=`` handler of a run, checked."""
    if handler is not None and not callable(handler):
        raise TypeError(
            f"external= takes a function of a DeferredRequest (sync or async), or None; "
            f"got {type(handler).__name__}"
        )
    return handler
