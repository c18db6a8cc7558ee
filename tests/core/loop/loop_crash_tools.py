"""Tools of the ledger crash test; each appends its name to ``effects.log`` in a work directory.

While ``block`` exists in the work directory, ``charge`` and ``fetch`` write a marker and wait
forever (until the process is killed); without it they return at once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import toolwire
from toolwire.config import Config, LedgerConfig, LoopConfig
from toolwire.testing import tool_call

RUN_ID = "run_crash_test"


def make_tools(workdir: Path) -> list[toolwire.Tool]:
    """pay and note (not idempotent, quick), charge (not idempotent, blocks), fetch
    (idempotent, blocks)."""

    def effect(name: str) -> None:
        with (workdir / "effects.log").open("a") as log:
            log.write(name + "\n")

    async def block(name: str) -> None:
        if (workdir / "block").exists():
            (workdir / f"{name}.started").write_text("yes")
            await asyncio.sleep(3600)

    @toolwire.tool
    async def pay(amount: int) -> str:
        """Pay an amount."""
        effect("pay")
        return f"paid {amount}"

    @toolwire.tool
    async def charge(amount: int) -> str:
        """Charge a card."""
        effect("charge")
        await block("charge")
        return f"charged {amount}"

    @toolwire.tool(idempotent=True)
    async def fetch(key: str) -> str:
        """Fetch a value."""
        effect("fetch")
        await block("fetch")
        return f"value of {key}"

    @toolwire.tool
    async def note(text: str) -> str:
        """Write a note."""
        effect("note")
        return "noted"

    return [pay, charge, fetch, note]


def make_config(workdir: Path) -> Config:
    """Two calls at once, the ledger in the work directory."""
    return Config(
        loop=LoopConfig(concurrency=2),
        ledger=LedgerConfig(path=str(workdir / "ledger.sqlite3")),
    )


def plugin(workdir: Path) -> Any:
    """A plugin object registering the tools."""
    tools = make_tools(workdir)

    class CrashTools:
        __name__ = "crash_tools"

        @toolwire.hookimpl
        def toolwire_tools(self, settings: Any) -> list[toolwire.Tool]:
            return tools

    return CrashTools()


SCRIPT = [
    [
        tool_call("pay", {"amount": 5}),
        tool_call("charge", {"amount": 7}),
        tool_call("fetch", {"key": "k"}),
        tool_call("note", {"text": "hello"}),
    ],
    "All done.",
]
