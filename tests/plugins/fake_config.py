"""The config of a run against a loopback fake provider server, as tests write it."""

from __future__ import annotations

from typing import Any

from toolwire.config import Config, config_from_dict
from toolwire.testing import FakeProviderServer


def fake_config_table(
    server: FakeProviderServer, *, model: str = "m", provider: Any = None, **sections: Any
) -> dict[str, Any]:
    """The table (as ``toolwire.toml`` would hold it) of a config whose provider is ``server``:
    its adapter and base URL, no retries, no ledger; ``provider`` adds ``[provider]`` keys,
    ``sections`` more tables."""
    return {
        "provider": {
            "adapter": server.api,
            "base_url": server.base_url,
            "model": model,
            "max_retries": 0,
            **(provider or {}),
        },
        "ledger": {"enabled": False},
        **sections,
    }


def fake_config(server: FakeProviderServer, **fields: Any) -> Config:
    """:func:`fake_config_table` as a :class:`Config`."""
    return config_from_dict(fake_config_table(server, **fields))
