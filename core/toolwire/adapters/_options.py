"""The request fields beyond what the loop decides: ``[provider] options`` and provider tools."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config._provider import LOOP_OWNED_OPTIONS
from ..http._errors import ProviderError
from ._base import ModelRequest


def extra_fields(config: Any, request: ModelRequest, api: str) -> dict[str, Any]:
    """``[provider] options`` then the request's own options, for the end of a request body.

    :raises ProviderError: when either sets a field the loop decides (``tools``,
        ``tool_choice``, ``parallel_tool_calls``): extra parameters never override the offer.
    """
    if not config.options and not request.options:
        return {}  # the common case, every request
    fields: dict[str, Any] = {}
    for source, options in (
        ("[provider] options", config.options),
        ("the request's options", request.options),
    ):
        owned = sorted(set(options) & LOOP_OWNED_OPTIONS)
        if owned:
            raise ProviderError(
                f"{api}: {source} set {', '.join(owned)}, which the loop decides for every "
                "request; offer tools with [tools], and list tools the provider runs itself in "
                "[provider] provider_tools",
                api=api,
            )
        fields.update(options)
    return fields


def provider_tools(config: Any) -> list[dict[str, Any]]:
    """The definitions of the tools the provider runs itself (``[provider] provider_tools``),
    as written, to send beside the local tools."""
    tools: tuple[Mapping[str, Any], ...] = getattr(config, "provider_tools", ())
    return [dict(tool) for tool in tools] if tools else []  # none, nearly always
