"""Tools for the batch tests, as a plugin installable by entry point into a throwaway site dir.

Settings ``[tools.batchtest] workdir = "…"``. ``charge`` (not idempotent) appends the job's
prompt to ``effects.log``; ``wait`` (idempotent) sleeps the ``sleep=<s>`` of the prompt (with
``together=<n>``, first until ``n`` calls of it run at once in the process; the most that did is
kept in ``peak``), and when ``block`` exists in the work directory and ``effects.log`` has at
least as many lines as ``block`` says, leaves a ``waiting-*`` marker (process id and prompt) and
waits until ``block`` is removed; ``hang`` never returns; ``approve_me`` needs approval;
``heavy`` reports the process and the Ray resources it ran with; ``listing`` names the files of
the work directory as ``os.listdir`` gives them (a name that is not UTF-8 with surrogates).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import toolwire
from toolwire.messages import UserMessage
from toolwire.tools import ToolContext

PLUGIN_NAME = "batchtest"


def _workdir(context: ToolContext) -> Path:
    settings = context.settings or {}
    return Path(settings["workdir"])


def _prompt(context: ToolContext) -> str:
    for message in context.messages:
        if isinstance(message, UserMessage):
            return message.text
    return ""


@toolwire.tool
async def charge(amount: int, context: ToolContext) -> str:
    """Charge an amount (a side effect counted in effects.log)."""
    with (_workdir(context) / "effects.log").open("a", encoding="utf-8") as log:
        log.write(_prompt(context) + "\n")
    return f"charged {amount}"


@toolwire.tool(idempotent=True)
async def wait(context: ToolContext) -> str:
    """Wait a while."""
    workdir = _workdir(context)
    prompt = _prompt(context)
    block = workdir / "block"
    if block.exists():
        after = int(block.read_text() or "0")
        effects = workdir / "effects.log"
        count = len(effects.read_text().splitlines()) if effects.exists() else 0
        if count >= after:
            (workdir / f"waiting-{uuid.uuid4().hex}").write_text(f"{os.getpid()} {prompt}")
            # A file another process removes: there is nothing to await but the clock.
            while block.exists():  # noqa: ASYNC110
                await asyncio.sleep(0.05)
    global in_flight, peak, gathered
    in_flight += 1
    peak = max(peak, in_flight)
    try:
        together = re.search(r"together=([0-9]+)", prompt)
        if together:
            await _until_in_flight(int(together.group(1)))
        match = re.search(r"sleep=([0-9.]+)", prompt)
        if match:
            await asyncio.sleep(float(match.group(1)))
    finally:
        in_flight -= 1
        if in_flight == 0:
            gathered = False
    return f"waited for {prompt}"


in_flight = 0
"""Calls of ``wait`` running now in this process."""
peak = 0
"""The most calls of ``wait`` that ran at once in this process (a test sets it back to 0)."""
gathered = False
"""Whether the calls running now were, at one point, as many as ``together=`` asked: the first
to leave must not keep the others waiting for a count that its leaving lowered."""


async def _until_in_flight(count: int) -> None:
    """Wait until ``count`` calls of ``wait`` ran at once, for a minute at most (a hang bound:
    with fewer allowed at once, the test sees a peak below ``count``)."""
    global gathered
    deadline = asyncio.get_running_loop().time() + 60
    while not gathered and asyncio.get_running_loop().time() < deadline:
        gathered = in_flight >= count
        if not gathered:
            await asyncio.sleep(0.01)


@toolwire.tool(idempotent=True)
async def hang() -> str:
    """Never return."""
    await asyncio.sleep(3600)
    return "unreachable"


@toolwire.tool(idempotent=True, requires_approval=True)
async def approve_me() -> str:
    """Something a person must approve."""
    return "approved and ran"


@toolwire.tool(idempotent=True)
async def heavy(label: str, seconds: float = 0) -> dict[str, Any]:
    """Work hard for a while and say where."""
    await asyncio.sleep(seconds)
    cpus = None
    try:
        import ray

        if ray.is_initialized():
            cpus = ray.get_runtime_context().get_assigned_resources().get("CPU")
    except ImportError:
        pass
    return {"label": label, "pid": os.getpid(), "cpus": cpus}


@toolwire.tool(side_effects="read_only", idempotent=True)
async def listing(context: ToolContext) -> list[str]:
    """Name the files of the work directory."""
    return sorted(os.listdir(_workdir(context)))


@toolwire.hookimpl
def toolwire_tools(settings: Any) -> list[toolwire.Tool]:
    return [charge, wait, hang, approve_me, heavy, listing]


def install(site: Path) -> Path:
    """Copy this module into ``site`` with a dist-info whose entry point names it; returns
    ``site`` (put it on ``PYTHONPATH``)."""
    site.mkdir(parents=True, exist_ok=True)
    shutil.copy(__file__, site / "batch_tools.py")
    info = site / "toolwire_batchtest-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toolwire-batchtest\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[toolwire.plugins]\n{PLUGIN_NAME} = batch_tools\n", encoding="utf-8"
    )
    return site


KILL_SCRIPT = [
    {"tool_calls": [{"name": "charge", "arguments": {"amount": 5}}]},
    {"tool_calls": [{"name": "wait", "arguments": {}}]},
    {"text": "done"},
]


def write_config(
    workdir: Path,
    *,
    script: list[Any] | None = None,
    extra: str = "",
    plugins: tuple[str, ...] = (),
) -> Path:
    """A toolwire.toml in ``workdir``: the scripted model (the script, else schema-driven),
    these tools, the ledger in the work directory."""
    import json

    options = f"options = {{ script = {_toml(script)} }}\n" if script is not None else ""
    text = (
        f"[plugins]\nenable = {json.dumps([PLUGIN_NAME, *plugins])}\n"
        f'[provider]\nadapter = "scripted"\n{options}'
        f"[tools.{PLUGIN_NAME}]\nworkdir = {json.dumps(str(workdir))}\n"
        f"[ledger]\npath = {json.dumps(str(workdir / 'ledger.sqlite3'))}\n"
        f"{extra}"
    )
    path = workdir / "toolwire.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _toml(value: Any) -> str:
    import json

    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)
