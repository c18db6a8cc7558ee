"""Executing a turn's admitted calls.

:func:`execute` runs the slots in the groups :func:`~toolwire.loop._schedule.schedule` makes;
:func:`run_call` takes one call from admitted to settled (or deferred, when it defers itself
while it runs): ``ToolStarted``, the ledger's rows, the layers of
:mod:`toolwire.loop._execution`, the decisions raised from inside the call (:class:`Running`),
then the result settled (:mod:`toolwire.loop._settle`). :func:`tool_context` and
:func:`attempt_of` build what one attempt at the call needs.
"""

from __future__ import annotations

import asyncio
import threading
import types
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from .._redact import redact_arguments
from ..events import ArgumentsAdjusted, Event, ToolProgress, ToolStarted
from ..messages import Message, SystemMessage, ToolCall
from ..tools._context import FILTERED_SERVICE, ToolContext
from ..tools._errors import AdjustArguments, ApprovalRequired, ArgumentsInvalid, CallDeferred
from ..tools._result import ToolBlocked, ToolResult
from ._cancel import answer_cancelled
from ._decision import apply_decision, approved, defer, external_decision
from ._execution import Attempt, with_retries
from ._lifecycle import CallEvent, Send, ask_running, send_recorded
from ._run import DeferredRequest, Outcome
from ._schedule import schedule
from ._settle import backstop, limit_size, settle_events
from ._state import CallSlot, RunState, Turn

if TYPE_CHECKING:
    from ..tools import Tool
    from ._view import LoopView

_NO_ARGUMENTS: Mapping[str, Any] = types.MappingProxyType({})


async def execute(view: LoopView, state: RunState, turn: Turn, slots: list[CallSlot]) -> None:
    """Run admitted calls: serially, or up to ``[loop] concurrency`` at once with sequential
    tools as barriers. Every slot has a result afterwards, also when cancelled."""
    if not slots:
        return
    limit = view.config.loop.concurrency
    running: set[asyncio.Task[None]] = set()
    try:
        if len(slots) == 1:  # one call runs alone: nothing to schedule
            await run_call(view, state, turn, slots[0])
            return
        for group in schedule(slots, limit=limit, sequential=_sequential):
            if not group.concurrent:
                await run_call(view, state, turn, group.items[0])
                continue
            for slot in group.items:
                while len(running) >= limit:
                    running = await _reap(running, asyncio.FIRST_COMPLETED)
                call = run_call(view, state, turn, slot)
                running.add(asyncio.ensure_future(call))
            while running:
                running = await _reap(running, asyncio.ALL_COMPLETED)
    except asyncio.CancelledError:
        assert state.control.cancelled is not None
        state.control.cancelled.set()
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        answer_cancelled(slots)
        raise
    finally:
        for slot in slots:
            if slot.result is None and slot.deferred is None:  # the host itself failed
                slot.answer(
                    CallEvent.STOP,
                    "not_run",
                    ToolResult.error("Tool execution failed: the host could not run this call."),
                )


def conversation(state: RunState) -> tuple[Message, ...]:
    """The run's conversation as a call's :class:`ToolContext` shows it: the base system
    prompt first (the caller's words, as a tool reading the conversation expects)."""
    messages = tuple(state.messages)
    if state.base_system:
        messages = (SystemMessage(state.base_system), *messages)
    return messages


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


