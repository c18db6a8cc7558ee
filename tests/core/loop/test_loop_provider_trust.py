"""The loop checks tools against the configured provider's trust from the first round."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import toolwire
from toolwire.config import ProviderConfig

from .loop_support import make_host, run_script


@toolwire.tool(min_provider_trust="high")
def secret(text: Annotated[str, "Any text."]) -> str:
    """Read a secret."""
    return text


@toolwire.tool
def plain(text: Annotated[str, "Any text."]) -> str:
    """Echo a text."""
    return text


async def test_a_tool_needing_more_trust_is_omitted_naming_the_providers(tmp_path: Path):
    host = make_host(tmp_path, [secret, plain], provider=ProviderConfig(trust="medium"))
    run = await run_script(host, ["done"])
    omitted = [(e.tool, e.reason) for e in run.events if e.kind == "tool_omitted"]
    assert omitted == [
        ("secret", "it needs a provider trusted at least 'high'; the provider is 'medium'")
    ]
    assert run.stop_reason == "answered"
    await host.aclose()
