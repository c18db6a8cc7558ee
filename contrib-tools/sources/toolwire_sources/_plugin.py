"""The ``sources`` plugin: ``semantic_search``, its settings, and classic retrieval."""

from __future__ import annotations

from typing import Any

import toolwire
from toolwire import Tool
from toolwire.context import ContextRequest, RequestContext

from ._classic import PLUGIN_NAME, classic_context
from ._search import semantic_search
from ._settings import SourcesSettings


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[tools.sources]`` is structured into :class:`SourcesSettings`."""
    return SourcesSettings if plugin_name == PLUGIN_NAME else None


@toolwire.hookimpl
def toolwire_tools(settings: Any) -> list[Tool]:
    """``semantic_search`` (offered when a source is configured and the provider may see it)."""
    return [semantic_search]


@toolwire.hookimpl
async def toolwire_request_context(request: ContextRequest) -> RequestContext | None:
    """Classic retrieval whenever ``semantic_search`` is not offered."""
    return await classic_context(request)


@toolwire.hookimpl
def toolwire_cli_commands() -> list[toolwire.CliCommand]:
    """``toolwire sources index``: build or update the index of the configured sources."""
    import argparse

    from ._cli import add_index_arguments, index_and_report

    def configure(parser: argparse.ArgumentParser) -> None:
        commands = parser.add_subparsers(dest="sources_command", required=True)
        add_index_arguments(
            commands.add_parser("index", help="build or update the index, incrementally")
        )

    def run(args: argparse.Namespace, host: toolwire.Host) -> int:
        settings = SourcesSettings.coerce(host.plugin_settings(PLUGIN_NAME))
        return index_and_report(settings, args.sources)

    return [
        toolwire.CliCommand(
            name="sources", help="index the data sources", configure=configure, run=run
        )
    ]
