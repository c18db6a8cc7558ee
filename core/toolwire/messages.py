"""The provider-independent conversation: messages, parts, tool calls and usage.

Adapters translate these to and from their wire format; the loop only ever sees these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

import attrs

from ._trust import TrustLevel, strictest
from .tools._result import ToolResult
from .usage import Usage


@attrs.frozen(kw_only=True)
class ToolCall:
    """One tool call requested by the model.

    ``arguments`` is the parsed JSON object, or None when the arguments could not be parsed; then
    ``raw_arguments`` keeps the text exactly as it arrived and ``invalid_reason`` says why it was
    rejected. ``provider_executed`` marks a call the provider ran itself (a server-side tool):
    the loop never runs it. ``provider_data`` is opaque per-adapter data kept verbatim (item ids,
    indexes).
    """

    id: str
    name: str
    arguments: Mapping[str, Any] | None = None
    raw_arguments: str | None = None
    invalid_reason: str | None = None
    provider_executed: bool = False
    provider_data: Mapping[str, Any] | None = None

    @property
    def is_valid(self) -> bool:
        """True when the arguments parsed into a JSON object."""
        return self.arguments is not None and self.invalid_reason is None


@attrs.frozen
class TextPart:
    """Visible text of a turn."""

    text: str


@attrs.frozen(kw_only=True)
class ThinkingPart:
    """Model reasoning, kept verbatim (signature and redacted payloads included)."""

    text: str = ""
    signature: str | None = None
    redacted: bool = False
    provider_data: Mapping[str, Any] | None = None


@attrs.frozen(kw_only=True)
class OpaquePart:
    """A provider item the host does not interpret (reasoning items, server tool blocks).

    Sent back unchanged to the same API; other adapters skip it.
    """

    api: str
    data: Any


AssistantPart: TypeAlias = TextPart | ThinkingPart | OpaquePart | ToolCall
"""A part of the model's turn: text, thinking, a provider's opaque item or a tool call."""
UserPart: TypeAlias = TextPart | OpaquePart
"""A part of a user's message: text or a provider's opaque item."""


@attrs.frozen
class SystemMessage:
    """System instructions. The loop keeps the effective system prompt first."""

    content: str


@attrs.frozen
class UserMessage:
    """A user turn: plain text, or parts."""

    content: str | tuple[UserPart, ...]

    @property
    def text(self) -> str:
        """The text of the turn, parts joined."""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text for p in self.content if isinstance(p, TextPart))


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True)
class AssistantMessage:
    """One assistant turn in canonical form, parts in the order the provider sent them.

    ``api`` names the adapter that produced it, so provider-opaque parts go back only to that API.
    ``response_id`` is the provider's own id of the answer (``chatcmpl-…``, ``resp_…``,
    ``msg_…``), when it sent one. ``provider`` names the configured provider that answered
    (``openai-chat/gpt-4o-mini``), set when ``[[provider.fallback]]`` lists more than one: the
    answer's provider-opaque parts go back only to that provider.
    """

    parts: tuple[AssistantPart, ...] = attrs.field(default=(), converter=_tuple)
    api: str | None = None
    model: str | None = None
    finish_reason: str | None = None
    usage: Usage | None = None
    response_id: str | None = None
    provider: str | None = None

    @property
    def text(self) -> str:
        """The visible text of the turn."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls of the turn, in order."""
        calls = []  # a loop: faster than a generator or a comprehension (a frame of its own)
        for part in self.parts:
            if isinstance(part, ToolCall):
                calls.append(part)
        return tuple(calls)


@attrs.frozen(kw_only=True)
class ToolResultMessage:
    """The result of one tool call, answering the call with id ``call_id``.

    Consecutive result messages belong to the same assistant turn; adapters group them as their
    API requires (one user message for Anthropic, one message per call for Chat Completions).
    The result's ``required_trust`` stays with the message: a run that continues a conversation
    holding it needs a provider trusted that much (:func:`required_trust`).
    """

    call_id: str
    name: str
    result: ToolResult
    by_host: bool = False
    """The host wrote this result itself (an admission refusal, a denial, a call that never
    ran): no tool produced it, so none of its text came from outside the conversation."""


Message: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage
"""Any message of a conversation."""


def required_trust(messages: Iterable[Message]) -> TrustLevel | None:
    """What the tool results of ``messages`` require of a provider together, each axis at its
    strictest (None when no result requires anything): what a run continuing the conversation
    inherits."""
    return strictest(
        *(m.result.required_trust for m in messages if isinstance(m, ToolResultMessage))
    )


def strictest_result(messages: Iterable[Message]) -> ToolResultMessage | None:
    """The tool result of ``messages`` that last raised what they require of a provider (the
    first of the strictest when one result requires everything); None when no result requires
    anything."""
    found: ToolResultMessage | None = None
    joined: TrustLevel | None = None
    for message in messages:
        if not isinstance(message, ToolResultMessage):
            continue
        needed = message.result.required_trust
        if needed is not None and needed.strictest(joined) != joined:
            joined = needed.strictest(joined)
            found = message
    return found


__all__ = [
    "AssistantMessage",
    "AssistantPart",
    "Message",
    "OpaquePart",
    "SystemMessage",
    "TextPart",
    "ThinkingPart",
    "ToolCall",
    "ToolResultMessage",
    "UserMessage",
    "UserPart",
    "required_trust",
    "strictest_result",
]
