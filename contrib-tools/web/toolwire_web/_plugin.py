"""The ``web`` plugin: registers ``read_web_page``, ``web_search`` and ``search_confluence``
and their settings.

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
    """``read_web_page``, with its instructions worded by ``free_address_choice``,
    ``web_search`` (offered only when a search backend is set; left out when
    ``search_backend = "none"`` says there is to be none), and ``search_confluence`` when
    ``confluence_url`` names a site (needing providers trusted ``confluence_trust``).

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
    tools = [reader] if web.search_backend == "none" else [reader, web_search]
    if web.confluence_url is not None:
        from ._confluence import search_confluence

        needed = web.confluence_trust_needed
        if needed != search_confluence.min_provider_trust:
            search_confluence = attrs.evolve(search_confluence, min_provider_trust=needed)
        tools.append(search_confluence)
    return tools
