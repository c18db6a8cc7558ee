"""``[limits]`` and ``[run]``: what a run may spend, and what its final answer must be."""

from __future__ import annotations

import math
from typing import Any

import attrs

from .._fieldwise import record_eq, record_hash, record_repr
from ._fields import setting, whole

_TOKENS = "a whole number of tokens"


def _positive_amount(cost: float) -> str | None:
    return None if cost > 0 and math.isfinite(cost) else "a positive amount"


def _schema_problem(schema: Any) -> str | None:
    if isinstance(schema, str | dict):
        return None
    return "a JSON Schema table, or the path of a JSON file holding one"


@attrs.frozen(kw_only=True, slots=False)
class LimitsConfig:
    """``[limits]``: budgets of a run, in tokens and money (None = no limit).

    A run stops with stop reason ``budget`` once its usage reaches a limit: before a request
    when it already has, and after an answer that reached it (that answer's calls are answered
    as not run). ``max_cost`` is in the currency of ``[prices]`` and needs a price for every
    configured model.
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    max_input_tokens: int | None = setting(
        None,
        bounds=(1, None),
        unit=_TOKENS,
        help="the run's input tokens (cached ones included, every request summed) after which "
        "it stops: `budget`",
    )
    max_output_tokens: int | None = setting(
        None,
        bounds=(1, None),
        unit=_TOKENS,
        help="the same for output tokens (reasoning included)",
    )
    max_cost: float | None = setting(
        None,
        check=whole(_positive_amount),
        kind="amount > 0",
        help="the same for the run's cost at `[prices]`; every configured model (fallbacks too) "
        "needs a price",
    )

    @property
    def any(self) -> bool:
        """True when a limit is set."""
        return (
            self.max_input_tokens is not None
            or self.max_output_tokens is not None
            or self.max_cost is not None
        )


@attrs.frozen(kw_only=True, slots=False)
class RunConfig:
    """``[run]``: what every run's final answer must be.

    ``output_schema`` is a JSON Schema the answer must match: a table, or the path of a JSON
    file (relative to the file that sets it). ``output_retries`` is how many wrong answers are
    sent back to the model with what is wrong before the run stops (``output_invalid``).
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    output_schema: Any = setting(
        None,
        check=whole(_schema_problem),
        kind="a JSON Schema table, or the path of a JSON file",
        help="what every run's final answer must be (see [Typed answers](#typed-answers)); a "
        "path is relative to the file that sets it",
    )
    output_retries: int = setting(
        2,
        bounds=(0, 100),
        unit="a whole number",
        help="wrong answers sent back to the model before the run stops with `output_invalid`",
    )
