"""A round of a run: the checks before it, the offer, the request, the model's answer, the turn.

:func:`run_round` is what the driver calls until a round returns the end of the run; a round
that started ends with exactly one ``RoundFinished``, emitted there (a stored run's unfinished
turn, whose process stopped before its end, gets its ``RoundFinished`` from ``resume_turn``).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING

import attrs

from .._contain import describe
from .._redact import redacted_call
from ..adapters._base import ModelRequest, NamedToolChoice, ProviderError
from ..adapters._outcome import answer_outcome
from ..context._gather import gather_request_context
from ..context._records import ContextRequest
from ..events import (
    Event,
    LimitReached,
    RequestSent,
    ResponseReceived,
    RoundFinished,
    RoundStarted,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from ..messages import AssistantMessage, Message, SystemMessage, ToolCall
from ._answer import answer_tool_name, ask_for_answer, take_typed_answer
from ._budget import answer_cost, over_budget
from ._choice import degraded_choice, nearest_choice
from ._fit import fit_context
from ._ids import run_call_id, with_run_id, with_run_ids
from ._offer import resolve_offer
from ._run import ToolCallRecord
from ._state import CallSlot, End, RunState, Turn
from ._turn import deadline_reached, take_turn

if TYPE_CHECKING:
    from ..adapters import ProviderAdapter
    from ._view import LoopView

_NO_SECRETS: frozenset[str] = frozenset()


async def run_round(view: LoopView, state: RunState, adapter: ProviderAdapter) -> End | None:
    """One round: the checks before it, then offer, request, answer and turn; the end of the
    run when the round ends it.

    A round that started ends with exactly one ``RoundFinished``, emitted here.
    """
    end = may_start_round(view, state, adapter)
    if end is not None:
        return end
    state.rounds += 1
    turn = await start_round(view, state, adapter, state.rounds)
    end, calls = await play_round(view, state, adapter, turn)
    view.emit(state, RoundFinished(run_id=state.run_id, round=turn.round, tool_calls=calls))
    return end


def may_start_round(view: LoopView, state: RunState, adapter: ProviderAdapter) -> End | None:
    """The end of the run when cancellation, a limit or trust forbid another round."""
    loop_config = view.config.loop
    if state.control.cancel_requested:
        return End("cancelled", "the run was cancelled")
    if state.rounds >= loop_config.max_rounds:
        view.emit(
            state,
            LimitReached(
                run_id=state.run_id,
                round=state.rounds,
                limit="max_rounds",
                value=loop_config.max_rounds,
            ),
        )
        return End(
            "max_rounds",
            f"the model was still calling tools after {loop_config.max_rounds} round(s) "
            "([loop] max_rounds)",
        )
    if state.control.deadline_passed():
        return deadline_reached(view, state)
    over = over_budget(view, state)
    if over is not None:
        return End("budget", over.detail)
    provider_trust = view.trust
    need = state.trust
    if need is not None and not provider_trust.satisfies(need.level):
        return End(
            "trust",
            f"round {state.rounds + 1} refused: results of this run (from "
            f"{need.origin or 'an earlier call'}) require a provider trusted at least "
            f"{need.level.label!r}, and the provider {adapter.api!r} is trusted "
            f"{provider_trust.label!r} ([provider] trust)",
        )
    return None


async def play_round(
    view: LoopView, state: RunState, adapter: ProviderAdapter, turn: Turn
) -> tuple[End | None, int]:
    """Request, answer and calls of a round whose offer is resolved; the end of the run when
    the round ends it, and the number of calls it answered."""
    if view.config.provider.context_tokens is not None:
        await fit_context(view, state, adapter, turn.round, turn.offer)
    messages = tuple(state.messages)
    if view.pipeline.request_context:
        messages = await request_context(view, state, adapter, turn, messages)
    request = model_request(view, state, adapter, turn, messages)
    if isinstance(request, End):
        return request, 0
    message = await ask_model(view, state, adapter, request)
    if isinstance(message, End):
        return message, 0
    calls = take_answer(view, state, turn, message, adapter)
    if isinstance(calls, End):
        return calls, 0
    if state.options.output is not None:
        tool = answer_tool_name(view.host.tools)
        hint = adapter.empty_answer_hint
        end = await take_typed_answer(
            view, state, turn, calls, adapter.capabilities, tool, hint=hint
        )
        return end, len(calls)
    return await take_turn(view, state, turn, list(map(CallSlot, calls))), len(calls)


async def start_round(
    view: LoopView, state: RunState, adapter: ProviderAdapter, round: int
) -> Turn:
    """Resolve the offer of round ``round`` from the config and the run's options, announce it,
    and begin the round's turn."""
    assert state.selection is not None
    offer = await resolve_offer(
        view.host,
        adapter,
        state.selection,
        run_id=state.run_id,
        round=round,
        messages=tuple(state.messages),
        base_system_prompt=state.options.system_prompt,
        provider_trust=view.trust,
        emit=lambda event: view.emit(state, event),
        cache=view.offers,
        values=state.control.values,
        chosen_tool=state.chosen_tool,
    )
    view.emit(state, RoundStarted(run_id=state.run_id, round=round, offered=offer.names))
    return Turn(round, offer)


