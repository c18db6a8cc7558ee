"""MCP servers declared in Python (``toolwire_mcp.McpServers``), not only in toolwire.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolwire import Config, Host, ToolCallingLoop
from toolwire.config import LedgerConfig
from toolwire_mcp import McpServers, ServerSettings


async def test_servers_declared_in_python_give_a_host_their_tools(
    tmp_path: Path, notes_stdio
) -> None:
    servers = McpServers(
        {"notes": ServerSettings(**notes_stdio()), "more": {**notes_stdio(), "prefix": "m_"}}
    )
    config = Config(ledger=LedgerConfig(path=str(tmp_path / "ledger.sqlite3")))
    async with Host.load(config, plugins=[servers]) as host:
        read = host.tools["notes_read_note"]
        assert read.plugin == "mcp_servers"
        assert "m_read_note" in host.tools
        result = await ToolCallingLoop(host).call("notes_read_note", {"title": "groceries"})
        assert result.content == "milk, eggs"
        info = host.plugin_info("mcp_servers")
        assert info is not None
        assert info.error is None
        # a toolset too: the compositions apply
        picked = servers.filtered(include=["notes_read_note", "m_add_numbers"]).prefixed("x_")
        assert sorted(picked.tools()) == ["x_m_add_numbers", "x_notes_read_note"]
    # the host closed the servers with itself, after the call bound them to it
    assert servers.tools() == {}


def test_settings_are_checked_as_the_config_checks_them() -> None:
    with pytest.raises(ValueError, match="give either command"):
        McpServers({"broken": {}})
    with pytest.raises(ValueError, match="a server name is letters"):
        McpServers({"bad name": {"command": "x"}})


async def test_a_server_that_cannot_start_is_reported_as_the_plugins_failure(
    tmp_path: Path,
) -> None:
    servers = McpServers({"gone": {"command": str(tmp_path / "no-such-server")}}, name="mine")
    config = Config(ledger=LedgerConfig(path=str(tmp_path / "ledger.sqlite3")))
    async with Host.load(config, plugins=[servers]) as host:
        assert host.tools == {}
        info = host.plugin_info("mine")
        assert info is not None
        assert "MCP server 'gone'" in (info.error or "")
    await servers.aclose()
