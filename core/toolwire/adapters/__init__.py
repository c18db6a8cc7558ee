"""The public API for provider adapter authors."""

from ._base import (
    AdapterCapabilities,
    EmitEvent,
    ModelRequest,
    NamedToolChoice,
    ProviderAdapter,
    ProviderError,
    ToolChoice,
    ToolsNotSupportedError,
)

__all__ = [
    "AdapterCapabilities",
    "EmitEvent",
    "ModelRequest",
    "NamedToolChoice",
    "ProviderAdapter",
    "ProviderError",
    "ToolChoice",
    "ToolsNotSupportedError",
]
