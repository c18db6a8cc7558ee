"""Benchmark: a 100 KB tool argument streamed in small deltas, rendered live by the web chat and
by the terminal cards.

Prints, for 10 KB and 100 KB of argument text streamed in 16-character deltas by a loopback fake
provider as fast as it can:

- receive: from sending the turn to the host holding the complete call, with no interface;
- page: from pressing Enter in the chat page (headless Chromium) to the page showing the whole
  argument in its card, with the card collapsed (the default: its live line shows the tail of
  the value) and expanded;
- terminal: the same turn rendered by ``TerminalRenderer`` onto a real pseudo-terminal (its
  defaults: collapsed cards, colour; and ``--expanded``, every character written), until the
  complete call is on the screen; "render" is the time spent inside the renderer alone;

then page / receive and terminal / receive for each size, and how the page and the terminal
grow from 10 KB to 100 KB (10x the text: linear is about 10x, an interface that re-rendered the
value on every delta would be ~100x). Wall times, median of a few runs; the browser is Debian's
chromium, never a download (without it, only the terminal half runs).

Run: ``python bench/ui.py`` (``--check`` exits 1 when either grows worse than linearly;
``--runs N`` takes the median of N runs of each figure instead of 3).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import toolwire
from toolwire import Host, load_config
from toolwire.cli._render import TerminalRenderer
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


async def page_seconds(workdir: Path, text: str, browser: Any, *, collapsed: bool) -> float:
    script = [tool_call("keep_text", {"text": text}), "ok"]
    async with FakeOpenAIChatServer(script, chunk_size=CHUNK) as provider:
        host = host_for(workdir, provider.base_url)
        server = WebServer(
            host,
            port=0,
            database=":memory:",
            cards_collapsed=collapsed,
            grants=workdir / "grants.toml",
        )
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


class PseudoTerminal:
    """A real pty: the renderer writes to its terminal side, a thread drains the other side."""

    def __init__(self) -> None:
        self._master, slave = os.openpty()
        self.out = open(slave, "w", encoding="utf-8")  # noqa: SIM115 (closed in close())
        self.received = 0
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            self.received += len(chunk)

    def close(self) -> None:
        self.out.close()
        self._thread.join(5)
        os.close(self._master)


async def terminal_seconds(workdir: Path, text: str, *, expanded: bool) -> tuple[float, float]:
    """(until the complete call is rendered, time inside the renderer) for one turn."""
    script = [tool_call("keep_text", {"text": text}), "ok"]
    terminal = PseudoTerminal()
    async with FakeOpenAIChatServer(script, chunk_size=CHUNK) as provider:
        host = host_for(workdir, provider.base_url)
        renderer = TerminalRenderer(terminal.out, tool_of=host.tools.get, expanded=expanded)
        if not renderer.live:
            raise SystemExit("the pseudo-terminal is not a terminal")
        try:
            start = time.perf_counter()
            elapsed = rendering = 0.0
            async for event in ToolCallingLoop(host).stream("keep this"):
                before = time.perf_counter()
                renderer(event)
                rendering += time.perf_counter() - before
                if isinstance(event, ToolCallCompleted):
                    elapsed = time.perf_counter() - start
            return elapsed, rendering
        finally:
            await host.aclose()
            terminal.close()
            if expanded and terminal.received < len(text):
                raise SystemExit("the terminal did not get the whole argument")


def _growth(name: str, results: dict[int, float]) -> float:
    growth = results[100_000] / results[10_000]
    print(f"{name} time, 100 KB / 10 KB: {growth:.1f}x (10x the text; floor {MAX_GROWTH:g}x)")
    return growth


async def main(check: bool, runs: int = RUNS) -> int:
    sizes = (10_000, 100_000)
    texts = {size: argument_text(size) for size in sizes}
    deltas = {size: -(-len(json.dumps(texts[size])) // CHUNK) for size in sizes}
    receive: dict[int, float] = {}
    terminal: dict[bool, dict[int, tuple[float, float]]] = {False: {}, True: {}}
    page: dict[bool, dict[int, float]] = {True: {}, False: {}}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for size in sizes:
            receive[size] = statistics.median(
                [await receive_seconds(workdir, texts[size]) for _ in range(runs)]
            )
            for expanded in (False, True):
                terminal_runs = [
                    await terminal_seconds(workdir, texts[size], expanded=expanded)
                    for _ in range(runs)
                ]
                terminal[expanded][size] = (
                    statistics.median(r[0] for r in terminal_runs),
                    statistics.median(r[1] for r in terminal_runs),
                )
        browser_there = Path(CHROMIUM).exists()  # noqa: ASYNC240 (one stat)
        if browser_there:
            from playwright.async_api import async_playwright

            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(
                    executable_path=CHROMIUM, args=FLAGS, headless=True
                )
                try:
                    for collapsed in (True, False):
                        for size in sizes:
                            page_runs = [
                                await page_seconds(
                                    workdir, texts[size], browser, collapsed=collapsed
                                )
                                for _ in range(runs)
                            ]
                            page[collapsed][size] = statistics.median(page_runs)
                finally:
                    await browser.close()
    worst = 0.0
    for size in sizes:
        got = receive[size]
        print(f"{size // 1000:>4} KB in ~{deltas[size]} deltas: receive {got * 1000:7.1f} ms")
        for collapsed, label in ((True, "page    "), (False, "page exp")):
            if size in page[collapsed]:
                shown = page[collapsed][size]
                print(
                    f"       {label} {shown * 1000:7.1f} ms   {label.strip()} / receive "
                    f"{shown / got:5.2f}"
                )
        for expanded, label in ((False, "terminal"), (True, "expanded")):
            shown, rendering = terminal[expanded][size]
            print(
                f"       {label} {shown * 1000:7.1f} ms   {label} / receive {shown / got:5.2f}"
                f"   (render {rendering * 1000:6.1f} ms, render / receive {rendering / got:4.2f})"
            )
    if page[True]:
        worst = max(worst, _growth("page (collapsed card)", page[True]))
        worst = max(worst, _growth("page (expanded card)", page[False]))
    else:
        print(f"page: skipped, {CHROMIUM} is missing (apt-get install -y chromium)")
    for expanded, label in ((False, "terminal"), (True, "expanded terminal")):
        rendering = {size: terminal[expanded][size][1] for size in sizes}
        worst = max(worst, _growth(f"{label} render", rendering))
    return 1 if check and worst > MAX_GROWTH else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a floor is missed")
    parser.add_argument("--runs", type=int, default=RUNS, help="runs of each figure, the median")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.check, args.runs)))