async def request_context(
    view: LoopView,
    state: RunState,
    adapter: ProviderAdapter,
    turn: Turn,
    messages: tuple[Message, ...],
) -> tuple[Message, ...]:
    """The round's messages with the context plugins contribute (``toolwire_request_context``;
    asked only when a plugin implements it); their sources join the run's, and their trust
    requirement tightens the run's."""
    context = await gather_request_context(
        view.host.hook,
        ContextRequest(
            run_id=state.run_id,
            round=turn.round,
            messages=messages,
            offered=turn.offer.names,
            api=adapter.api,
            model=view.config.provider.model,
            provider_trust=view.trust,
            native_tools=adapter.capabilities.native_tools,
            services=state.control.services,
        ),
        lambda event: view.emit(state, event),
        bound=view.config.loop.hook_timeout,
    )
    for source in context.sources:
        state.sources.setdefault(source.url, source)
    state.require(context.required_trust, f"the context passages of round {turn.round}")
    return context.apply(messages)


def model_request(
    view: LoopView,
    state: RunState,
    adapter: ProviderAdapter,
    turn: Turn,
    messages: tuple[Message, ...],
) -> ModelRequest | End:
    """The round's request (announced with ``RequestSent``), or the end of the run when the
    run's tool choice cannot be met by this offer."""
    config = view.config
    offer = turn.offer
    choice = state.options.tool_choice
    if turn.round > 1 and choice != "none":
        choice = "auto"  # a forced tool choice applies to the first round only
    if isinstance(choice, NamedToolChoice) and choice.name not in offer.tools:
        return End(
            "error",
            f"tool_choice names the tool {choice.name!r}, which is not offered in round "
            f"{turn.round} (offered: {', '.join(offer.names) or 'none'})",
        )
    if choice == "required" and not offer.functions:
        return End("error", f"tool_choice is 'required' but round {turn.round} offers no tool")
    sent = nearest_choice(choice, adapter.capabilities.tool_choice, offer.functions)
    if sent.degraded is not None:
        view.emit(state, degraded_choice(state.run_id, turn.round, choice, sent, adapter))
    stream = state.options.stream
    if stream is None:
        stream = config.provider.stream
    if offer.system_prompt:
        messages = (system_message(offer.system_prompt), *messages)
    request = ModelRequest(
        run_id=state.run_id,
        round=turn.round,
        messages=messages,
        functions=sent.functions,
        tool_choice=sent.choice,
        parallel_tool_calls=(False if config.loop.concurrency == 1 and sent.functions else None),
        stream=stream,
        secrets=_secrets(view, messages) if config.trace.request_bodies else _NO_SECRETS,
    )
    if state.options.output is not None:
        tool = answer_tool_name(view.host.tools)
        request = ask_for_answer(state, adapter.capabilities, tool, request)
    view.emit(
        state,
        RequestSent(
            run_id=state.run_id,
            round=turn.round,
            api=adapter.api,
            model=config.provider.model,
            tools=len(request.functions),
            stream=stream,
        ),
    )
    return request


