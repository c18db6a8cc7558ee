"""The ``llamacpp`` plugin: registers the ``llamacpp`` adapter and its settings class."""

from __future__ import annotations

from typing import Any

import toolwire
from toolwire.adapters import ProviderAdapter

from ._settings import LlamaCppSettings


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[providers.llamacpp]`` is structured into :class:`LlamaCppSettings`."""
    return LlamaCppSettings if plugin_name == "llamacpp" else None


@toolwire.hookimpl
def toolwire_provider_adapters(settings: Any) -> list[type[ProviderAdapter]]:
    """The ``llamacpp`` adapter, with the plugin's settings as its defaults."""
    from ._adapter import LlamaCppAdapter

    if isinstance(settings, LlamaCppSettings):
        return [LlamaCppAdapter.configured(settings)]
    return [LlamaCppAdapter]
