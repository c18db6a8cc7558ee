"""The ``gemini`` plugin: registers the ``gemini`` adapter and its ``[providers.gemini]``
settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import attrs

import toolwire

if TYPE_CHECKING:
    from toolwire.adapters import ProviderAdapter

PLUGIN_NAME = "gemini"


@attrs.frozen(kw_only=True)
class GeminiSettings:
    """``[providers.gemini]``: the settings of the ``gemini`` plugin.

    :param api_version: the API version in the URL (``v1beta``; ``v1`` for the stable surface).
    :param schemas: how parameter schemas are sent: ``auto`` projects each into Gemini's
        OpenAPI subset (``parameters``) where that loses nothing and sends the rest as written
        (``parametersJsonSchema``, Gemini 2.5 and later); ``openapi`` projects every one, writes
        what the subset lacks into descriptions and refuses, by name, a tool it cannot express
        (for models before 2.5); ``json-schema`` sends every one as written.
    :param additional_properties: the model takes ``additionalProperties``, so open objects
        (``dict[str, T]``) are projected rather than refused.
    :param result_role: the role of the turn carrying tool results: ``user``, or ``function`` for
        older models.
    :param validated: tool choice ``auto`` is sent as ``VALIDATED``: the model answers in text or
        with calls held to their schemas.
    """

    api_version: str = "v1beta"
    schemas: Literal["auto", "openapi", "json-schema"] = "auto"
    additional_properties: bool = False
    result_role: Literal["user", "function"] = "user"
    validated: bool = False


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[providers.gemini]`` is structured into :class:`GeminiSettings`."""
    return GeminiSettings if plugin_name == PLUGIN_NAME else None


@toolwire.hookimpl
def toolwire_provider_adapters(settings: Any) -> list[type[ProviderAdapter]]:
    """The Gemini adapter (imported here, when the plugin is enabled), with the settings."""
    from ._adapter import GeminiAdapter

    chosen = settings if isinstance(settings, GeminiSettings) else GeminiSettings()
    return [GeminiAdapter.configured(chosen)]
