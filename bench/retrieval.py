"""Overhead of toolwire.net.fetch against a plain aiohttp GET of the same loopback page.

Run: ``python bench/retrieval.py [--rounds N] [--fetches N]``. The page is served by a separate
process on 127.0.0.1, so the server's work is not counted against either client. Both sides reuse
one session (keep-alive) for all fetches and read the whole body. The safe path runs with the
server listed in ``private_hosts`` (as ``127.0.0.1:port``, so no name is resolved), and once more
through a host name (``localhost:port``), which it resolves and checks on every fetch while plain
aiohttp answers from its DNS cache. The four clients' fetches alternate, so that changes in machine
load fall on all of them alike. Prints wall-clock and client-CPU microseconds per fetch (median of
rounds) with ratios; the target is a wall-clock ratio of at most 1.3x on the 127.0.0.1 line.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

import aiohttp
from aiohttp import web

import toolwire.net

PAGE = ("<!doctype html><title>bench</title>" + "<p>retrieval benchmark page</p>" * 64).encode()
TARGET = 1.3


async def serve() -> None:
    """Serve the page on a random loopback port, print the port, run until stdin closes."""

    async def page(request: web.Request) -> web.Response:
        return web.Response(body=PAGE, content_type="text/html", charset="utf-8")

    app = web.Application()
    app.router.add_get("/page", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(runner.addresses[0][1], flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await runner.cleanup()


async def measure(port: int, rounds: int, fetches: int) -> dict[str, tuple[float, float]]:
    """Median wall and CPU microseconds per fetch for each client, fetches interleaved."""
    literal = f"http://127.0.0.1:{port}/page"
    named = f"http://localhost:{port}/page"
    policy = toolwire.net.RetrievalPolicy(private_hosts=[f"127.0.0.1:{port}", f"localhost:{port}"])
    results: dict[str, list[tuple[float, float]]] = {
        "plain": [],
        "safe": [],
        "plain name": [],
        "safe name": [],
    }
    async with (
        aiohttp.ClientSession() as plain,
        toolwire.net.open_session(policy) as guarded,
    ):

        def plain_get(url: str) -> Callable[[], Awaitable[int]]:
            async def once() -> int:
                async with plain.get(url) as response:
                    return len(await response.read())

            return once

        def safe_get(url: str) -> Callable[[], Awaitable[int]]:
            async def once() -> int:
                page = await toolwire.net.fetch(url, policy=policy, session=guarded)
                return len(page.body)

            return once

        clients = {
            "plain": plain_get(literal),
            "safe": safe_get(literal),
            "plain name": plain_get(named),
            "safe name": safe_get(named),
        }
        names = list(clients)
        for once in clients.values():  # warm up connections, caches and code paths
            for _ in range(50):
                await once()
        for round_number in range(rounds):
            # Fetches of the four clients alternate, starting with a different one each round, so
            # that changes in machine load fall on all of them alike.
            order = names[round_number % 4 :] + names[: round_number % 4]
            wall = dict.fromkeys(names, 0.0)
            cpu = dict.fromkeys(names, 0.0)
            for _ in range(fetches):
                for name in order:
                    start, start_cpu = time.perf_counter(), time.process_time()
                    size = await clients[name]()
                    wall[name] += time.perf_counter() - start
                    cpu[name] += time.process_time() - start_cpu
                    assert size == len(PAGE)
            for name in names:
                results[name].append((wall[name] / fetches * 1e6, cpu[name] / fetches * 1e6))
    return {
        name: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
        for name, values in results.items()
    }


def main() -> None:
    """Start the server process, measure, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--fetches", type=int, default=300)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve())
        return
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        figures = asyncio.run(measure(port, args.rounds, args.fetches))
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    print(
        f"retrieval overhead: GET of a {len(PAGE)}-byte loopback page, "
        f"median of {args.rounds} rounds x {args.fetches} fetches, one session per client"
    )
    print(f"  {'':38}{'wall us/fetch':>14}{'ratio':>8}{'client CPU us':>15}{'ratio':>8}")
    rows = [
        ("plain aiohttp GET, 127.0.0.1", "plain", "plain"),
        ("toolwire.net.fetch, 127.0.0.1", "safe", "plain"),
        ("plain aiohttp GET, localhost (cached)", "plain name", "plain name"),
        ("toolwire.net.fetch, localhost", "safe name", "plain name"),
    ]
    for label, name, base in rows:
        (wall, cpu), (base_wall, base_cpu) = figures[name], figures[base]
        print(f"  {label:38}{wall:14.1f}{wall / base_wall:7.2f}x{cpu:15.1f}{cpu / base_cpu:7.2f}x")
    ratio = figures["safe"][0] / figures["plain"][0]
    verdict = "within" if ratio <= TARGET else "OVER"
    print(f"  safe path wall-clock ratio {ratio:.2f}x: {verdict} the {TARGET}x target")


if __name__ == "__main__":
    main()
