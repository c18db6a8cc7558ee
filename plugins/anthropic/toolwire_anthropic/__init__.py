"""toolwire-anthropic: the Anthropic Messages adapter for toolwire (``anthropic-messages``).

It speaks the Messages API over HTTP through the host's transport (no vendor SDK).
"""

from ._messages import (
    DEFAULT_MAX_TOKENS,
    AnthropicMessagesAdapter,
    MessagesStream,
    parse_message,
    render_messages,
    render_messages_request,
    render_tools,
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "AnthropicMessagesAdapter",
    "MessagesStream",
    "parse_message",
    "render_messages",
    "render_messages_request",
    "render_tools",
]
