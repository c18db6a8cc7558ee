"""The ``web`` plugin: registers ``read_web_page`` and ``web_search`` and their settings."""

from __future__ import annotations

from typing import Any

import toolwire
from toolwire import OfferRequest, Tool

from ._read import read_instructions, read_web_page
from ._search import web_search
from ._settings import WebSettings

PLUGIN_NAME = "web"


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[tools.web]`` is structured into :class:`WebSettings`."""
    return WebSettings if plugin_name == PLUGIN_NAME else None


@toolwire.hookimpl
def toolwire_tools(settings: Any) -> list[Tool]:
    """``read_web_page``, and ``web_search`` (offered only when a search backend is set; left
    out when ``search_backend = "none"`` says there is to be none)."""
    if WebSettings.coerce(settings).search_backend == "none":
        return [read_web_page]
    return [read_web_page, web_search]


@toolwire.hookimpl
def toolwire_system_prompt_instructions(tool: Tool, request: OfferRequest) -> str | None:
    """Word ``read_web_page``'s instructions by ``free_address_choice``; other tools: no answer."""
    if tool.__wrapped__ is not read_web_page.__wrapped__:
        return None
    return read_instructions(WebSettings.coerce(request.settings))
