"""The tool choice a round sends: the run's own, or the nearest one the adapter can express."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from ..adapters._base import NamedToolChoice, ToolChoice
from ..events import ToolChoiceDegraded

if TYPE_CHECKING:
    from ..adapters import ProviderAdapter
    from ..tools._spec import FunctionSpec


@attrs.define(kw_only=True)
class SentChoice:
    """What a round sends for the run's tool choice: the choice and the functions offered with
    it, and why it differs from the run's (None when it does not)."""

    choice: ToolChoice
    functions: tuple[FunctionSpec, ...]
    degraded: str | None = None


def kind_of(choice: ToolChoice) -> str:
    """``auto``, ``none``, ``required`` or ``named``: how adapters declare what they take."""
    return "named" if isinstance(choice, NamedToolChoice) else str(choice)


def nearest_choice(
    choice: ToolChoice, supported: frozenset[str], functions: tuple[FunctionSpec, ...]
) -> SentChoice:
    """``choice`` when the adapter takes it, else the nearest choice it takes.

    A named tool becomes ``required`` (else ``auto``) with that tool alone offered, so the model
    can call no other; ``required`` becomes ``auto``; ``none`` is kept by offering no tools.
    """
    kind = kind_of(choice)
    if kind in supported or not functions:
        return SentChoice(choice=choice, functions=functions)
    if isinstance(choice, NamedToolChoice):
        only = tuple(f for f in functions if f.name == choice.name)
        sent: ToolChoice = "required" if "required" in supported else "auto"
        return SentChoice(
            choice=sent,
            functions=only,
            degraded=f"sent as {sent!r} with only {choice.name!r} offered",
        )
    if kind == "required":
        return SentChoice(choice="auto", functions=functions, degraded="sent as 'auto'")
    if kind == "none":
        return SentChoice(choice="auto", functions=(), degraded="kept by offering no tools")
    return SentChoice(choice=choice, functions=functions)


def degraded_choice(
    run_id: str, round: int, choice: ToolChoice, sent: SentChoice, adapter: ProviderAdapter
) -> ToolChoiceDegraded:
    """The warning that ``sent`` is not the run's ``choice``, naming what the adapter takes."""
    takes = ", ".join(sorted(adapter.capabilities.tool_choice)) or "none"
    requested = choice.name if isinstance(choice, NamedToolChoice) else str(choice)
    return ToolChoiceDegraded(
        run_id=run_id,
        round=round,
        requested=kind_of(choice),
        sent=kind_of(sent.choice),
        detail=(
            f"tool_choice {requested!r} is not one the {adapter.api} adapter can express here "
            f"(it takes {takes}); {sent.degraded}"
        ),
    )
