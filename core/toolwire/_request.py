"""``OfferRequest``: what a plugin learns about a round when it resolves a tool's function."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ._trust import TrustLevel
from .messages import Message


@attrs.frozen(kw_only=True)
class OfferRequest:
    """The round a tool is being offered for.

    Passed to ``toolwire_resolve_function`` and ``toolwire_system_prompt_instructions`` so a plugin
    can word its offer per request (for example from the URLs already in ``messages``).
    """

    run_id: str
    round: int
    messages: tuple[Message, ...]
    api: str
    model: str | None = None
    provider_trust: TrustLevel = TrustLevel.MEDIUM
    native_tools: bool = True
    settings: Mapping[str, Any] = attrs.field(factory=dict)