async def ask_model(
    view: LoopView, state: RunState, adapter: ProviderAdapter, request: ModelRequest
) -> AssistantMessage | End:
    """The adapter's answer to ``request``, or the end of the run when it failed."""
    round = request.round
    emit = adapter_emitter(view, state, round)
    deadline = state.control.deadline
    try:
        if deadline is None:
            message = await adapter.complete(request, emit)
        else:
            async with asyncio.timeout_at(deadline):
                message = await adapter.complete(request, emit)
    except TimeoutError as exc:
        if state.control.deadline_passed():
            return deadline_reached(view, state)
        return End(
            "error", f"the {adapter.api} adapter failed in round {round}: {describe(exc)}", exc
        )
    except ProviderError as exc:
        return End("error", f"the provider ({adapter.api}) failed in round {round}: {exc}", exc)
    except Exception as exc:
        return End(
            "error", f"the {adapter.api} adapter raised in round {round}: {describe(exc)}", exc
        )
    if not isinstance(message, AssistantMessage):
        return End(
            "error",
            f"the {adapter.api} adapter returned {type(message).__name__}, not an AssistantMessage",
        )
    return message


def adapter_emitter(view: LoopView, state: RunState, round: int) -> Callable[[Event], None]:
    """How the adapter emits the events of a streamed answer: into this run and round, with
    the arguments of sensitive tools redacted."""
    run_id = state.run_id
    taken = state.taken_call_ids()  # ids a provider may number afresh each round
    # Streamed call id → whether its tool's arguments are redacted (asked once per call, not
    # on every delta).
    hidden: dict[str, bool] = {}

    def emit(event: Event) -> None:
        if event.run_id != run_id or event.round != round:
            event = attrs.evolve(event, run_id=run_id, round=round)
        if isinstance(event, ToolCallStarted | ToolCallArgumentsDelta) and taken:
            if event.call_id in taken:
                event = attrs.evolve(event, call_id=run_call_id(event.call_id, round, taken))
        elif isinstance(event, ToolCallCompleted) and taken:
            call = with_run_id(event.call, round, taken)
            if call is not event.call:
                event = attrs.evolve(event, call=call)
        if isinstance(event, ToolCallStarted):
            hidden[event.call_id] = bool(view.sensitive(event.name))
        elif isinstance(event, ToolCallArgumentsDelta):
            if hidden.get(event.call_id):
                event = attrs.evolve(event, delta="", partial_arguments=None)
        elif isinstance(event, ToolCallCompleted):
            redacted = redacted_call(event.call, view.sensitive_call(event.call))
            if redacted is not event.call:
                event = attrs.evolve(event, call=redacted)
        view.emit(state, event)

    return emit


def take_answer(
    view: LoopView,
    state: RunState,
    turn: Turn,
    message: AssistantMessage,
    adapter: ProviderAdapter,
) -> list[ToolCall] | End:
    """Record the model's answer; the calls the host must answer, or the end of the run when
    there are none (the model answered, or gave an empty answer, told with the adapter's
    ``empty_answer_hint`` of why)."""
    round = turn.round
    taken = state.taken_call_ids()
    message = with_run_ids(message, round, taken)
    tool_calls = message.tool_calls
    taken.update(map(attrgetter("id"), tool_calls))
    state.messages.append(message)
    cost = answer_cost(view.config, message)
    state.charge(message.usage, cost)
    view.emit(
        state,
        ResponseReceived(
            run_id=state.run_id,
            round=round,
            message=view.shown(message),
            usage=message.usage,
            cost=cost,
        ),
    )
    calls: list[ToolCall] = []
    for call in tool_calls:
        if call.provider_executed:
            state.records.append(
                ToolCallRecord(call=call, round=round, outcome="provider_executed")
            )
        else:
            calls.append(call)
    if not calls:
        state.text = message.text
        if state.options.output is not None:  # a typed answer is read by take_typed_answer
            return calls
        outcome = answer_outcome(
            message,
            api=adapter.api,
            max_tokens=view.config.provider.max_tokens,
            hint=adapter.empty_answer_hint,
        )
        return End(*outcome)
    return calls


@functools.lru_cache(maxsize=64)
def system_message(prompt: str) -> SystemMessage:
    """The system message of an offer's prompt, one object for as long as the prompt is used:
    every round of a run (and every run of the same prompt) sends the same message, so what an
    adapter keeps of a message it rendered is found by identity."""
    return SystemMessage(prompt)


def _secrets(view: LoopView, messages: tuple[Message, ...]) -> frozenset[str]:
    """The values a captured request body must not show (asked only with ``[trace]
    request_bodies``)."""
    from ..http._capture import sensitive_values

    return sensitive_values(messages, view.sensitive_call)
