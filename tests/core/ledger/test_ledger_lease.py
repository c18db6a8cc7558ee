"""A call running in one process, seen from another on the same ledger (a SQLite file, or a
shared PostgreSQL database): it is running, not interrupted, and nobody runs it again while its
owner keeps its lease."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from loop_resume_tools import RUN_ID, SCRIPT, approve_in_a_child, effects, make_config, plugin

from toolwire import Host
from toolwire.config import LedgerConfig
from toolwire.loop import Approve, RunInProgress, ToolCallingLoop
from toolwire.testing import ScriptedModel


def _loop(workdir: Path, url: str | None) -> ToolCallingLoop:
    host = Host.load(config=make_config(workdir, url), plugins=[plugin(workdir)])
    return ToolCallingLoop(host, adapter=ScriptedModel(script=SCRIPT))


async def test_a_second_host_is_told_the_call_runs_and_cannot_run_it_again(
    tmp_path: Path, ledger_config: LedgerConfig
) -> None:
    url = ledger_config.url
    before = await _loop(tmp_path, url).run("charge 7, then wait", run_id=RUN_ID)
    [approval] = before.deferred
    (tmp_path / "block-charge").write_text("")
    first = approve_in_a_child(tmp_path, "charge.started", url)  # host A: the charge runs
    try:
        second = _loop(tmp_path, url)  # host B, on the same ledger
        with pytest.raises(RunInProgress, match=r"charge \(call .*\) is running in another "):
            second.load(RUN_ID)
        with pytest.raises(RunInProgress, match=r"since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"):
            await asyncio.wait_for(second.resume(before, {approval.call_id: Approve()}), 60)
        with pytest.raises(RunInProgress):
            await asyncio.wait_for(second.resume(RUN_ID, {approval.call_id: Approve()}), 60)
        assert effects(tmp_path) == ["charge"]
    finally:
        (tmp_path / "block-charge").unlink()
        _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err.decode()
    assert effects(tmp_path) == ["charge", "wait"]
    done = _loop(tmp_path, url).load(RUN_ID)
    assert done.stop_reason == "answered"
    assert [r.outcome for r in done.tool_calls] == ["executed", "executed"]
