"""The ``anthropic`` plugin: registers the ``anthropic-messages`` adapter."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import toolwire

if TYPE_CHECKING:
    from toolwire.adapters import ProviderAdapter


@toolwire.hookimpl
def toolwire_provider_adapters(settings: Any) -> list[type[ProviderAdapter]]:
    """The Messages adapter (imported here, when the plugin is enabled)."""
    from ._messages import AnthropicMessagesAdapter

    return [AnthropicMessagesAdapter]
