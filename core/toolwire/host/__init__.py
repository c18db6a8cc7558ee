"""The host: plugin discovery and loading, the registry of tools and adapters, running the loop.

Nothing here is public API: a host is :class:`toolwire.Host`, its middleware
:func:`toolwire.middleware`, a run as a tool :func:`toolwire.agent_tool`.
"""

__all__: list[str] = []
