"""Tools of the resume crash tests; each appends its name to ``effects.log`` in a work directory.

``charge`` needs approval and is not idempotent; ``wait`` is idempotent. When
``block-<name>`` exists in the work directory, that tool writes ``<name>.started`` and waits
until the file is removed (or the process is killed).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import toolwire
from toolwire.config import Config, LedgerConfig
from toolwire.testing import tool_call

CHILD = Path(__file__).with_name("loop_resume_child.py")

RUN_ID = "run_resume_crash"

SCRIPT = [tool_call("charge", {"amount": 7}), tool_call("wait", {}), "All done."]


def effects(workdir: Path) -> list[str]:
    """The side effects so far, in order."""
    log = workdir / "effects.log"
    return log.read_text().split() if log.exists() else []


def make_config(workdir: Path, url: str | None = None) -> Config:
    """The ledger in the work directory, or the PostgreSQL database at ``url``."""
    return Config(ledger=LedgerConfig(path=str(workdir / "ledger.sqlite3"), url=url))


def approve_in_a_child(
    workdir: Path, marker: str, url: str | None = None
) -> subprocess.Popen[bytes]:
    """Approve the deferred charge in a child process, returned once ``marker`` exists."""
    command = [sys.executable, str(CHILD), str(workdir), *([url] if url else [])]
    from waiting import until  # the test's side only: the child imports this module too

    child = subprocess.Popen(command, stderr=subprocess.PIPE)
    assert child.stderr is not None
    try:
        until((workdir / marker).exists, child, what=marker)
    except BaseException:
        child.kill()
        child.wait()
        child.stderr.close()
        raise
    return child


def approve_in_a_child_killed_at(workdir: Path, marker: str, url: str | None = None) -> None:
    """Approve the deferred charge in a child process; kill it with -9 once ``marker`` exists."""
    child = approve_in_a_child(workdir, marker, url)
    child.kill()
    child.wait()
    assert child.stderr is not None
    child.stderr.close()
    assert child.returncode == -9


def plugin(workdir: Path) -> Any:
    """A plugin object registering ``charge`` and ``wait``."""

    async def effect(name: str) -> None:
        with (workdir / "effects.log").open("a") as log:
            log.write(name + "\n")
        block = workdir / f"block-{name}"
        if block.exists():
            (workdir / f"{name}.started").write_text("yes")
            while block.exists():  # noqa: ASYNC110 (the test, another process, removes it)
                await asyncio.sleep(0.02)

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
