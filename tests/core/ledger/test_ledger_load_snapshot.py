"""``load`` reads a run's record and the calls of its last round in one snapshot, on a SQLite
file and on PostgreSQL: another process that takes the run into its next round while ``load``
reads is in neither, so a live call is never reported interrupted.

The race is made deterministic by running the other process from inside the read, where the
backend builds the run from its rows (``assemble``): after the record is read and before its
calls are. There the other process approves the run's waiting call, which runs, and starts the
next round's call, which waits (``block-note``) holding its lease.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from lifecycle_tools import make_loop

from toolwire.config import LedgerConfig
from toolwire.loop import Run, RunInProgress, ToolCallingLoop, _ledger_postgres, _ledger_sqlite

CHILD = Path(__file__).parent.parent / "loop" / "lifecycle_tools.py"
SCRIPT = [
    {"tool_calls": [{"name": "charge", "arguments": {"amount": 5}}]},
    {"tool_calls": [{"name": "note", "arguments": {"text": "a"}}]},
    "All done.",
]
BACKEND_MODULES: dict[str, ModuleType] = {
    "sqlite": _ledger_sqlite,
    "postgresql": _ledger_postgres,
}


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    """The lifecycle tools' work directory; ``note`` blocks there until the test ends."""
    (tmp_path / "script-run_0.json").write_text(json.dumps(SCRIPT))
    (tmp_path / "block-note").write_text("")
    yield tmp_path
    (tmp_path / "block-note").unlink(missing_ok=True)


def _location(config: LedgerConfig) -> str:
    location = config.url or config.path
    assert location is not None
    return location


def _deferred_run(workdir: Path, location: str) -> tuple[ToolCallingLoop, Run, Path]:
    """A loop, its run waiting for approval of round 1's ``charge``, and a plan approving it."""
    loop = make_loop(workdir, location)
    run = asyncio.run(loop.run("go", run_id="run_0"))
    assert (run.stop_reason, run.rounds, [d.tool for d in run.deferred]) == (
        "deferred",
        1,
        ["charge"],
    )
    plan = workdir / "plan.json"
    decisions = {d.call_id: ["approve", d.attempt] for d in run.deferred}
    plan.write_text(json.dumps({"decisions": decisions}))
    return loop, run, plan


def _wait_for(path: Path, child: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert child.poll() is None, f"the resuming process exited ({child.returncode})"
        assert time.monotonic() < deadline, f"{path.name} not written within 60 s"
        time.sleep(0.01)


def test_load_never_calls_a_run_interrupted_while_another_process_takes_it_on(
    backend: str,
    ledger_config: LedgerConfig,
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    location = _location(ledger_config)
    loop, stored, plan = _deferred_run(workdir, location)
    module = BACKEND_MODULES[backend]
    assemble = module.assemble
    children: list[subprocess.Popen[bytes]] = []

    def assemble_while_the_run_goes_on(*args: Any) -> Any:
        if not children:
            # Another process resumes the run: round 1's charge settles, round 2 is stored and
            # its note starts, holding its lease while it blocks.
            command = [sys.executable, str(CHILD), str(workdir), location, "run_0", str(plan)]
            children.append(subprocess.Popen(command))
            _wait_for(workdir / "note.started", children[0])
        return assemble(*args)

    monkeypatch.setattr(module, "assemble", assemble_while_the_run_goes_on)
    try:
        loaded: Run | RunInProgress
        try:
            loaded = loop.load("run_0")
        except RunInProgress as exc:
            loaded = exc
        if isinstance(loaded, RunInProgress):  # the snapshot after the other process wrote
            assert loaded.entry.tool == "note"
        else:
            # The snapshot before the other process wrote: the run as it was stored. Two reads
            # gave the old record with round 1's rows of after: "interrupted", nothing deferred.
            assert (loaded.stop_reason, loaded.rounds, loaded.deferred) == (
                stored.stop_reason,
                stored.rounds,
                stored.deferred,
            )
        assert children, "the other process never ran inside the read"
        monkeypatch.undo()
        with pytest.raises(RunInProgress, match=r"note \(call \S+\) is running in another process"):
            loop.load("run_0")
    finally:
        (workdir / "block-note").unlink(missing_ok=True)
        for child in children:
            child.wait(timeout=60)
    assert [c.returncode for c in children] == [0]
    assert loop.load("run_0").stop_reason == "answered"
