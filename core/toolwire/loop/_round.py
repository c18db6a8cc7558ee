"""A round of a run: the checks before it, the offer, the request, the model's answer, the turn.

:func:`run_round` is what the driver calls until the run has a stop reason; a round that started
ends with exactly one ``RoundFinished``, emitted there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

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
from ._execution import describe
from ._fit import fit_context
from ._ids import run_call_id, with_run_id, with_run_ids
from ._offer import Offer, Selection, resolve_offer
from ._redact import redacted_call, redacted_message, sensitive
from ._run import ToolCallRecord
from ._settle import run_services
from ._state import CallSlot, RunState
from ._turn import deadline_reached, turn

if TYPE_CHECKING:
    from ..adapters import ProviderAdapter
    from ._protocol import LoopView


async def run_round(view: LoopView, state: RunState, adapter: ProviderAdapter) -> None:
    """One round: the checks before it, then offer, request, answer and turn.

    A round that started ends with exactly one ``RoundFinished``, emitted here.
    """
    if not may_start_round(view, state, adapter):
        return
    state.rounds += 1
    round = state.rounds
    tool_calls = await play_round(view, state, adapter, round)
    view.emit(state, RoundFinished(run_id=state.run_id, round=round, tool_calls=tool_calls))


def may_start_round(view: LoopView, state: RunState, adapter: ProviderAdapter) -> bool:
    """False (the run finished) when cancellation, a limit or trust forbid another round."""
    loop_config = view.config.loop
    if state.control.cancel_requested:
        state.finish("cancelled", "the run was cancelled")
        return False
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
        state.finish(
            "max_rounds",
            f"the model was still calling tools after {loop_config.max_rounds} round(s) "
            "([loop] max_rounds)",
        )
        return False
    if state.control.deadline_passed():
        deadline_reached(view, state)
        return False
    over = over_budget(view, state)
    if over is not None:
        state.finish("budget", over.detail)
        return False
    provider_trust = view.trust
    if not provider_trust.satisfies(state.required_trust):
        assert state.required_trust is not None
        state.finish(
            "trust",
            f"round {state.rounds + 1} refused: results of this run (from "
            f"{state.trust_origin or 'an earlier call'}) require a provider trusted at least "
            f"{state.required_trust.label!r}, and the provider {adapter.api!r} is trusted "
            f"{provider_trust.label!r} ([provider] trust)",
        )
        return False
    return True


async def play_round(view: LoopView, state: RunState, adapter: ProviderAdapter, round: int) -> int:
    """Offer, request, answer and turn of round ``round``; the number of calls it answered."""
    messages = tuple(state.messages)
    offer = await start_round(view, state, adapter, round, messages)
    if view.config.provider.context_tokens is not None:
        await fit_context(view, state, adapter, round, offer)
        messages = tuple(state.messages)
    messages = await request_context(view, state, adapter, round, offer, messages)
    request = model_request(view, state, adapter, round, offer, messages)
    if request is None:
        return 0
    message = await ask_model(view, state, adapter, request)
    if message is None:
        return 0
    hint = adapter.empty_answer_hint
    calls = take_answer(view, state, round, message, adapter.api, hint=hint)
    if state.options.output is not None:
        tool = answer_tool_name(view.host.tools)
        return await take_typed_answer(
            view, state, round, offer, calls, adapter.capabilities, tool, hint=hint
        )
    if not calls:
        return 0
    await turn(view, state, round, [CallSlot(call) for call in calls], offer)
    return len(calls)


async def start_round(
    view: LoopView,
    state: RunState,
    adapter: ProviderAdapter,
    round: int,
    messages: tuple[Message, ...],
) -> Offer:
    """Resolve the round's offer from the config and the run's options, and announce it."""
    selection = state.selection
    if selection is None:  # the config and the run's options are the run's own: once per run
        selection = Selection.from_config(view.config, state.options.tools, state.options.profile)
        state.selection = selection
    offer = await resolve_offer(
        view.host,
        adapter,
        selection,
        run_id=state.run_id,
        round=round,
        messages=messages,
        base_system_prompt=state.base_system,
        provider_trust=view.trust,
        emit=lambda event: view.emit(state, event),
        cache=view.offers,
        values=state.control.values,
    )
    view.emit(state, RoundStarted(run_id=state.run_id, round=round, offered=offer.names))
    return offer


async def request_context(
    view: LoopView,
    state: RunState,
    adapter: ProviderAdapter,
    round: int,
    offer: Offer,
    messages: tuple[Message, ...],
) -> tuple[Message, ...]:
    """The round's messages with the context plugins contribute (``toolwire_request_context``);
    their sources join the run's, and their trust requirement tightens the run's."""
    if not view.pipeline.request_context:
        return messages
    context = await gather_request_context(
        view.host.hook,
        ContextRequest(
            run_id=state.run_id,
            round=round,
            messages=messages,
            offered=offer.names,
            api=adapter.api,
            model=view.config.provider.model,
            provider_trust=view.trust,
            native_tools=adapter.capabilities.native_tools,
            services=run_services(view, state),
        ),
        lambda event: view.emit(state, event),
        bound=view.config.loop.hook_timeout,
    )
    for source in context.sources:
        state.sources.setdefault(source.url, source)
    needed = context.required_trust
    if needed is not None and needed.strictest(state.required_trust) != state.required_trust:
        state.required_trust = needed.strictest(state.required_trust)
        state.trust_origin = f"the context passages of round {round}"
    return context.apply(messages)


def model_request(
    view: LoopView,
    state: RunState,
    adapter: ProviderAdapter,
    round: int,
    offer: Offer,
    messages: tuple[Message, ...],
) -> ModelRequest | None:
    """The round's request (announced with ``RequestSent``), or None when the run's
    tool choice cannot be met by this offer (the run finished with an error)."""
    config = view.config
    choice = state.options.tool_choice
    if state.turn.forced_choice_used and choice != "none":
        choice = "auto"
    state.turn.forced_choice_used = True
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
    sent = nearest_choice(choice, adapter.capabilities.tool_choice, offer.functions)
    if sent.degraded is not None:
        view.emit(state, degraded_choice(state.run_id, round, choice, sent, adapter))
    stream = state.options.stream
    if stream is None:
        stream = config.provider.stream
    if offer.system_prompt:
        messages = (SystemMessage(offer.system_prompt), *messages)
    request = ModelRequest(
        run_id=state.run_id,
        round=round,
        messages=messages,
        functions=sent.functions,
        tool_choice=sent.choice,
        parallel_tool_calls=(False if config.loop.concurrency == 1 and sent.functions else None),
        stream=stream,
        secrets=_secrets(view, messages),
    )
    if state.options.output is not None:
        tool = answer_tool_name(view.host.tools)
        request = ask_for_answer(state, adapter.capabilities, tool, request)
    view.emit(
        state,
        RequestSent(
            run_id=state.run_id,
            round=round,
            api=adapter.api,
            model=config.provider.model,
            tools=len(request.functions),
            stream=stream,
        ),
    )
    return request


async def ask_model(
    view: LoopView, state: RunState, adapter: ProviderAdapter, request: ModelRequest
) -> AssistantMessage | None:
    """The adapter's answer to ``request``, or None when it failed (the run finished)."""
    round = request.round
    emit = adapter_emitter(view, state, round)
    try:
        if state.control.deadline is None:
            message = await adapter.complete(request, emit)
        else:
            async with asyncio.timeout_at(state.control.deadline):
                message = await adapter.complete(request, emit)
    except TimeoutError as exc:
        if state.control.deadline_passed():
            deadline_reached(view, state)
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
        state.finish("error", f"the {adapter.api} adapter raised in round {round}: {describe(exc)}")
        return None
    if not isinstance(message, AssistantMessage):
        state.finish(
            "error",
            f"the {adapter.api} adapter returned {type(message).__name__}, not an AssistantMessage",
        )
        return None
    return message


