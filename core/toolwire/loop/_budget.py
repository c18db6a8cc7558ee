"""What a run's requests cost, and whether the run is over a limit of ``[limits]``.

Pure functions of the config, the usage and the cost: the stages ask them after each answer
and before each request.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ..config import LimitsConfig
from ..usage import ModelPrice, Usage

__all__ = ["Overrun", "overrun", "price_for"]


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
