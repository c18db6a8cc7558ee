"""The provider-independent conversation: messages, their parts, tool calls and usage."""

from ._messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    OpaquePart,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    UserPart,
)

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
    "Usage",
    "UserMessage",
    "UserPart",
]
