"""Benchmark: a 100 KB tool argument streamed in small deltas, rendered live by the web chat.

Prints, for 10 KB and 100 KB of argument text streamed in 16-character deltas by a loopback fake
provider as fast as it can:

- receive: from sending the turn to the host holding the complete call, with no interface;
- page: from pressing Enter in the chat page (headless Chromium) to the page showing the whole
  argument in its card;

then page / receive for each size, and how the page time grows from 10 KB to 100 KB (10x the
text: linear is about 10x, a page that re-rendered the value on every delta would be ~100x).
Wall times, median of a few runs; the browser is Debian's chromium, never a download.

Run: ``python bench/ui.py`` (``--check`` exits 1 when the page grows worse than linearly).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import toolwire
from toolwire import Host, load_config
from toolwire.events import ToolCallCompleted
from toolwire.loop import ToolCallingLoop
from toolwire.testing import FakeOpenAIChatServer, tool_call
from toolwire_webui import WebServer

CHUNK = 16
RUNS = 3
MAX_GROWTH = 15.0  # 10x the text may take at most 15x the page time
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
_WORDS = ("config", "résumé", "東京", "emoji 😀", 'quote "in"', "tab\there", "line\nbreak", "x\\y")


@toolwire.tool(side_effects=["read_only"])
def keep_text(text: str) -> str:
    """Keep a text.

    Args:
        text: The text.
    """
    return f"kept {len(text)} characters"


class _Tools:
    @toolwire.hookimpl
    def toolwire_tools(self) -> list[toolwire.Tool]:
        return [keep_text]


def argument_text(size: int) -> str:
    """A text whose JSON string form is at least ``size`` characters."""
    words: list[str] = []
    length = 0
    i = 0
    while length < size:
        word = _WORDS[i % len(_WORDS)]
        words.append(word)
        length += len(json.dumps(word, ensure_ascii=False)) - 1
        i += 1
    return " ".join(words)


def host_for(workdir: Path, base_url: str) -> Host:
    config = workdir / "toolwire.toml"
    config.write_text(
        '[plugins]\nenable = ["openai"]\n'
        f'[provider]\nadapter = "openai-chat"\nbase_url = "{base_url}"\nmodel = "m"\n'
        f"stream = true\n[ledger]\nenabled = false\n",
        encoding="utf-8",
    )
    return Host.load(load_config(config), plugins=[_Tools()])


async def receive_seconds(workdir: Path, text: str) -> float:
    script = [tool_call("keep_text", {"text": text}), "ok"]
    async with FakeOpenAIChatServer(script, chunk_size=CHUNK) as provider:
        host = host_for(workdir, provider.base_url)
        try:
            start = time.perf_counter()
            elapsed = 0.0
            async for event in ToolCallingLoop(host).stream("keep this"):
                if isinstance(event, ToolCallCompleted):
                    elapsed = time.perf_counter() - start
            return elapsed
        finally:
            await host.aclose()


async def page_seconds(workdir: Path, text: str, browser: Any) -> float:
    script = [tool_call("keep_text", {"text": text}), "ok"]
    async with FakeOpenAIChatServer(script, chunk_size=CHUNK) as provider:
        host = host_for(workdir, provider.base_url)
        server = WebServer(host, port=0, database=":memory:", cards_collapsed=False)
        await server.start()
        page = await browser.new_page()
        try:
            await page.goto(server.url)
            await page.fill("#prompt", "keep this")
            start = time.perf_counter()
            await page.press("#prompt", "Enter")
            # data-status leaves "streaming" when the complete call arrived (an O(1) check).
            await page.wait_for_function(
                "() => { const c = document.querySelector('.card');"
                " return c && c.dataset.status !== 'streaming'; }",
                polling="raf",
                timeout=120_000,
            )
            elapsed = time.perf_counter() - start
            shown = await page.evaluate(
                "() => document.querySelector('.arg-value[data-key=text]').textContent"
            )
            if shown != text:
                raise SystemExit("the page did not show the argument exactly")
            return elapsed
        finally:
            await page.close()
            await server.close()
            await host.aclose()


async def main(check: bool) -> int:
    if not Path(CHROMIUM).exists():  # noqa: ASYNC240 (one stat before anything runs)
        print(f"bench/ui.py: skipped, {CHROMIUM} is missing (apt-get install -y chromium)")
        return 0
    from playwright.async_api import async_playwright

    results: dict[int, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, args=FLAGS, headless=True
            )
            try:
                for size in (10_000, 100_000):
                    text = argument_text(size)
                    receive = [await receive_seconds(workdir, text) for _ in range(RUNS)]
                    shown = [await page_seconds(workdir, text, browser) for _ in range(RUNS)]
                    results[size] = (statistics.median(receive), statistics.median(shown))
            finally:
                await browser.close()
    deltas = {size: -(-len(json.dumps(argument_text(size))) // CHUNK) for size in results}
    for size, (receive, shown) in results.items():
        print(
            f"{size // 1000:>4} KB in ~{deltas[size]} deltas: receive {receive * 1000:7.1f} ms   "
            f"page {shown * 1000:7.1f} ms   page / receive {shown / receive:5.2f}"
        )
    growth = results[100_000][1] / results[10_000][1]
    print(f"page time, 100 KB / 10 KB: {growth:.1f}x (10x the text; floor {MAX_GROWTH:g}x)")
    return 1 if check and growth > MAX_GROWTH else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a floor is missed")
    sys.exit(asyncio.run(main(parser.parse_args().check)))