async def run_call(
    view: LoopView,
    state: RunState,
    turn: Turn,
    slot: CallSlot,
    messages: tuple[Message, ...] | None = None,
) -> None:
    """Take one admitted call through its life (:mod:`toolwire.loop._lifecycle`):
    ``ToolStarted``, ``start`` (the ledger's ``started`` row first), retries and one attempt
    each, the decisions raised from inside the call, then ``settle`` (the size limits, the
    outcome's events) or ``ask`` (it waits for a decision). A call of a turn in which another
    was fatal does not start.

    ``messages`` is the conversation the call's :class:`ToolContext` shows; None, the run's
    (:func:`conversation`), copied only when something reads the context."""
    tool = slot.tool
    assert tool is not None
    fatal = turn.fatal()
    if fatal is not None:
        slot.answer(CallEvent.STOP, "not_run", ToolResult.error(f"Not run: {fatal}."))
        return
    arguments = slot.arguments if slot.arguments is not None else {}
    view.emit(
        state,
        ToolStarted(
            run_id=state.run_id,
            round=turn.round,
            call_id=slot.call.id,
            name=tool.name,
            arguments=redact_arguments(arguments, tool.sensitive_arguments),
        ),
    )
    running = Running(view, state, turn, slot, tool, messages)
    send: Send = running.send
    if tool.returns_untrusted_content:
        assert running.context is not None  # the backstop reads it
        send = backstop(view, state, turn, tool, slot.call.id, running.context, send)
    try:
        sent = await send_recorded(view, state, turn, slot, arguments, send)
    except (ApprovalRequired, CallDeferred) as exc:
        slot.arguments = running.arguments
        ask_running(view, state, turn, slot)
        request = raised_request(slot, tool, exc, turn.round, running.arguments)
        defer(view, state, turn, slot, request, CallEvent.ASK)
        return
    if isinstance(sent, ToolResult):  # the ledger refused its start: it did not run
        slot.answer(CallEvent.CLAIMED, "not_run", sent)
    else:
        slot.arguments = running.arguments
        result, outcome = sent
        slot.answer(CallEvent.SETTLE, outcome, limit_size(view, tool, result))
    settle_events(view, state, turn, slot, tool.name)


def raised_request(
    slot: CallSlot,
    tool: Tool,
    exc: ApprovalRequired | CallDeferred,
    round: int,
    arguments: Mapping[str, Any],
) -> DeferredRequest:
    """The request a call that asked for approval or deferred itself while it ran (with
    ``arguments``) waits on."""
    approval = isinstance(exc, ApprovalRequired)
    return DeferredRequest(
        call_id=slot.call.id,
        tool=tool.name,
        arguments=arguments,
        reason="approval" if approval else "deferred",
        detail=f"{tool.name} {'asks for approval' if approval else 'was deferred'}: {exc.reason}",
        round=round,
        started=slot.row > 0,
        attempt=slot.next_request(),
        starts=slot.row,
    )


