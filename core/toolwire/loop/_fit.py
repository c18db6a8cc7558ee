"""Before a round's request: the conversation made to fit ``[provider] context_tokens``.

:func:`fit_context` sizes the request the round would send (the conversation, the system prompt
with the tools' instructions, the tools' definitions), scaled by what the provider reported for
the last request, and compacts the run's conversation when it nears the window
(:func:`toolwire.context._compact.compact`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..adapters._base import ModelRequest
from ..context._compact import (
    ContextWindow,
    SummaryRequest,
    ask_summary,
    compact,
    conversation_tokens,
)
from ..events import ContextCompacted, Event
from ..messages import AssistantMessage, Message
from ..usage import estimate_tokens
from ._budget import answer_cost

if TYPE_CHECKING:
    from ..adapters import ProviderAdapter
    from ._offer import Offer
    from ._state import RunState
    from ._view import LoopView

_SCALE_BOUNDS = (0.25, 4.0)  # a provider's report outside these is no calibration to trust


def _overhead(offer: Offer) -> int:
    """Tokens the request takes beside the conversation: the system prompt with the tools'
    instructions, and the tools' definitions."""
    total = estimate_tokens(offer.system_prompt or "")
    for spec in offer.functions:
        total += estimate_tokens(f"{spec.name} {spec.description}")
        total += estimate_tokens(json.dumps(spec.parameters, ensure_ascii=False))
    return total


def _scale(messages: Sequence[Message], overhead: int) -> float:
    """The provider's tokens per estimated token, from its report on the latest request."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage):
            reported = message.usage.input_tokens if message.usage is not None else None
            if not reported:
                return 1.0
            estimated = conversation_tokens(messages[:index]) + overhead
            low, high = _SCALE_BOUNDS
            return min(high, max(low, reported / max(1, estimated)))
    return 1.0


async def fit_context(
    view: LoopView, state: RunState, adapter: ProviderAdapter, round: int, offer: Offer
) -> None:
    """Compact the run's conversation when the round's request would fill more than ``[loop]
    compact_at`` of ``[provider] context_tokens`` (a ``ContextCompacted`` event says what was
    done); nothing without ``context_tokens``."""
    provider = view.config.provider
    if provider.context_tokens is None:
        return
    overhead = _overhead(offer)
    window = ContextWindow.of(
        provider.context_tokens,
        compact_at=view.config.loop.compact_at,
        compact_to=view.config.loop.compact_to,
        reserve=provider.max_tokens or 0,
        overhead=overhead,
        scale=_scale(state.messages, overhead),
    )

    def emit(event: Event) -> None:
        view.emit(state, event)

    async def ask(messages: Sequence[Message]) -> AssistantMessage:
        request = ModelRequest(run_id=state.run_id, round=round, messages=tuple(messages))
        answer = await adapter.complete(request, lambda event: None)
        state.charge(answer.usage, answer_cost(view.config, answer))
        return answer

    async def summarize(messages: tuple[Message, ...]) -> str | None:
        request = SummaryRequest(
            run_id=state.run_id,
            round=round,
            messages=messages,
            api=adapter.api,
            model=provider.model,
            ask=ask,
        )
        return await ask_summary(view.host.hook, request, emit, bound=view.config.loop.hook_timeout)

    done = await compact(state.messages, window, summarize)
    if done is None:
        return
    state.messages[:] = done.messages
    view.emit(
        state,
        ContextCompacted(
            run_id=state.run_id,
            round=round,
            cleared=done.cleared,
            summarised=done.summarised,
            tokens_before=done.tokens_before,
            tokens_after=done.tokens_after,
        ),
    )
