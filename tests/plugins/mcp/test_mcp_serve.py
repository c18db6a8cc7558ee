"""The official SDK's client against ``toolwire mcp serve`` (stdio and streamable HTTP)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import attrs
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


@asynccontextmanager
async def _in_memory(server: ToolServer) -> AsyncIterator[ClientSession]:
    """An SDK client session with ``server`` over in-memory streams, served while it is open."""
    to_server_send, to_server_receive = anyio.create_memory_object_stream[Any](16)
    to_client_send, to_client_receive = anyio.create_memory_object_stream[Any](16)
    async with anyio.create_task_group() as group:
        group.start_soon(
            server.server.run,
            to_server_receive,
            to_client_send,
            server.server.create_initialization_options(),
        )
        async with ClientSession(to_client_receive, to_server_send) as session:
            await session.initialize()
            yield session
        group.cancel_scope.cancel()


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
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with host, _in_memory(server) as session:
        result = await session.call_tool("count", {"steps": 4}, progress_callback=on_progress)
        assert _text(result) == "counted 4"
    assert [m for _, _, m in seen] == ["step 1", "step 2", "step 3", "step 4"]
    assert seen[-1][:2] == (100.0, 100.0)


def _serve_http_at(config: Path, host: str, port: int) -> subprocess.Popen[str]:
    shown = f"[{host}]" if ":" in host else host
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolwire",
            "--config",
            str(config),
            "mcp",
            "serve",
            "--http",
            f"{shown}:{port}",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _post(host: str, port: int, headers: dict[str, str]) -> int:
    import http.client

    connection = http.client.HTTPConnection(host, port, timeout=30)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "rebinder", "version": "1"},
            },
        }
    )
    try:
        connection.putrequest("POST", "/mcp", skip_host=True)
        for name, value in {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Content-Length": str(len(body.encode())),
            **headers,
        }.items():
            connection.putheader(name, value)
        connection.endheaders(body.encode())
        return connection.getresponse().status
    finally:
        connection.close()


def _ipv6_loopback() -> bool:
    import socket

    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2", "0:0:0:0:0:0:0:1"])
def test_http_refuses_dns_rebinding_on_every_loopback_address(tmp_path: Path, bind: str, port: int):
    """A page that rebinds its own name to the server's address sends its name in Host and
    its site in Origin: refused on every loopback address; the address itself is answered."""
    if ":" in bind and not _ipv6_loopback():
        pytest.skip("no IPv6 loopback on this machine")
    process = _serve_http_at(_config(tmp_path), bind, port)
    connect = bind if ":" not in bind else "::1"
    shown = f"[{bind}]" if ":" in bind else bind
    try:
        for _ in range(600):
            if process.poll() is not None:
                break
            try:
                status = _post(connect, port, {"Host": f"{shown}:{port}"})
                break
            except OSError:
                import time

                time.sleep(0.05)
        assert process.poll() is None, process.communicate()[1]
        assert status == 200
        assert _post(connect, port, {"Host": f"evil.example:{port}"}) == 421
        evil_origin = {"Host": f"{shown}:{port}", "Origin": f"http://evil.example:{port}"}
        assert _post(connect, port, evil_origin) == 403
        own_origin = {"Host": f"{shown}:{port}", "Origin": f"http://{shown}:{port}"}
        assert _post(connect, port, own_origin) == 200
    finally:
        process.terminate()
        try:
            process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


async def test_config_after_the_command_with_the_sdk_s_minimal_environment(tmp_path: Path):
    """The SDK's stdio client starts the server with a minimal environment and the client's
    working directory: `--config` after the command names the config, and stderr says it."""
    served = tmp_path / "served"
    served.mkdir()
    config = _config(served, '\n[tools]\nenable = ["calculator"]\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "toolwire.toml").write_text('[plugins]\nenable = ["basics"]\n', encoding="utf-8")
    errors = tmp_path / "stderr.txt"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolwire", "mcp", "serve", "--config", str(config)],
        cwd=str(elsewhere),
    )
    with errors.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
    assert names == ["calculator"]
    assert f"config {config}" in errors.read_text()


@attrs.frozen
class Forecast:
    city: str
    celsius: float


@toolwire.tool(side_effects="read_only")
def forecast(city: str) -> Forecast:
    """Tomorrow's forecast."""
    return Forecast(city=city, celsius=21.5)


@toolwire.tool(side_effects="read_only")
def primes(below: int) -> list[int]:
    """Primes below a number."""
    return [n for n in range(2, below) if all(n % d for d in range(2, n))]


@toolwire.tool(side_effects="read_only")
def shout(text: str) -> str:
    """Upper case."""
    return text.upper()


async def test_typed_results_are_served_with_an_output_schema():
    host = Host.load(Config())
    host.add_tool(forecast)
    host.add_tool(primes)
    host.add_tool(shout)
    server = ToolServer(host)
    async with host, _in_memory(server) as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        weather = await session.call_tool("forecast", {"city": "Oslo"})
        found = await session.call_tool("primes", {"below": 10})
        loud = await session.call_tool("shout", {"text": "hi"})
    schema = listed["forecast"].output_schema
    assert schema is not None
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"city", "celsius"}
    assert weather.structured_content == {"city": "Oslo", "celsius": 21.5}
    assert listed["primes"].output_schema is not None
    assert found.structured_content == {"result": [2, 3, 5, 7]}
    assert listed["shout"].output_schema is None
    assert not loud.is_error


def test_a_typed_result_without_its_data_is_an_error_not_a_broken_promise():
    from toolwire import ToolResult
    from toolwire_mcp._serve import call_result

    whole = call_result(ToolResult.ok(None, data={"city": "Oslo", "celsius": 1.0}), forecast)
    assert not whole.is_error
    cut = call_result(ToolResult.ok("[Result truncated …]"), forecast)
    assert cut.is_error
    assert cut.structured_content is None
    assert "No structured result" in _text(cut)
    assert not call_result(ToolResult.ok("HI"), shout).is_error
