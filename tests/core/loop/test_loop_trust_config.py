"""``[tools.trust]`` raises a tool's minimum provider trust; ``[tools] deny`` switches a context
tool off."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_support import events_of, make_host, run_script

import toolwire
from toolwire import TrustLevel
from toolwire.config import ConfigError, ProviderConfig, ToolsConfig, config_from_dict


@toolwire.tool
def read_web_page(url: str) -> str:
    """Read a page."""
    return "page"


@toolwire.tool(min_provider_trust="self_hosted")
def vault() -> str:
    """Read the vault."""
    return "gold"


reader = toolwire.Tool.from_schema(
    name="context_reader",
    description="Offers itself once a URL is mentioned.",
    parameters={"type": "object", "properties": {}},
    handler=lambda arguments: "read",
    activation="context",
)


def test_the_table_is_read_and_checked() -> None:
    config = config_from_dict({"tools": {"trust": {"read_web_page": "high"}}})
    assert config.tools.trust == {"read_web_page": "high"}
    with pytest.raises(ConfigError, match=r"\$\.tools\.trust\.read_web_page = 'sky-high'.*high"):
        config_from_dict({"tools": {"trust": {"read_web_page": "sky-high"}}})


async def test_an_administrator_raises_a_tools_trust_and_a_weaker_provider_loses_it(
    tmp_path: Path,
) -> None:
    tools = ToolsConfig(trust={"read_web_page": "high", "context_reader": "high", "vault": "low"})
    host = make_host(tmp_path, [read_web_page, vault, reader], tools_config=tools)
    assert host.tools["read_web_page"].min_provider_trust == TrustLevel.HIGH
    # never lowered: each axis keeps the stricter of the two (self-hosted, and at least low)
    assert host.tools["vault"].min_provider_trust == TrustLevel.parse("low+self_hosted")
    run = await run_script(host, ["ok"])
    assert events_of(run, "round_started")[0].offered == ()
    omitted = {e.tool: e.reason for e in events_of(run, "tool_omitted")}
    assert "at least 'high'" in omitted["read_web_page"]
    assert "at least 'high'" in omitted["context_reader"]
    trusted = make_host(
        tmp_path,
        [read_web_page, reader],
        tools_config=tools,
        provider=ProviderConfig(trust="high"),
    )
    run = await run_script(trusted, ["ok"])
    assert events_of(run, "round_started")[0].offered == ("context_reader", "read_web_page")


async def test_a_tool_added_later_gets_the_raised_trust_too(tmp_path: Path) -> None:
    host = make_host(tmp_path, [], tools_config=ToolsConfig(trust={"read_web_page": "high"}))
    host.add_tool(read_web_page)
    assert host.tools["read_web_page"].min_provider_trust == TrustLevel.HIGH


async def test_deny_switches_a_context_tool_off(tmp_path: Path) -> None:
    host = make_host(tmp_path, [reader], tools_config=ToolsConfig(deny=("context_reader",)))
    run = await run_script(host, ["ok"])
    assert events_of(run, "round_started")[0].offered == ()
