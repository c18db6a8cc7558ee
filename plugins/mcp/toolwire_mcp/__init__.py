"""MCP for toolwire: MCP servers as toolsets of tools, and ``toolwire mcp serve``."""

from ._origin import server_of
from ._settings import McpSettings, ServerSettings

__all__ = ["McpSettings", "ServerSettings", "server_of"]