def adapter_emitter(view: LoopView, state: RunState, round: int) -> Callable[[Event], None]:
    """How the adapter emits the events of a streamed answer: into this run and round, with
    the arguments of sensitive tools redacted."""
    run_id = state.run_id
    host = view.host
    taken = state.taken_call_ids()  # ids a provider may number afresh each round

    def emit(event: Event) -> None:
        if event.run_id != run_id or event.round != round:
            event = attrs.evolve(event, run_id=run_id, round=round)
        if isinstance(event, ToolCallStarted | ToolCallArgumentsDelta) and taken:
            if event.call_id in taken:
                event = attrs.evolve(event, call_id=run_call_id(event.call_id, round, taken))
        elif isinstance(event, ToolCallCompleted) and taken:
            event = attrs.evolve(event, call=with_run_id(event.call, round, taken))
        if isinstance(event, ToolCallStarted):
            state.turn.call_names[event.call_id] = event.name
        elif isinstance(event, ToolCallArgumentsDelta):
            name = state.turn.call_names.get(event.call_id)
            if name is not None and sensitive(host.tools, name):
                event = attrs.evolve(event, delta="", partial_arguments=None)
        elif isinstance(event, ToolCallCompleted):
            redacted = redacted_call(host.tools, event.call)
            if redacted is not event.call:
                event = attrs.evolve(event, call=redacted)
        view.emit(state, event)

    return emit


def take_answer(
    view: LoopView,
    state: RunState,
    round: int,
    message: AssistantMessage,
    api: str,
    *,
    hint: str | None = None,
) -> list[ToolCall]:
    """Record the model's answer; the calls the host must answer (none: the run answered, or
    ended on an empty answer, told with the adapter's ``hint`` of why)."""
    taken = state.taken_call_ids()
    message = with_run_ids(message, round, taken)
    taken.update(call.id for call in message.tool_calls)
    state.messages.append(message)
    cost = answer_cost(view.config, message)
    state.charge(message.usage, cost)
    view.emit(
        state,
        ResponseReceived(
            run_id=state.run_id,
            round=round,
            message=redacted_message(view.host.tools, message),
            usage=message.usage,
            cost=cost,
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
        if state.options.output is None:  # a typed answer is read by take_typed_answer
            max_tokens = view.config.provider.max_tokens
            state.finish(*answer_outcome(message, api=api, max_tokens=max_tokens, hint=hint))
    return calls


def _secrets(view: LoopView, messages: tuple[Message, ...]) -> frozenset[str]:
    """The values a captured request body must not show (only when ``[trace] request_bodies``)."""
    if not view.config.trace.request_bodies:
        return frozenset()
    from ..http._capture import sensitive_values

    tools = view.host.tools
    return sensitive_values(messages, lambda name: sensitive(tools, name))
