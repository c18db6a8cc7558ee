"""Make the pictures of the chats in docs/images: the web chat and ``toolwire chat``.

Run ``python docs/images/screenshots.py`` from a clone with the ``webui`` and ``openai`` packages
and the test extras installed (Playwright, Debian's ``chromium``, ``tmux``). Everything runs on
loopback: a fake OpenAI-compatible provider plays a scripted conversation against three small
tools defined here. It writes:

- ``webui-chat.png``: the web chat at 1280 px, light (the README's picture);
- ``webui-chat-phone-dark.png``: the same at 390 px, dark;
- ``terminal-chat.png``: ``toolwire chat`` in tmux at 100 columns, drawn by Chromium.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

import toolwire
from toolwire import Host, ToolContext, ToolResult, load_config
from toolwire.tools import Source

HERE = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
NOTE = "\n".join(
    [
        "Cards open as soon as the model starts a call.",
        "Arguments fill in key by key while they stream.",
        "Progress and elapsed time show even on a collapsed card.",
        "Approvals can be given for a conversation, or always.",
    ]
)
ANSWER = (
    "## What the docs say\n\n"
    "Tool calls show as **cards** that open while the model is still writing the arguments [1];"
    " a card keeps its progress bar and its time even when collapsed [2].\n\n"
    "- approve, edit or deny a call on its card\n"
    "- allow a tool *for this conversation* or always\n\n"
    "The check ran 4 steps without a problem:\n\n"
    "```text\ncheck: 4 of 4 steps passed\n```\n"
)


@toolwire.tool(side_effects=["read_only"], icon="🔎", title="Search the docs")
def search_docs(query: str) -> ToolResult:
    """Search the project's documentation.

    Args:
        query: What to look for.
    """
    return ToolResult.ok(
        f"2 passages about {query!r}.",
        sources=[
            Source("https://example.org/docs/cards", "Tool-call cards"),
            Source("https://example.org/docs/progress", "Progress and time"),
        ],
    )


@toolwire.tool(side_effects=["read_only"], icon="🧪", title="Run the check")
async def run_check(steps: int, context: ToolContext) -> str:
    """Run the project's check, reporting each step.

    Args:
        steps: How many steps.
    """
    for step in range(1, steps + 1):
        context.report_progress(f"step {step} of {steps}", step / steps)
        await asyncio.sleep(0.6)
    return f"check: {steps} of {steps} steps passed"


@toolwire.tool(
    side_effects=["writes_files"], requires_approval=True, icon="📝", title="Write a note"
)
def write_note(title: str, content: str) -> str:
    """Write a note (asks first).

    Args:
        title: The note's title.
        content: What it says.
    """
    return f"wrote {title!r} ({len(content)} characters)"


class DemoTools:
    @toolwire.hookimpl
    def toolwire_tools(self) -> list[toolwire.Tool]:
        return [search_docs, run_check, write_note]


def script() -> list[Any]:
    from toolwire.testing import Reply, tool_call

    return [
        Reply(
            turn=[
                tool_call("search_docs", {"query": "tool cards"}),
                tool_call("run_check", {"steps": 4}),
            ],
            pace=0.01,
        ),
        ANSWER,
        Reply(turn=tool_call("write_note", {"title": "Tool cards", "content": NOTE}), pace=0.01),
        "Noted.",
    ]


def write_config(folder: Path, base_url: str) -> Path:
    config = folder / "toolwire.toml"
    config.write_text(
        '[plugins]\nenable = ["openai"]\n'
        '[provider]\nadapter = "openai-chat"\n'
        f'base_url = "{base_url}"\nmodel = "demo"\nstream = true\n'
        f'[ledger]\npath = "{folder / "ledger.sqlite3"}"\n',
        encoding="utf-8",
    )
    return config


# -- the web chat -------------------------------------------------------------------------------


async def web(folder: Path) -> None:
    from playwright.async_api import async_playwright

    from toolwire.testing import FakeOpenAIChatServer
    from toolwire_webui import WebServer

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        looks: tuple[tuple[str, int, int, Literal["light", "dark"]], ...] = (
            ("webui-chat.png", 1280, 1020, "light"),
            ("webui-chat-phone-dark.png", 390, 844, "dark"),
        )
        for name, width, height, scheme in looks:
            async with FakeOpenAIChatServer(script(), chunk_size=6) as provider:
                config = write_config(folder, provider.base_url)
                host = Host.load(load_config(config), plugins=[DemoTools()])
                server = WebServer(host, port=0, database=":memory:", grants=folder / "grants.toml")
                await server.start()
                context = await browser.new_context(
                    viewport={"width": width, "height": height}, color_scheme=scheme
                )
                page = await context.new_page()
                try:
                    await page.goto(server.url)
                    await page.fill(
                        "#prompt", "What do the docs say about tool cards? Then run the check."
                    )
                    await page.press("#prompt", "Enter")
                    await page.wait_for_selector(".answer-sources")
                    await page.fill("#prompt", "Write that down as a note.")
                    await page.press("#prompt", "Enter")
                    await page.wait_for_selector('.card[data-status="awaiting"]')
                    await page.fill("#prompt", "And keep it short next time")
                    await page.evaluate(
                        "() => { const t = document.getElementById('transcript');"
                        " t.scrollTop = t.scrollHeight; }"
                    )
                    await page.wait_for_function(
                        "() => /tokens/.test(document.getElementById('token-count').textContent)"
                        " && document.getElementById('token-count').textContent !== '≈ 0 tokens'"
                    )
                    await page.screenshot(path=str(HERE / name))
                finally:
                    await context.close()
                    await server.close()
                    await host.aclose()
        await browser.close()


# -- the terminal -------------------------------------------------------------------------------

_SGR = re.compile(r"\x1b\[([0-9;]*)m")
_COLOURS = {
    "31": "#e06c75",
    "32": "#98c379",
    "33": "#e5c07b",
    "35": "#c678dd",
    "36": "#56b6c2",
}


def ansi_to_html(text: str) -> str:
    """The SGR-coloured text tmux captured, as HTML spans (bold, dim, italic, underline, colour)."""
    out: list[str] = []
    state: dict[str, Any] = {}
    last = 0
    for match in _SGR.finditer(text):
        out.append(_span(text[last : match.start()], state))
        last = match.end()
        for code in (match.group(1) or "0").split(";"):
            if code in ("0", ""):
                state = {}
            elif code == "1":
                state["bold"] = True
            elif code == "2":
                state["dim"] = True
            elif code == "3":
                state["italic"] = True
            elif code == "4":
                state["underline"] = True
            elif code == "22":
                state.pop("bold", None)
                state.pop("dim", None)
            elif code == "23":
                state.pop("italic", None)
            elif code == "24":
                state.pop("underline", None)
            elif code == "39":
                state.pop("colour", None)
            elif code in _COLOURS:
                state["colour"] = _COLOURS[code]
    out.append(_span(text[last:], state))
    return "".join(out)


def _span(text: str, state: dict[str, Any]) -> str:
    if not text:
        return ""
    style = []
    if state.get("bold"):
        style.append("font-weight:bold")
    if state.get("dim"):
        style.append("opacity:0.6")
    if state.get("italic"):
        style.append("font-style:italic")
    if state.get("underline"):
        style.append("text-decoration:underline")
    if "colour" in state:
        style.append(f"color:{state['colour']}")
    escaped = html.escape(text)
    return f'<span style="{";".join(style)}">{escaped}</span>' if style else escaped


def tmux(socket: str, *args: str) -> str:
    done = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=True)
    return done.stdout


def wait_for(socket: str, text: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        shown = tmux(socket, "capture-pane", "-p", "-t", "chat")
        if text in shown:
            return shown
        if time.monotonic() > deadline:
            raise SystemExit(f"the terminal never showed {text!r}:\n{shown}")
        time.sleep(0.1)


async def terminal(folder: Path) -> None:
    from playwright.async_api import async_playwright

    from toolwire.testing import FakeOpenAIChatServer

    async with FakeOpenAIChatServer(script(), chunk_size=6) as provider:
        config = write_config(folder, provider.base_url)
        socket = f"toolwire-docs-{os.getpid()}"
        env = {
            "TERM": "xterm-256color",
            "XDG_CONFIG_HOME": str(folder / "config"),
            "XDG_STATE_HOME": str(folder / "state"),
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(folder),
            "LANG": "C.UTF-8",
        }
        command = shlex.join(
            [
                "env",
                *(f"{k}={v}" for k, v in env.items()),
                sys.executable,
                __file__,
                "--chat-child",
                str(config),
            ]
        )
        captured = await asyncio.to_thread(drive_terminal, socket, command)
    page_html = (
        "<!doctype html><meta charset=utf-8><style>body{margin:0;background:#1e2129}"
        "pre{margin:0;padding:14px 16px;color:#d7dae0;font:14px/1.35 'DejaVu Sans Mono',"
        "monospace}</style><pre>" + ansi_to_html(captured.rstrip("\n")) + "</pre>"
    )
    source = folder / "terminal.html"
    source.write_text(page_html, encoding="utf-8")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = await browser.new_page(viewport={"width": 860, "height": 600})
        await page.goto(source.as_uri())
        await page.locator("pre").screenshot(path=str(HERE / "terminal-chat.png"))
        await browser.close()


def wait_for_prompt(socket: str, timeout: float = 60.0) -> None:
    """Until the chat waits at an empty prompt."""
    deadline = time.monotonic() + timeout
    while True:
        lines = tmux(socket, "capture-pane", "-p", "-t", "chat").splitlines()
        shown = [line for line in lines if line.strip()]
        if any(line.strip() == "›" for line in shown[-2:]):  # above the toolbar
            return
        if time.monotonic() > deadline:
            raise SystemExit("the chat never waited at its prompt")
        time.sleep(0.1)


def drive_terminal(socket: str, command: str) -> str:
    """Start ``command`` in a tmux pane of 100 x 46, type the two questions, return the screen
    (with its colours) once the approval question shows."""
    tmux(
        socket,
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "chat",
        "-x",
        "100",
        "-y",
        "46",
        command,
    )
    try:
        for question, until in (
            ("What do the docs say about tool cards? Then run the check.", "Sources:"),
            ("Write that down as a note.", "Run it?"),
        ):
            wait_for_prompt(socket)
            tmux(socket, "send-keys", "-t", "chat", "-l", question)
            tmux(socket, "send-keys", "-t", "chat", "Enter")
            wait_for(socket, until)
        return tmux(socket, "capture-pane", "-p", "-e", "-t", "chat")
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], check=False)


def chat_child(config: str) -> int:
    from toolwire.cli._chat import run_chat

    return run_chat(Host.load(config, plugins=[DemoTools()]))


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        await web(Path(tmp))
    with tempfile.TemporaryDirectory() as tmp:
        await terminal(Path(tmp))
    print(json.dumps(sorted(p.name for p in HERE.glob("*.png"))))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--chat-child":
        sys.exit(chat_child(sys.argv[2]))
    if shutil.which("tmux") is None or not Path(CHROMIUM).exists():
        raise SystemExit("needs tmux and Debian's chromium")
    asyncio.run(main())
