"""How a provider API expects its key: the header and the text before the key."""

from __future__ import annotations

from typing import Final

import attrs


@attrs.frozen
class ApiKeyHeader:
    """How an API expects its key: the header ``name`` and the text before the key."""

    name: str = "Authorization"
    prefix: str = "Bearer "


BEARER_KEY_HEADER: Final = ApiKeyHeader()
"""``Authorization: Bearer <key>`` (OpenAI and OpenAI-compatible hosts)."""

ANTHROPIC_KEY_HEADER: Final = ApiKeyHeader("x-api-key", "")
"""``x-api-key: <key>`` (Anthropic)."""
