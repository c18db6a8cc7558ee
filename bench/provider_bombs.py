"""Benchmark: the memory a hostile provider can make the host hold.

Each case runs in a fresh child process against a loopback aiohttp server and reports the growth
of the process's peak resident memory (``ru_maxrss``) while the transport reads the answer:

- ``gzip bomb``: a JSON answer of 1 GiB of zeros sent gzip-compressed (about 1 MiB on the wire),
  read with the default ``provider.max_response_bytes`` (64 MiB);
- ``endless SSE line``: a stream that never ends its first line, read with the default
  ``provider.max_sse_line_chars`` (16 Mi characters);
- ``endless SSE event``: a stream of data lines that never ends its event, read with the default
  ``provider.max_sse_event_chars`` (32 Mi characters).

The floor is the cap: growth at most ``GROWTH_FLOOR`` times the cap in bytes (before the caps,
the bomb and the endless line grew until the machine ran out of memory). Each case also prints
the error the host reports.

Run: ``python bench/provider_bombs.py`` (``--check`` exits with status 1 when a floor is missed).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any

GROWTH_FLOOR = 4.0
CASES = ("gzip bomb", "endless SSE line", "endless SSE event")


def _peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def _gzip_bomb(size: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b"0" * (1024 * 1024)
    parts = [compressor.compress(b'{"pad": "')]
    parts += [compressor.compress(block) for _ in range(size // len(block))]
    parts += [compressor.compress(b'"}'), compressor.flush()]
    return b"".join(parts)


async def _run_case(case: str) -> tuple[int, int, str]:
    """The cap (bytes), the peak growth (bytes) and the error of one case."""
    from aiohttp import web

    from toolwire.adapters import ProviderError
    from toolwire.config import ProviderConfig
    from toolwire.http._sse import SSEEvent
    from toolwire.http._transport import ProviderRequest, Transport

    config = ProviderConfig(max_retries=0, read_timeout=60.0, total_timeout=600.0)
    bomb = _gzip_bomb(1024 * 1024 * 1024) if case == "gzip bomb" else b""

    async def answer(request: web.Request) -> web.StreamResponse:
        if case == "gzip bomb":
            return web.Response(
                body=bomb,
                headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
            )
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        chunk = b"a" * 65536 if case == "endless SSE line" else b"data: " + b"a" * 65530 + b"\n"
        try:
            await response.write(b"data: " if case == "endless SSE line" else b"")
            while True:
                await response.write(chunk)
        except (ConnectionError, RuntimeError):
            pass
        return response

    app = web.Application()
    app.router.add_post("/v1/x", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1/x"

    async def consume(events: AsyncIterator[SSEEvent], emit: Callable[[Any], None]) -> None:
        async for _ in events:
            pass

    caps = {
        "gzip bomb": config.max_response_bytes,
        # Characters of decoded text: Python keeps ASCII text at one byte a character.
        "endless SSE line": config.max_sse_line_chars,
        "endless SSE event": config.max_sse_event_chars,
    }
    before = _peak_bytes()
    error = "no error"
    async with Transport(config) as transport:
        try:
            if case == "gzip bomb":
                await transport.post_json(ProviderRequest(url, {}, "bench"))
            else:
                await transport.consume_sse(ProviderRequest(url, {}, "bench"), consume)
        except ProviderError as exc:
            error = str(exc)
    growth = _peak_bytes() - before
    await runner.cleanup()
    return caps[case], growth, error


def _child(case: str) -> int:
    cap, growth, error = asyncio.run(_run_case(case))
    print(f"{cap}\t{growth}\t{error}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a floor is missed")
    parser.add_argument("--case", choices=CASES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.case:
        return _child(args.case)
    print(f"{'case':<20} {'cap MiB':>8} {'peak growth MiB':>16} {'growth/cap':>11}")
    failed = False
    for case in CASES:
        done = subprocess.run(
            [sys.executable, __file__, "--case", case],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
        cap_text, growth_text, error = done.stdout.strip().split("\t", 2)
        cap, growth = int(cap_text), int(growth_text)
        ratio = growth / cap
        bad = ratio > GROWTH_FLOOR or error == "no error"
        failed |= bad
        print(
            f"{case:<20} {cap / 2**20:8.0f} {growth / 2**20:16.1f} {ratio:10.2f}x"
            + ("  ABOVE FLOOR" if bad else "")
        )
        print(f"    {error}")
    print(f"floor: peak growth <= {GROWTH_FLOOR}x the cap: " + ("MISSED" if failed else "ok"))
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