class Running:
    """One call while it runs: its arguments, context and attempt, built again when a decision
    raised from inside the call changes them (a middleware's adjusted arguments, an approval).
    """

    __slots__ = (
        "arguments",
        "attempt",
        "context",
        "messages",
        "slot",
        "state",
        "tool",
        "turn",
        "view",
    )

    _MAX_ADJUSTMENTS = 8

    def __init__(
        self,
        view: LoopView,
        state: RunState,
        turn: Turn,
        slot: CallSlot,
        tool: Tool,
        messages: tuple[Message, ...] | None,
    ) -> None:
        self.view, self.state, self.turn, self.slot, self.tool = view, state, turn, slot, tool
        self.messages = messages
        self.arguments: Mapping[str, Any] = slot.arguments if slot.arguments is not None else {}
        self._prepare()

    def _prepare(self) -> None:
        view, state, tool, call_id = self.view, self.state, self.tool, self.slot.call.id
        self.context: ToolContext | None = None
        if reads_context(view, tool):
            if self.messages is None:
                self.messages = conversation(state)
            self.context = tool_context(view, state, self.turn, tool, self.slot, self.messages)
        self.attempt = attempt_of(
            view, state, self.turn, tool, call_id, self.arguments, self.context
        )

    async def send(self) -> tuple[ToolResult, Outcome]:
        """Attempts with their retries, until the call has a result; an ``ApprovalRequired``
        the approver does not decide, or a ``CallDeferred`` the external handler does not
        answer, propagates (the call defers)."""
        view = self.view
        adjustments = approvals = 0
        while True:
            try:
                return await with_retries(
                    self.attempt,
                    self.slot,
                    backoff=view.retry_backoff,
                    backoff_max=view.retry_backoff_max,
                )
            except AdjustArguments as exc:
                adjustments += 1
                if adjustments > self._MAX_ADJUSTMENTS:
                    return ToolResult.error(
                        f"Not run: the arguments of {self.tool.name} were adjusted "
                        f"{self._MAX_ADJUSTMENTS} times without the call running; a middleware "
                        "adjusts them again on every attempt."
                    ), "not_run"
                refused = self.adjust(exc.arguments, exc.reason or "adjusted by a middleware")
                if refused is not None:
                    return refused, "invalid_arguments"
            except (ApprovalRequired, CallDeferred) as exc:
                answered = await self.decide(exc)
                if answered is not None:
                    return answered
                approvals += 1  # approved: it runs again, and may not ask forever
                if approvals > self._MAX_ADJUSTMENTS:
                    return ToolResult.error(
                        f"Not run: {self.tool.name} asked for a decision again after each of "
                        f"{self._MAX_ADJUSTMENTS} approvals."
                    ), "not_run"

    def adjust(self, arguments: Mapping[str, Any], reason: str) -> ToolResult | None:
        """Run the call with ``arguments`` from now on, validated (``ArgumentsAdjusted``); the
        error result when the tool's schema refuses them."""
        tool = self.tool
        try:
            cleaned = tool.validate(arguments)
        except ArgumentsInvalid as exc:
            named = exc if exc.tool else ArgumentsInvalid(exc.problems, tool=tool.name)
            return ToolResult.error(
                f"Not run: the arguments as adjusted ({reason}) were refused. {named}",
                exception=exc,
            )
        sensitive = tool.sensitive_arguments
        self.view.emit(
            self.state,
            ArgumentsAdjusted(
                run_id=self.state.run_id,
                round=self.turn.round,
                call_id=self.slot.call.id,
                name=tool.name,
                before=redact_arguments(self.arguments, sensitive),
                after=redact_arguments(cleaned, sensitive),
                reason=reason,
            ),
        )
        self.arguments = cleaned
        self._prepare()
        return None

    async def decide(
        self, exc: ApprovalRequired | CallDeferred
    ) -> tuple[ToolResult, Outcome] | None:
        """Ask about a call that asked for approval (the run's approver) or deferred itself (the
        run's external handler) while it ran: the answer, or None once approved (the call runs
        again, approved); undecided, ``exc`` propagates."""
        state, tool, slot = self.state, self.tool, self.slot
        request = raised_request(slot, tool, exc, self.turn.round, self.arguments)
        if isinstance(exc, CallDeferred):
            decision = await external_decision(state.control, request, tool)
        else:
            decision = await state.control.ask(request)
        applied = apply_decision(request, decision)
        if applied.kind in ("wait", "stale"):
            raise exc
        if applied.result is not None:  # denied, answered by the caller, or told to retry
            return applied.result, applied.outcome
        if applied.edited:
            assert applied.arguments is not None
            refused = self.adjust(applied.arguments, "edited on approval")
            if refused is not None:
                return refused, "invalid_arguments"
        slot.approved = True
        approved(
            self.view, state, self.turn, slot, tool, attrs.evolve(applied, arguments=self.arguments)
        )
        self._prepare()
        return None


def reads_context(view: LoopView, tool: Tool) -> bool:
    """Whether anything reads the :class:`ToolContext` of a call of ``tool``: the tool itself
    (:attr:`~toolwire.tools.Tool.reads_context`), the ``toolwire_execute_tool`` implementations
    (middlewares) it passes through, or the untrusted-content backstop. A call nothing reads it
    for runs without one: it would be built and dropped."""
    return (
        tool.reads_context
        or view.pipeline.direct_execution is None
        or tool.returns_untrusted_content
    )


