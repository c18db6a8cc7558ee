"""The official SDK's client against ``toolwire mcp serve`` (stdio and streamable HTTP)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as mt
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

import toolwire
from toolwire import Config, Host, ToolCallingLoop, ToolContext
from toolwire_mcp._serve import ToolServer

BASICS = '["calculator", "convert_time", "convert_units", "current_time"]'


def _config(tmp_path: Path, extra: str = "", *, served: str | None = BASICS) -> Path:
    """A config enabling basics; ``served`` names the tools ``mcp serve`` may serve (None names
    none: a hosted surface then serves nothing)."""
    path = tmp_path / "toolwire.toml"
    allow = f"\n[surfaces.mcp-serve]\nallow = {served}\n" if served is not None else ""
    path.write_text(
        '[plugins]\nenable = ["basics", "mcp"]\n\n'
        f'[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n' + allow + extra,
        encoding="utf-8",
    )
    return path


@asynccontextmanager
async def _serve_stdio(
    config: Path, *args: str, errlog: Any = sys.stderr, **session: Any
) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolwire", "--config", str(config), "mcp", "serve", *args],
    )
    client = stdio_client(params, errlog=errlog)
    async with client as (read, write), ClientSession(read, write, **session) as s:
        await s.initialize()
        yield s


def _text(result: mt.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, mt.TextContent))


async def test_lists_the_host_schemas_calls_and_refuses(tmp_path: Path):
    config = _config(tmp_path)
    host = Host.load(config)
    async with host:
        expected = {name: tool.function_spec() for name, tool in host.tools.items()}
        refusal = await ToolCallingLoop(host).call("calculator", {"expression": 5})
    async with _serve_stdio(config) as session:
        listed = (await session.list_tools()).tools
        assert sorted(t.name for t in listed) == sorted(expected)
        for tool in listed:
            assert tool.input_schema == dict(expected[tool.name].parameters)
            assert tool.description == expected[tool.name].description
        calculator = next(t for t in listed if t.name == "calculator")
        assert calculator.annotations is not None
        assert calculator.annotations.read_only_hint is True
        answer = await session.call_tool("calculator", {"expression": "6 * 7"})
        assert not answer.is_error
        assert _text(answer) == "6 * 7 = 42"
        refused = await session.call_tool("calculator", {"expression": 5})
        assert refused.is_error
        assert _text(refused) == refusal.model_text()
        unknown = await session.call_tool("nothing", {})
        assert unknown.is_error
        assert "calculator" in _text(unknown)


async def test_approval_is_refused_unless_approved_or_elicited(tmp_path: Path):
    config = _config(tmp_path, '\n[policy]\nrequire_approval = ["read_only"]\n')
    async with _serve_stdio(config) as session:
        refused = await session.call_tool("calculator", {"expression": "1 + 1"})
        assert refused.is_error
        assert "--approve calculator" in _text(refused)
    async with _serve_stdio(config, "--approve", "calculator") as session:
        approved = await session.call_tool("calculator", {"expression": "1 + 1"})
        assert _text(approved).endswith("= 2")

    asked: list[str] = []

    async def decide(context: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        asked.append(params.message)
        approve = "1 + 1" in params.message
        return mt.ElicitResult(action="accept", content={"approve": approve})

    async with _serve_stdio(config, elicitation_callback=decide) as session:
        yes = await session.call_tool("calculator", {"expression": "1 + 1"})
        assert _text(yes).endswith("= 2")
        no = await session.call_tool("calculator", {"expression": "2 + 2"})
        assert no.is_error
        assert "did not approve" in _text(no)
    assert len(asked) == 2
    assert "calculator" in asked[0]


async def test_a_config_naming_no_tools_serves_none_and_says_so(tmp_path: Path):
    config = _config(tmp_path, served=None)
    errors = tmp_path / "stderr"
    with errors.open("w") as stderr:
        async with _serve_stdio(config, errlog=stderr) as session:
            assert (await session.list_tools()).tools == []
            refused = await session.call_tool("calculator", {"expression": "1 + 1"})
            assert refused.is_error
    assert "the mcp-serve surface is hosted and the config names no tools" in errors.read_text()
    config = _config(tmp_path, '\n[tools]\nenable = ["calculator"]\n', served=None)
    async with _serve_stdio(config) as session:
        assert [t.name for t in (await session.list_tools()).tools] == ["calculator"]


async def test_a_guarded_tool_is_refused_unless_approved_in_advance(tmp_path: Path):
    # guarding read_only makes calculator a guarded tool: `mcp serve` is unattended, so the
    # call is refused
    config = _config(tmp_path, '\n[policy]\nguarded = ["read_only"]\n')
    async with _serve_stdio(config) as session:
        refused = await session.call_tool("calculator", {"expression": "1 + 1"})
        assert refused.is_error
        assert "the mcp-serve surface runs unattended" in _text(refused)
    async with _serve_stdio(config, "--approve", "calculator") as session:
        approved = await session.call_tool("calculator", {"expression": "1 + 1"})
        assert _text(approved).endswith("= 2")


def test_approve_must_name_a_served_tool(tmp_path: Path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolwire",
            "--config",
            str(_config(tmp_path)),
            "mcp",
            "serve",
            "--approve",
            "rm_rf",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "rm_rf" in done.stderr
    assert "calculator" in done.stderr


@pytest.mark.parametrize("address", ["0.0.0.0:8000", "example.org:80", "127.0.0.1", "::1:99999"])
def test_http_serves_loopback_only(address: str):
    from toolwire_mcp._serve import parse_listen_address

    with pytest.raises(ValueError, match="--http"):
        parse_listen_address(address)
    assert parse_listen_address("[::1]:8931") == ("::1", 8931)


async def test_streamable_http(tmp_path: Path, toolwire_http_server: Any):
    with toolwire_http_server(_config(tmp_path)) as url:
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            names = {t.name for t in (await session.list_tools()).tools}
            assert "calculator" in names
            answer = await session.call_tool("calculator", {"expression": "2 ** 10"})
            assert _text(answer).endswith("= 1024")
            refused = await session.call_tool("calculator", {})
            assert refused.is_error
            assert "expression" in _text(refused)


async def test_progress_of_a_served_tool_reaches_the_client(tmp_path: Path):
    @toolwire.tool(side_effects="read_only")
    def count(steps: int, context: ToolContext) -> str:
        """Count, reporting progress."""
        for step in range(1, steps + 1):
            context.report_progress(f"step {step}", step / steps)
        return f"counted {steps}"

    host = Host.load(Config())
    server = ToolServer(host)
    host.add_tool(count)
    to_server_send, to_server_receive = anyio.create_memory_object_stream[Any](16)
    to_client_send, to_client_receive = anyio.create_memory_object_stream[Any](16)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with host, anyio.create_task_group() as group:
        group.start_soon(
            server.server.run,
            to_server_receive,
            to_client_send,
            server.server.create_initialization_options(),
        )
        async with ClientSession(to_client_receive, to_server_send) as session:
            await session.initialize()
            result = await session.call_tool("count", {"steps": 4}, progress_callback=on_progress)
            assert _text(result) == "counted 4"
        group.cancel_scope.cancel()
    assert [m for _, _, m in seen] == ["step 1", "step 2", "step 3", "step 4"]
    assert seen[-1][:2] == (100.0, 100.0)
