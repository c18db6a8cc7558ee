"""The host's HTTP layer: one aiohttp session per host, retries, SSE reading, provider errors.

Nothing here is public API: adapters reach it through
:class:`toolwire.adapters.HTTPProviderAdapter`.
"""

__all__: list[str] = []
