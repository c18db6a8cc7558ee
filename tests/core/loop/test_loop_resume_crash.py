"""Resuming against the ledger: a resume killed with -9 while an approved call runs, or just
after it settled, never runs the call again without a fresh decision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from loop_resume_tools import (
    RUN_ID,
    SCRIPT,
    approve_in_a_child_killed_at,
    effects,
    make_config,
    plugin,
)
from loop_support import assert_no_orphans, make_host, scripted_loop
from sqlite_files import sqlite_file

import toolwire
from toolwire import Host, Retry
from toolwire.loop import Approve, Deny, Run, ToolCallingLoop
from toolwire.testing import ScriptedModel, tool_call


def _loop(workdir: Path) -> ToolCallingLoop:
    host = Host.load(config=make_config(workdir), plugins=[plugin(workdir)])
    return ToolCallingLoop(host, adapter=ScriptedModel(script=SCRIPT))


async def _deferred_run(workdir: Path) -> Run:
    run = await _loop(workdir).run("charge 7, then wait", run_id=RUN_ID)
    assert run.stop_reason == "deferred"
    assert [(d.tool, d.reason) for d in run.deferred] == [("charge", "approval")]
    return run


async def test_a_resume_killed_while_the_approved_call_runs_asks_again(tmp_path: Path) -> None:
    before = await _deferred_run(tmp_path)
    (tmp_path / "block-charge").write_text("")
    approve_in_a_child_killed_at(tmp_path, "charge.started")
    assert effects(tmp_path) == ["charge"]
    (tmp_path / "block-charge").unlink()

    loop = _loop(tmp_path)
    loaded = loop.load(RUN_ID)
    assert loaded.stop_reason == "interrupted"
    [request] = loaded.deferred
    assert (request.tool, request.reason) == ("charge", "interrupted")
    assert request.detail.startswith("approved, charge started at ")
    assert "may have taken effect" in request.detail

    # The approval given before the crash, on the run as it was then, is no answer now.
    stale = await loop.resume(before, {request.call_id: Approve()})
    assert effects(tmp_path) == ["charge"]
    assert stale.stop_reason == "deferred"
    assert [(d.call_id, d.reason) for d in stale.deferred] == [(request.call_id, "interrupted")]
    assert_no_orphans(stale)
    assert loop.load(RUN_ID).deferred == stale.deferred

    # A fresh decision on the interrupted request runs it again, knowingly.
    done = await loop.resume(loop.load(RUN_ID), {request.call_id: Approve()})
    assert effects(tmp_path) == ["charge", "charge", "wait"]
    assert done.stop_reason == "answered"
    assert_no_orphans(done, allow_deferred=False)


@pytest.mark.parametrize("decided_on", ["the run loaded after the crash", "the run before it"])
async def test_a_call_settled_before_the_kill_is_never_run_again(
    tmp_path: Path, decided_on: str
) -> None:
    before = await _deferred_run(tmp_path)
    (tmp_path / "block-wait").write_text("")
    approve_in_a_child_killed_at(tmp_path, "wait.started")  # the round after the charge
    assert effects(tmp_path) == ["charge", "wait"]
    (tmp_path / "block-wait").unlink()

    loop = _loop(tmp_path)
    loaded = loop.load(RUN_ID)
    assert loaded.stop_reason == "interrupted"
    assert loaded.deferred == ()  # the ledger shows the charge settled: nothing to decide
    call_id = before.deferred[0].call_id

    run = before if decided_on == "the run before it" else loaded
    done = await loop.resume(run, {call_id: Approve()})
    assert effects(tmp_path).count("charge") == 1
    assert done.stop_reason == "answered"
    [charge] = [r for r in done.tool_calls if r.tool == "charge"]
    assert charge.outcome == "recovered"
    assert charge.result is not None
    assert charge.result.content == "charged 7"
    assert_no_orphans(done, allow_deferred=False)


async def test_a_settled_call_is_not_denied_afterwards(tmp_path: Path) -> None:
    before = await _deferred_run(tmp_path)
    (tmp_path / "block-wait").write_text("")
    approve_in_a_child_killed_at(tmp_path, "wait.started")
    (tmp_path / "block-wait").unlink()
    loop = _loop(tmp_path)
    done = await loop.resume(before, {before.deferred[0].call_id: Deny("no")})
    [charge] = [r for r in done.tool_calls if r.tool == "charge"]
    assert charge.outcome == "recovered"  # it ran: telling the model "denied" would be false
    assert effects(tmp_path).count("charge") == 1


async def test_a_resume_stores_what_to_recover_from_before_the_call_starts(
    tmp_path: Path,
) -> None:
    seen: list[tuple[str, str]] = []
    db_path = tmp_path / "ledger.sqlite3"

    @toolwire.tool(requires_approval=True)
    def send(to: str) -> str:
        """Send a message."""
        with sqlite_file(db_path) as db:
            [(snapshot,)] = db.execute("SELECT head FROM runs")
            [(state,)] = db.execute("SELECT state FROM calls")
        seen.append((json.loads(snapshot)["stop_reason"], state))
        return "sent"

    host = make_host(tmp_path, [send])
    loop, _ = scripted_loop(host, [tool_call("send", {"to": "a"}), "ok"])
    run = await loop.run("send it")
    assert run.stop_reason == "deferred"
    done = await loop.resume(run, {run.deferred[0].call_id: Approve()})
    assert done.stop_reason == "answered"
    assert seen == [("interrupted", "started")]


async def test_a_decision_from_before_the_crash_given_by_run_id_asks_again(
    tmp_path: Path,
) -> None:
    """A caller that keeps its decision and gives it again by run id after the crash: it was
    taken on the approval request, not on the interrupted one, so the call waits again."""
    before = await _deferred_run(tmp_path)
    [approval] = before.deferred
    assert approval.attempt == 1
    (tmp_path / "block-charge").write_text("")
    approve_in_a_child_killed_at(tmp_path, "charge.started")
    (tmp_path / "block-charge").unlink()

    loop = _loop(tmp_path)
    for decision in (Approve(), Deny("no"), Approve(attempt=1), Retry("again")):
        again = await loop.resume(RUN_ID, {approval.call_id: decision})
        assert effects(tmp_path) == ["charge"]
        assert again.stop_reason == "deferred"
        [request] = again.deferred
        assert (request.call_id, request.reason, request.attempt) == (
            approval.call_id,
            "interrupted",
            2,
        )
        assert_no_orphans(again)

    # A decision naming the interrupted request runs the call again, knowingly.
    done = await loop.resume(RUN_ID, {approval.call_id: Approve(attempt=2)})
    assert effects(tmp_path) == ["charge", "charge", "wait"]
    assert done.stop_reason == "answered"
    assert_no_orphans(done, allow_deferred=False)


async def test_a_run_given_from_before_two_crashes_does_not_take_the_request_back(
    tmp_path: Path,
) -> None:
    """The call was approved, killed, approved again on its interrupted request, killed again:
    it waits on a third request. A resume with the run from before both crashes goes on from
    the ledger's record, so that third request stands, and a decision kept for the second one
    does not run the call a third time."""
    before = await _deferred_run(tmp_path)
    call_id = before.deferred[0].call_id
    (tmp_path / "block-charge").write_text("")
    approve_in_a_child_killed_at(tmp_path, "charge.started")
    (tmp_path / "charge.started").unlink()
    approve_in_a_child_killed_at(tmp_path, "charge.started")  # on the interrupted request
    (tmp_path / "block-charge").unlink()
    assert effects(tmp_path) == ["charge", "charge"]

    loop = _loop(tmp_path)
    assert [d.attempt for d in loop.load(RUN_ID).deferred] == [3]
    again = await loop.resume(before, {call_id: Deny("no")})
    assert [(d.reason, d.attempt) for d in again.deferred] == [("interrupted", 3)]
    assert [d.attempt for d in loop.load(RUN_ID).deferred] == [3]
    kept = await loop.resume(RUN_ID, {call_id: Approve(attempt=2)})
    assert kept.stop_reason == "deferred"
    assert effects(tmp_path) == ["charge", "charge"]
    assert_no_orphans(kept)
