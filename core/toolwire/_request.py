"""``OfferRequest``: what a plugin learns about a round when it resolves a tool's function."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ._trust import TrustLevel
from .messages import Message, SystemMessage


@attrs.frozen(kw_only=True, slots=False)
class OfferRequest:
    """The round a tool is being offered for.

    Passed to ``toolwire_resolve_function`` and ``toolwire_system_prompt_instructions`` so a plugin
    can word its offer per request (for example from the URLs already in ``messages``). Made
    every round, it has no ``__slots__``, as events have none (see :class:`~toolwire.events.Event`).
    """

    run_id: str
    round: int
    messages: tuple[Message, ...]
    api: str
    model: str | None = None
    provider_trust: TrustLevel = TrustLevel.MEDIUM
    native_tools: bool = True
    settings: Mapping[str, Any] = attrs.field(factory=dict)
    values: Mapping[str, Any] = attrs.field(factory=dict)
    """The application's own values of the run (``run(..., context={...})``), as the run's
    tools get them in ``ToolContext.values``: a plugin may read a per-conversation choice
    there."""
    chosen_tool: str | None = None
    """The tool the run's tool choice names (``tool_choice="calculator"``, ``toolwire run
    --tool-choice``, the chats' tool menu and ``/tool NAME``), in every round of the run; None
    when the choice is ``auto``, ``none`` or ``required``. A person who names a tool expects it
    offered: a resolver that offers a tool only when the conversation calls for it should offer
    the tool named here. One that withholds a tool for another reason (trust, a missing
    credential) keeps withholding it, and the run then ends with an error saying the named tool
    is not offered."""

    @property
    def conversation_key(self) -> str:
        """A key that stays the same for one conversation across its rounds and runs: a digest
        of its first message that is not a system message (the run id changes when a
        conversation continues in a new run; its opening does not)."""
        return conversation_key(self.messages)


def conversation_key(messages: Sequence[Message]) -> str:
    """The key of the conversation ``messages`` open: a digest of the first message that is
    not a system message (see :attr:`OfferRequest.conversation_key`)."""
    first = next((m for m in messages if not isinstance(m, SystemMessage)), None)
    if first is None:
        opening = ""
    else:
        content = getattr(first, "content", None)
        text = content if isinstance(content, str) else repr(content)
        opening = f"{type(first).__name__}:{text}"
    return hashlib.sha256(opening.encode("utf-8", "surrogatepass")).hexdigest()
