"""``McpServers``: MCP servers declared in Python, the twin of ``[tools.mcp.servers.<name>]``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import toolwire
from toolwire import Host, Tool
from toolwire.toolsets import Toolset

from ._settings import McpSettings, ServerSettings


class McpServers(Toolset):
    """MCP servers declared in Python: a toolset of their tools, and a plugin that gives them
    to a host (``Host.load(config, plugins=[servers])``).

    ``servers`` maps a server name to its :class:`ServerSettings` (or the same keys as a
    mapping: ``command``, ``args``, ``url``, ``prefix``, ``require_approval`` …); tools are named
    and behave exactly as with ``[tools.mcp.servers.<name>]`` in the config, and the servers
    start on the first listing and close with the host. ``name`` is the plugin name the tools
    are registered under (give each object its own when a host has several).

    **Example**::

        servers = McpServers({"time": ServerSettings(command="mcp-server-time")})
        async with Host.load(config, plugins=[servers]) as host:
            run = await host.run("What time is it in Tokyo?")

    :raises ValueError: for settings ``[tools.mcp.servers]`` would refuse, naming them.
    """

    def __init__(
        self,
        servers: Mapping[str, ServerSettings | Mapping[str, Any]],
        *,
        name: str = "mcp_servers",
    ) -> None:
        from ._client import McpClient

        self.__name__ = name
        self.settings = McpSettings(
            servers={
                server: settings
                if isinstance(settings, ServerSettings)
                else ServerSettings(**settings)
                for server, settings in servers.items()
            }
        )
        self.client = McpClient(self.settings, plugin=name)

    def __repr__(self) -> str:
        return f"McpServers({', '.join(self.settings.servers)})"

    def tools(self) -> Mapping[str, Tool]:
        """The tools of every server (from their kept lists; a server starts on its first call);
        none once the servers are closed."""
        if self.client.closed:
            return {}
        return {tool.name: tool for tool in self.client.tools()}

    @toolwire.hookimpl(specname="toolwire_configure")
    def attach_to_host(self, host: Host) -> None:
        """Close the servers with the host this object is given to."""
        self.client.attach(host)

    @toolwire.hookimpl(specname="toolwire_tools")
    def register_tools(self, settings: Any) -> list[Tool]:
        """The servers' tools, for the host this object is given to."""
        return self.client.tools()

    @toolwire.hookimpl(specname="toolwire_tools")
    def report_failed_servers(self, settings: Any) -> None:
        """Report servers that cannot be used as this plugin's failure, as the ``mcp`` plugin
        does for configured ones."""
        from ._plugin import McpServersFailed

        self.client.start_all()
        problems = self.client.problems()
        if problems:
            raise McpServersFailed("; ".join(problems))

    async def aclose(self) -> None:
        """Close the servers (the host does it when it closes, once a call has run)."""
        await self.client.aclose()
