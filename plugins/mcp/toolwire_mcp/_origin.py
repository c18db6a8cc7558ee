"""Which configured MCP server a host tool comes from (approval grants "by server" ask)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolwire import Host


def server_of(host: Host, name: str) -> str | None:
    """The configured MCP server whose tool is registered on ``host`` as ``name``; None for a
    tool of no server (or when the ``mcp`` plugin has no client on this host)."""
    from ._plugin import client_for

    client = client_for(host.plugin_settings("mcp"))
    if client is None:
        return None
    for server in client.names:
        if name in client.registered(server):
            return server
    return None
