"""The ``mcp`` plugin: MCP servers as tools, and the ``toolwire mcp`` command.

Importing this module is cheap: the MCP SDK is imported when a server is configured or a
command runs, never for ``toolwire --help`` or ``toolwire plugins`` without servers.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import toolwire
from toolwire import CliCommand, Tool

from ._settings import McpSettings

if TYPE_CHECKING:
    from ._client import McpClient

PLUGIN_NAME = "mcp"

# The host structures one McpSettings per host (compared by identity), and calls toolwire_tools
# with it: the client started for that host is found through it, and goes with it.
_CLIENTS: weakref.WeakKeyDictionary[McpSettings, McpClient] = weakref.WeakKeyDictionary()


class McpServersFailed(Exception):
    """Some configured MCP servers cannot be used; the message names each, with its stderr."""


def client_for(settings: Any) -> McpClient | None:
    """The client of the host whose ``[tools.mcp]`` is ``settings`` (None without servers)."""
    if not isinstance(settings, McpSettings) or not settings.servers:
        return None
    client = _CLIENTS.get(settings)
    if client is None:
        from ._client import McpClient

        client = _CLIENTS[settings] = McpClient(settings)
    return client


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[tools.mcp]`` is structured into :class:`McpSettings`."""
    return McpSettings if plugin_name == PLUGIN_NAME else None


@toolwire.hookimpl
def toolwire_tools(settings: Any) -> list[Tool]:
    """The tools of every configured server that started, all servers started at once."""
    client = client_for(settings)
    return client.tools() if client is not None else []


@toolwire.hookimpl(specname="toolwire_tools")
def report_failed_servers(settings: Any) -> None:
    """Report the servers (and server tools) that cannot be used as this plugin's failure, so
    ``toolwire plugins`` and ``doctor`` show them with the server's stderr; the tools of the
    other servers stay registered."""
    client = client_for(settings)
    if client is None:
        return
    client.start_all()
    problems = client.problems()
    if problems:
        raise McpServersFailed("; ".join(problems))


@toolwire.hookimpl
def toolwire_cli_commands() -> list[CliCommand]:
    """``toolwire mcp serve`` and ``toolwire mcp servers``."""
    from ._command import MCP_COMMAND

    return [MCP_COMMAND]
