"""The ``openai`` plugin: registers the ``openai-chat`` and ``openai-responses`` adapters."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import attrs

import toolwire

if TYPE_CHECKING:
    from toolwire.adapters import ProviderAdapter

PLUGIN_NAME = "openai"

ServerName = Literal["llama.cpp", "llama-cpp-python", "vllm", "ollama", "lmstudio", "openai"]


@attrs.frozen(kw_only=True)
class OpenAISettings:
    """``[providers.openai]``: the settings of the ``openai`` plugin.

    :param profile: the kind of server ``openai-chat`` talks to (``"llama.cpp"``,
        ``"llama-cpp-python"``, ``"vllm"``, ``"ollama"``, ``"lmstudio"`` or ``"openai"``), which
        decides the defaults of what the request carries and how it is shaped for the server's
        chat template; unset, they are judged from the host of ``[provider] base_url``.
    """

    profile: ServerName | None = None


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[providers.openai]`` is structured into :class:`OpenAISettings`."""
    return OpenAISettings if plugin_name == PLUGIN_NAME else None


@toolwire.hookimpl
def toolwire_provider_adapters(settings: Any) -> list[type[ProviderAdapter]]:
    """The two OpenAI adapters (imported here, when the plugin is enabled); ``openai-chat``
    with the server profile the settings name."""
    from ._chat import OpenAIChatAdapter
    from ._responses import OpenAIResponsesAdapter

    server = settings.profile if isinstance(settings, OpenAISettings) else None
    return [OpenAIChatAdapter.for_server(server), OpenAIResponsesAdapter]
