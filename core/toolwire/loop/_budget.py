"""What a run's requests cost, and whether the run is over a limit of ``[limits]``.

:func:`price_for`, :func:`overrun` and :func:`answer_cost` are pure functions of the config,
the usage and the cost; :func:`over_budget` is the stages' question, asked before each request
and after each answer with calls, and announces the limit it finds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

from ..config import Config, LimitsConfig
from ..events import LimitReached
from ..messages import AssistantMessage
from ..usage import ModelPrice, Usage

if TYPE_CHECKING:
    from ._state import RunState
    from ._view import LoopView

__all__ = ["Overrun", "answer_cost", "configured_model", "over_budget", "overrun", "price_for"]


def price_for(
    prices: Mapping[str, ModelPrice], answered: str | None, configured: str | None
) -> ModelPrice | None:
    """The price of an answer: of the model it names (``answered``), else of the longest price
    key that name starts with, followed by ``-`` (``gpt-4.1-mini`` for
    ``gpt-4.1-mini-2025-04-14``: providers add dates), else of the ``configured`` model."""
    if not prices:
        return None
    if answered:
        found = prices.get(answered)
        if found is not None:
            return found
        stems = [key for key in prices if answered.startswith(key + "-")]
        if stems:
            return prices[max(stems, key=len)]
    return prices.get(configured) if configured else None


@attrs.frozen
class Overrun:
    """A limit of ``[limits]`` the run reached: its key, its value, and what was spent."""

    limit: str
    value: float | int
    detail: str


def overrun(limits: LimitsConfig, usage: Usage, cost: float | None) -> Overrun | None:
    """The first limit ``usage`` and ``cost`` reach (input, output, cost), or None."""
    checks: tuple[tuple[str, float | int | None, float | int | None, str], ...] = (
        ("max_input_tokens", limits.max_input_tokens, usage.input_tokens, "input tokens"),
        ("max_output_tokens", limits.max_output_tokens, usage.output_tokens, "output tokens"),
        ("max_cost", limits.max_cost, cost, "cost"),
    )
    for key, limit, spent, what in checks:
        if limit is not None and spent is not None and spent >= limit:
            shown = f"{spent:.4g}" if isinstance(spent, float) else f"{spent:,}"
            return Overrun(
                key,
                limit,
                f"the run's {what} reached its limit: {shown} of {limit:g} ([limits] {key})",
            )
    return None


def configured_model(config: Config, provider: str | None) -> str | None:
    """The configured model of the provider an answer names (``AssistantMessage.provider``,
    set with ``[[provider.fallback]]``), else of ``[provider]``."""
    if provider is not None and config.provider.fallback:
        from ..adapters._fallback import provider_names

        entries = [config.provider, *config.provider.fallback]
        names = provider_names([(p.adapter, p.model) for p in entries])
        for name, entry in zip(names, entries, strict=True):
            if name == provider:
                return entry.model
    return config.provider.model


def answer_cost(config: Config, message: AssistantMessage) -> float | None:
    """What the request that ``message`` answers cost at ``[prices]`` (None: no price)."""
    if message.usage is None or not config.prices:
        return None
    price = price_for(config.prices, message.model, configured_model(config, message.provider))
    return price.cost(message.usage) if price is not None else None


def over_budget(view: LoopView, state: RunState) -> Overrun | None:
    """The limit of ``[limits]`` the run has reached, announced with ``LimitReached`` (None
    when it has reached none, or none is set)."""
    if not view.limited:
        return None
    over = overrun(view.config.limits, state.usage, state.spent)
    if over is not None:
        view.emit(
            state,
            LimitReached(
                run_id=state.run_id, round=state.rounds or None, limit=over.limit, value=over.value
            ),
        )
    return over
