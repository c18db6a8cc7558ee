"""The ``openai`` plugin: registers the ``openai-chat`` and ``openai-responses`` adapters."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import toolwire

if TYPE_CHECKING:
    from toolwire.adapters import ProviderAdapter


@toolwire.hookimpl
def toolwire_provider_adapters(settings: Any) -> list[type[ProviderAdapter]]:
    """The two OpenAI adapters (imported here, when the plugin is enabled)."""
    from ._chat import OpenAIChatAdapter
    from ._responses import OpenAIResponsesAdapter

    return [OpenAIChatAdapter, OpenAIResponsesAdapter]
