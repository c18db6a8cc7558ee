"""MCP for toolwire: MCP servers as toolsets of tools, and ``toolwire mcp serve``."""

from ._origin import server_of
from ._python import McpServers
from ._settings import McpSettings, ServerSettings

__all__ = ["McpServers", "McpSettings", "ServerSettings", "server_of"]
