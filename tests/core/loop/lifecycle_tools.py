"""Tools, host and child process of the lifecycle's stateful tests.

Every tool appends ``<run id> <call id> <tool>`` to ``effects.log`` in a work directory when
it takes effect. ``charge`` needs approval and is not idempotent; ``note`` is not idempotent;
``fetch`` is idempotent; ``login`` is not idempotent and its ``password`` is sensitive. While
``block-<tool>`` exists in the work directory, that tool writes ``<tool>.started`` once it took
effect and waits until the file is removed (or the process is killed).

The script of each run's model is in ``script-<run id>.json`` (the scripted model's config
form), so every process that resumes the run answers the same conversation.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import toolwire
from toolwire import Host, ToolContext
from toolwire.adapters import ModelRequest
from toolwire.config import Config, LedgerConfig, TraceConfig
from toolwire.loop import Approve, Decision, Deny, Run, Supply, ToolCallingLoop
from toolwire.messages import AssistantMessage
from toolwire.testing import ScriptedModel

CANARY = "CANARY-secret-5512"
"""The password the model sends to ``login``: no output of any process may show it."""


def effects(workdir: Path) -> list[tuple[str, str, str]]:
    """The effects so far: ``(run id, call id, tool)``."""
    log = workdir / "effects.log"
    if not log.exists():
        return []
    return [tuple(line.split()) for line in log.read_text().splitlines()]  # type: ignore[misc]


def plugin(workdir: Path) -> Any:
    """A plugin object registering the four tools."""

    async def effect(name: str, context: ToolContext) -> None:
        with (workdir / "effects.log").open("a") as log:
            log.write(f"{context.run_id} {context.call_id} {name}\n")
        block = workdir / f"block-{name}"
        if block.exists():
            (workdir / f"{name}.started").write_text(str(os.getpid()))
            # The test removes the file (another process): nothing in this one to wait on.
            while block.exists():  # noqa: ASYNC110
                await asyncio.sleep(0.02)

    @toolwire.tool(requires_approval=True)
    async def charge(amount: int, context: ToolContext) -> str:
        """Charge a card.

        Args:
            amount: Cents.
        """
        await effect("charge", context)
        return f"charged {amount}"

    @toolwire.tool
    async def note(text: str, context: ToolContext) -> str:
        """Write a note.

        Args:
            text: The note.
        """
        await effect("note", context)
        return "noted"

    @toolwire.tool(idempotent=True)
    async def fetch(key: str, context: ToolContext) -> str:
        """Fetch a value.

        Args:
            key: Which.
        """
        await effect("fetch", context)
        return f"value of {key}"

    @toolwire.tool(sensitive_arguments=["password"])
    async def login(user: str, password: str, context: ToolContext) -> str:
        """Log in.

        Args:
            user: Who.
            password: Their password.
        """
        await effect("login", context)
        return f"welcome {user}"

    class LifecycleTools:
        __name__ = "lifecycle_tools"

        @toolwire.hookimpl
        def toolwire_tools(self, settings: Any) -> list[toolwire.Tool]:
            return [charge, note, fetch, login]

    return LifecycleTools()


def make_loop(workdir: Path, location: str) -> ToolCallingLoop:
    """A loop on a scripted model answering each run from its ``script-<run id>.json``, the
    ledger at ``location`` (a SQLite path or a PostgreSQL URL), and a trace of this process's
    runs."""
    ledger = LedgerConfig(url=location) if "://" in location else LedgerConfig(path=location)
    config = Config(
        ledger=ledger, trace=TraceConfig(path=str(workdir / f"trace-{os.getpid()}.jsonl"))
    )
    host = Host.load(config=config, plugins=[plugin(workdir)])

    def answer(request: ModelRequest) -> Any:
        script = json.loads((workdir / f"script-{request.run_id}.json").read_text())
        return script[sum(isinstance(m, AssistantMessage) for m in request.messages)]

    return ToolCallingLoop(host, adapter=ScriptedModel(script=answer))


def decisions_from(data: Mapping[str, Any]) -> dict[str, Decision]:
    """Decisions from their JSON form ``{call id: [kind, attempt]}``."""
    out: dict[str, Decision] = {}
    for call_id, (kind, attempt) in data.items():
        if kind == "approve":
            out[call_id] = Approve(attempt=attempt)
        elif kind == "deny":
            out[call_id] = Deny("not now", attempt=attempt)
        else:
            out[call_id] = Supply("supplied by the test", attempt=attempt)
    return out


def kill_at_write(loop: ToolCallingLoop, write: int, before: bool) -> None:
    """Kill this process with -9 just before or just after its ``write``-th ledger commit."""
    assert loop.ledger is not None
    store = loop.ledger.store
    count = 0

    def counted(name: str) -> None:
        real = getattr(store, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            nonlocal count
            count += 1
            if count == write and before:
                os.kill(os.getpid(), signal.SIGKILL)
            done = real(*args, **kwargs)
            if count == write:
                os.kill(os.getpid(), signal.SIGKILL)
            return done

        setattr(store, name, wrapper)

    counted("start")
    counted("write")


async def child(workdir: Path, location: str, run_id: str, plan: Mapping[str, Any]) -> None:
    """Resume ``run_id`` with the plan's decisions (given with the run as loaded, or by id),
    killed -9 at the plan's ledger write when it names one."""
    loop = make_loop(workdir, location)
    if plan.get("kill"):
        kill_at_write(loop, plan["kill"], plan.get("before", False))
    go = plan.get("go")
    if go is not None:  # racing another process: both load, then both resume at once
        run: Run | str = loop.load(run_id)
        (workdir / f"{go}.{os.getpid()}").write_text("")  # loaded: ready when the other is
        while not (workdir / go).exists():  # noqa: ASYNC110 (written by the test process)
            await asyncio.sleep(0.005)
    else:
        run = run_id if plan.get("by_id") else loop.load(run_id)
    await loop.resume(run, decisions_from(plan.get("decisions", {})))


if __name__ == "__main__":
    asyncio.run(
        child(
            Path(sys.argv[1]), sys.argv[2], sys.argv[3], json.loads(Path(sys.argv[4]).read_text())
        )
    )
