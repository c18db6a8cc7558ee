"""The host's HTTP layer: one aiohttp session per host, retries, SSE reading, provider errors."""
