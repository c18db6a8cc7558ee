"""The ``web`` plugin: registers ``read_web_page`` and ``web_search`` and their settings.

The tools are built when the host first asks for them, not when the plugin is enabled:
``toolwire plugins`` never pays for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import toolwire

from ._settings import WebSettings

if TYPE_CHECKING:
    from toolwire import Tool

PLUGIN_NAME = "web"


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[tools.web]`` is structured into :class:`WebSettings`."""
    return WebSettings if plugin_name == PLUGIN_NAME else None


@toolwire.hookimpl
def toolwire_tools(settings: Any) -> list[Tool]:
    """``read_web_page``, with its instructions worded by ``free_address_choice``, and
    ``web_search`` (offered only when a search backend is set; left out when
    ``search_backend = "none"`` says there is to be none).

    The wording is settled here, from the settings, rather than in
    ``toolwire_system_prompt_instructions``: a host where no plugin implements that hook keeps
    its offer from round to round.
    """
    import attrs

    from ._read import read_instructions, read_web_page
    from ._search import web_search

    web = WebSettings.coerce(settings)
    instructions = read_instructions(web)
    reader = read_web_page
    if instructions != reader.instructions:
        reader = attrs.evolve(reader, instructions=instructions)
    if web.search_backend == "none":
        return [reader]
    return [reader, web_search]