def tool_context(
    view: LoopView,
    state: RunState,
    turn: Turn,
    tool: Tool,
    slot: CallSlot,
    messages: tuple[Message, ...],
) -> ToolContext:
    """The :class:`ToolContext` a call runs with: its run, settings, services, progress and
    what the call is (its id, its arguments as received, its conversation and message)."""
    run_id = state.run_id
    round = turn.round
    name = tool.name
    call = slot.call
    call_id = call.id

    emit = emitter(view, state)

    def progress(message: str, fraction: float | None = None) -> None:
        emit(
            ToolProgress(
                run_id=run_id,
                round=round,
                call_id=call_id,
                name=name,
                message=message,
                fraction=fraction,
            )
        )

    control = state.control
    return ToolContext(
        tool=tool,
        call_id=call_id,
        run_id=run_id,
        round=round,
        messages=messages,
        settings=view.plugin_settings(tool.plugin),
        provider_trust=view.trust,
        services=control.services,
        progress=progress,
        cancelled=control.cancelled,
        # The JSON of the parsed arguments is written only if the tool reads raw_arguments.
        raw_arguments=call.raw_arguments,
        call_arguments=(call.arguments or _NO_ARGUMENTS) if call.raw_arguments is None else None,
        conversation_id=state.conversation_id(),
        message_id=turn.message.response_id if turn.message is not None else None,
        values=control.values,
        approved=slot.approved,
    )


def emitter(view: LoopView, state: RunState) -> Callable[[Event], None]:
    """Record an event in this run from the run's thread, or from a tool's worker thread (a
    plain function runs in one): there it is handed to the run's event loop.

    The run's services hold this function, and the run holds its services: the function
    refers to the run weakly, so a finished run is freed as soon as nobody uses it, not left
    for the garbage collector. An event emitted after the run is gone (a tool's task that
    outlived it) still reaches the host's observers.
    """
    run = weakref.ref(state)

    def deliver(event: Event) -> None:
        found = run()
        if found is not None:
            view.emit(found, event)
        else:
            view.host.emit(event)

    def emit(event: Event) -> None:
        if threading.get_ident() == view.thread:
            deliver(event)
        elif view.event_loop is not None:
            view.event_loop.call_soon_threadsafe(deliver, event)

    return emit


def run_services(view: LoopView, state: RunState) -> Mapping[str, Any]:
    """The host's services plus ``emit``, which records an event in this run (a tool's
    untrusted-content warning belongs to the run, not only to observers)."""
    filtered = state.filtered_calls
    return types.MappingProxyType(
        {
            **view.services,
            "emit": emitter(view, state),
            FILTERED_SERVICE: lambda round, call_id: filtered.add((round, call_id)),
        }
    )


def attempt_of(
    view: LoopView,
    state: RunState,
    turn: Turn,
    tool: Tool,
    call_id: str,
    arguments: Mapping[str, Any],
    context: ToolContext | None,
) -> Attempt:
    """One attempt at the call: the execution hook under the tool's timeout and the run's
    deadline. When the only implementations of ``toolwire_execute_tool`` are the built-in
    ones, they are done inline (same behaviour, without the hook machinery on every call).
    ``context`` is None only when nothing reads it (:func:`reads_context`).
    """
    timeout = tool.policy.timeout
    setting = None
    if timeout is None:  # the tool's own timeout wins
        timeout, setting = view.config.loop.tool_timeout, "[loop] tool_timeout"
    deadline_bound = False
    if state.control.deadline is not None:
        remaining = state.control.deadline - asyncio.get_running_loop().time()
        if timeout is None or remaining < timeout:
            timeout, deadline_bound = max(remaining, 0.0), True
    direct = view.pipeline.direct_execution
    refusal_reason = view.pipeline.refusal_reason
    hook = view.host.hook

    def send() -> Awaitable[Any] | None:
        if direct is None:
            assert context is not None
            call = ToolCall(id=call_id, name=tool.name, arguments=arguments)
            awaitable: Awaitable[Any] | None = hook.toolwire_execute_tool(
                call=call, context=context
            )
            return awaitable
        if direct:  # the default policy middleware, inline
            reason = refusal_reason(tool) or view.pipeline.access_reason(tool, arguments)
            if reason is not None:
                raise ToolBlocked(reason)
        return tool.invoke_validated(arguments, context)

    if not deadline_bound:
        return Attempt(
            tool=tool,
            send=send,
            timeout=timeout,
            timeout_setting=setting,
            coarse=view.coarse if setting is not None else None,
            cancel=state.control.cancel,
        )

    def on_deadline() -> None:
        turn.limits.add("deadline")

    return Attempt(
        tool=tool,
        send=send,
        timeout=timeout,
        deadline_bound=True,
        cancel=state.control.cancel,
        on_deadline=on_deadline,
    )
