"""toolwire-anthropic: the Anthropic Messages adapter for toolwire (``anthropic-messages``).

It speaks the Messages API over HTTP through the host's transport (no vendor SDK).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._messages import (
        DEFAULT_MAX_TOKENS,
        AnthropicMessagesAdapter,
        MessagesStream,
        parse_message,
        render_messages,
        render_messages_request,
        render_tools,
    )

# Names are imported on first use: enabling the plugin imports only `_plugin`, and the adapter
# loads when a provider asks for it.
_LAZY = frozenset(
    {
        "DEFAULT_MAX_TOKENS",
        "AnthropicMessagesAdapter",
        "MessagesStream",
        "parse_message",
        "render_messages",
        "render_messages_request",
        "render_tools",
    }
)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'toolwire_anthropic' has no attribute {name!r}")
    from . import _messages

    value = getattr(_messages, name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_MAX_TOKENS",
    "AnthropicMessagesAdapter",
    "MessagesStream",
    "parse_message",
    "render_messages",
    "render_messages_request",
    "render_tools",
]
