"""MCP for toolwire: MCP servers as toolsets of tools, and ``toolwire mcp serve``."""

from ._settings import McpSettings, ServerSettings

__all__ = ["McpSettings", "ServerSettings"]
