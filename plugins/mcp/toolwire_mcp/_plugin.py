"""The ``mcp`` plugin: MCP servers as tools, and the ``toolwire mcp`` command.

Importing this module is cheap: the MCP SDK is imported when a server starts or a command
runs, never for ``toolwire --help``, ``toolwire plugins``, or a listing of cached tools.
"""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING, Any

import toolwire
from toolwire import CliCommand, Tool

from ._settings import McpSettings

if TYPE_CHECKING:
    from toolwire import Host

    from ._client import McpClient

PLUGIN_NAME = "mcp"

# The host structures one McpSettings per host (compared by identity) and hands it to
# toolwire_tools: the client made for that host in toolwire_configure is found through it.
_CLIENTS: weakref.WeakKeyDictionary[McpSettings, McpClient] = weakref.WeakKeyDictionary()


class McpServersFailed(Exception):
    """Some configured MCP servers cannot be used; the message names each, with its stderr."""


def client_for(settings: Any, host: Host | None = None) -> McpClient | None:
    """The client of the host whose ``[tools.mcp]`` is ``settings`` (None without servers)."""
    if not isinstance(settings, McpSettings) or not settings.servers:
        return None
    client = _CLIENTS.get(settings)
    if client is None:
        from ._client import McpClient

        base_dirs = _base_dirs(host, settings) if host is not None else {}
        client = _CLIENTS[settings] = McpClient(settings, base_dirs=base_dirs)
    if host is not None:
        client.attach(host)
    return client


def _base_dirs(host: Host, settings: McpSettings) -> dict[str, str | None]:
    """The folder of the config file that declares each server (None: not from a file)."""
    out: dict[str, str | None] = {}
    for name in settings.servers:
        origin = host.config.origin_of(f"$.tools.mcp.servers.{name}")
        out[name] = os.path.dirname(os.path.abspath(origin)) if origin else None
    return out


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[tools.mcp]`` is structured into :class:`McpSettings`."""
    return McpSettings if plugin_name == PLUGIN_NAME else None


@toolwire.hookimpl
def toolwire_configure(host: Host) -> None:
    """Make the host's client: server paths from the config file's folder, closed with it."""
    client_for(host.plugin_settings(PLUGIN_NAME), host)


@toolwire.hookimpl
def toolwire_tools(settings: Any) -> list[Tool]:
    """The tools of every configured server: cached lists, the others' servers started."""
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
    client.tools()
    problems = client.problems()
    if problems:
        raise McpServersFailed("; ".join(problems))


@toolwire.hookimpl
def toolwire_cli_commands() -> list[CliCommand]:
    """``toolwire mcp serve``, ``servers``, ``add`` and ``login``."""
    from ._command import MCP_COMMAND

    return [MCP_COMMAND]
