"""Tools of the resume crash tests; each appends its name to ``effects.log`` in a work directory.

``charge`` needs approval and is not idempotent; ``wait`` is idempotent. While
``block-<name>`` exists in the work directory, that tool writes ``<name>.started`` and waits
until the process is killed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import toolwire
from toolwire.config import Config, LedgerConfig
from toolwire.testing import tool_call

RUN_ID = "run_resume_crash"

SCRIPT = [tool_call("charge", {"amount": 7}), tool_call("wait", {}), "All done."]


def effects(workdir: Path) -> list[str]:
    """The side effects so far, in order."""
    log = workdir / "effects.log"
    return log.read_text().split() if log.exists() else []


def make_config(workdir: Path) -> Config:
    """The ledger in the work directory."""
    return Config(ledger=LedgerConfig(path=str(workdir / "ledger.sqlite3")))


def plugin(workdir: Path) -> Any:
    """A plugin object registering ``charge`` and ``wait``."""

    async def effect(name: str) -> None:
        with (workdir / "effects.log").open("a") as log:
            log.write(name + "\n")
        if (workdir / f"block-{name}").exists():
            (workdir / f"{name}.started").write_text("yes")
            await asyncio.sleep(3600)

    @toolwire.tool(requires_approval=True)
    async def charge(amount: int) -> str:
        """Charge a card."""
        await effect("charge")
        return f"charged {amount}"

    @toolwire.tool(idempotent=True)
    async def wait() -> str:
        """Wait for the charge to clear."""
        await effect("wait")
        return "cleared"

    class ResumeTools:
        __name__ = "resume_tools"

        @toolwire.hookimpl
        def toolwire_tools(self, settings: Any) -> list[toolwire.Tool]:
            return [charge, wait]

    return ResumeTools()
