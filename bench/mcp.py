"""The cost of MCP in toolwire, as ratios against floors, in one run.

1. One tool call over stdio: ``add(a, b)`` served by an MCP server written with the official
   SDK, called through toolwire (host execution: validation, middleware, result mapping, the
   MCP loop thread) against the same call through the SDK's own ``ClientSession`` (the floor;
   target: at most 1.5x), and against the same tool as an in-process toolwire tool run through
   the same host execution. Samples are interleaved so load changes hit every variant alike.
2. ``toolwire tools list`` with 3 stdio servers configured, from process start to output,
   against ``toolwire tools list`` with no server (the CLI's own floor) and against one SDK
   client starting one server and listing its tools (the protocol's floor).

    python bench/mcp.py [--calls N] [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Annotated, Any

# This file is named like the SDK's package: keep its folder off the import path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

CALL_TARGET = 1.5

SERVER = '''\
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("bench")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


server.run("stdio")
'''

SDK_LIST = """\
import asyncio, sys
from mcp import ClientSession, StdioServerParameters, stdio_client
async def main():
    params = StdioServerParameters(command=sys.executable, args=[sys.argv[1]])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        print([t.name for t in (await s.list_tools()).tools])
asyncio.run(main())
"""


def _config(folder: Path, server: Path, servers: int) -> Path:
    lines = ['[plugins]\nenable = ["mcp"]\n']
    for i in range(servers):
        lines.append(
            f'[tools.mcp.servers.s{i}]\ncommand = "{sys.executable}"\nargs = ["{server}"]\n'
        )
    path = folder / f"toolwire-{servers}.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


async def _bench_calls(folder: Path, server: Path, calls: int) -> dict[str, list[float]]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    import toolwire
    from toolwire import Host, ToolCallingLoop

    @toolwire.tool(side_effects="read_only")
    def add(a: Annotated[int, "First."], b: Annotated[int, "Second."]) -> int:
        """Add two numbers."""
        return a + b

    host = Host.load(_config(folder, server, 1))
    host.add_tool(add)
    times: dict[str, list[float]] = {"sdk": [], "toolwire-mcp": [], "in-process": []}
    params = StdioServerParameters(command=sys.executable, args=[str(server)])
    async with host, stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        assert "s0_add" in host.tools
        loop = ToolCallingLoop(host)
        loop.ledger = None  # the same pipeline for both toolwire variants, no disk writes
        for _ in range(20):  # warm up every path
            await session.call_tool("add", {"a": 1, "b": 2}, read_timeout_seconds=60)
            await loop.call("s0_add", {"a": 1, "b": 2})
            await loop.call("add", {"a": 1, "b": 2})
        for i in range(calls):
            started = time.perf_counter()
            # The same read timeout toolwire passes: the SDK's call without one measured slower.
            result = await session.call_tool("add", {"a": i, "b": 2}, read_timeout_seconds=60)
            times["sdk"].append(time.perf_counter() - started)
            assert result.structured_content == {"result": i + 2}

            started = time.perf_counter()
            via_mcp = await loop.call("s0_add", {"a": i, "b": 2})
            times["toolwire-mcp"].append(time.perf_counter() - started)
            assert via_mcp.content == str(i + 2), via_mcp

            started = time.perf_counter()
            direct = await loop.call("add", {"a": i, "b": 2})
            times["in-process"].append(time.perf_counter() - started)
            assert direct.data == i + 2 or direct.content == str(i + 2), direct
    return times


def _time_command(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{argv} failed: {done.stderr}")
    return elapsed


def _bench_listing(folder: Path, server: Path, runs: int) -> dict[str, list[float]]:
    three = _config(folder, server, 3)
    none = folder / "toolwire-none.toml"
    none.write_text('[plugins]\nenable = ["mcp"]\n', encoding="utf-8")
    sdk = folder / "sdk_list.py"
    sdk.write_text(SDK_LIST, encoding="utf-8")
    cli = [sys.executable, "-m", "toolwire", "--config"]
    variants = {
        "tools list, 3 servers": [*cli, str(three), "tools", "list"],
        "tools list, no server": [*cli, str(none), "tools", "list"],
        "SDK client, 1 server": [sys.executable, str(sdk), str(server)],
    }
    out = subprocess.run(variants["tools list, 3 servers"], capture_output=True, text=True)
    assert out.stdout.count("_add") == 3, out.stdout + out.stderr
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, argv in variants.items():
            times[name].append(_time_command(argv))
    return times


def _median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per variant")
    parser.add_argument("--runs", type=int, default=5, help="runs of each listing command")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        server = folder / "bench_server.py"
        server.write_text(textwrap.dedent(SERVER), encoding="utf-8")
        calls: dict[str, Any] = asyncio.run(_bench_calls(folder, server, args.calls))
        listing = _bench_listing(folder, server, args.runs)
    sdk, mcp_call, direct = (_median_ms(calls[k]) for k in ("sdk", "toolwire-mcp", "in-process"))
    print(f"one tool call, median of {args.calls} (interleaved):")
    print(f"  SDK ClientSession.call_tool (floor) {sdk:8.3f} ms")
    ratio = mcp_call / sdk
    verdict = "met" if ratio <= CALL_TARGET else "MISSED"
    print(
        f"  toolwire, MCP tool over stdio       {mcp_call:8.3f} ms  {ratio:5.2f}x floor "
        f"(target <= {CALL_TARGET:g}x: {verdict})"
    )
    print(
        f"  toolwire, same tool in process      {direct:8.3f} ms  "
        f"(MCP costs {mcp_call / direct:5.1f}x the in-process call)"
    )
    three, none, one = (
        _median_ms(listing[k])
        for k in ("tools list, 3 servers", "tools list, no server", "SDK client, 1 server")
    )
    print(f"start to output, median of {args.runs}:")
    print(f"  toolwire tools list, no server      {none:8.1f} ms")
    print(f"  SDK client, 1 server, list tools    {one:8.1f} ms")
    print(
        f"  toolwire tools list, 3 servers      {three:8.1f} ms  {three / one:5.2f}x one SDK "
        f"listing, {three / none:5.2f}x the bare CLI"
    )


if __name__ == "__main__":
    main()
