"""Deferred calls and resume: approve, approve with edits, deny, supply, unknown ids, external."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest
from loop_support import (
    assert_no_orphans,
    events_of,
    make_host,
    result_texts,
    scripted_loop,
)

import toolwire
from toolwire import ToolResult, TrustLevel
from toolwire.config import ProviderConfig
from toolwire.loop import Approve, Deny, Run, Supply, ToolCallingLoop
from toolwire.messages import ToolResultMessage
from toolwire.testing import tool_call

deleted: list[str] = []


@toolwire.tool(requires_approval=True)
def delete_file(path: Annotated[str, "The file to delete."]) -> str:
    """Delete a file."""
    deleted.append(path)
    return f"deleted {path}"


@toolwire.tool
def list_files() -> str:
    """List files."""
    return "a.txt b.txt"


calendar = toolwire.Tool.from_schema(
    name="calendar",
    description="The user's calendar, read by the calling application.",
    parameters={"type": "object", "properties": {"day": {"type": "string"}}, "required": ["day"]},
    external=True,
)


@pytest.fixture(autouse=True)
def _reset() -> None:
    deleted.clear()


def _script() -> list[Any]:
    return [
        [
            tool_call("list_files"),
            tool_call("delete_file", {"path": "a.txt"}),
            tool_call("delete_file", {"path": "b.txt"}),
        ],
        "Done.",
    ]


async def _deferred_run(tmp_path: Path) -> tuple[ToolCallingLoop, Run]:
    host = make_host(tmp_path, [delete_file, list_files, calendar])
    loop, _ = scripted_loop(host, _script())
    run = await loop.run("clean up")
    return loop, run


async def test_calls_needing_approval_end_the_run_deferred(tmp_path: Path) -> None:
    _, run = await _deferred_run(tmp_path)
    assert run.stop_reason == "deferred"
    assert [d.call_id for d in run.deferred] == ["call_1_1", "call_1_2"]
    assert run.deferred[0].arguments == {"path": "a.txt"}
    assert run.deferred[0].reason == "approval"
    assert "asks for approval" in run.deferred[0].detail
    assert deleted == []
    assert result_texts(run) == ["a.txt b.txt"]  # the other call of the turn ran
    assert [e.call_id for e in events_of(run, "tool_deferred")] == ["call_1_1", "call_1_2"]
    assert_no_orphans(run)


async def test_approval_round_trip_with_edit_and_denial(tmp_path: Path) -> None:
    loop, run = await _deferred_run(tmp_path)
    resumed = await loop.resume(
        run,
        {
            "call_1_1": Approve(arguments={"path": "a-copy.txt"}),
            "call_1_2": Deny("Keep b.txt, it is important."),
        },
    )
    assert resumed.stop_reason == "answered"
    assert resumed.text == "Done."
    assert deleted == ["a-copy.txt"]
    results = [m for m in resumed.messages if isinstance(m, ToolResultMessage)]
    assert [(m.call_id, m.result.status) for m in results] == [
        ("call_1_0", "ok"),
        ("call_1_1", "ok"),
        ("call_1_2", "denied"),
    ]
    assert results[2].result.content == "Keep b.txt, it is important."
    records = {r.call.id: r for r in resumed.tool_calls}
    assert records["call_1_1"].arguments == {"path": "a-copy.txt"}
    assert records["call_1_1"].call.arguments == {"path": "a.txt"}  # what the model sent
    assert records["call_1_2"].outcome == "denied"
    assert resumed.deferred == ()
    assert events_of(resumed, "run_started")[-1].resumed is True
    assert_no_orphans(resumed, allow_deferred=False)


async def test_plain_approval_runs_the_call(tmp_path: Path) -> None:
    loop, run = await _deferred_run(tmp_path)
    resumed = await loop.resume(run, {"call_1_1": Approve(), "call_1_2": Approve()})
    assert deleted == ["a.txt", "b.txt"]
    assert resumed.stop_reason == "answered"


async def test_edited_arguments_are_admitted_again(tmp_path: Path) -> None:
    loop, run = await _deferred_run(tmp_path)
    resumed = await loop.resume(
        run, {"call_1_1": Approve(arguments={"path": 7}), "call_1_2": Approve()}
    )
    assert deleted == ["b.txt"]
    assert "path" in result_texts(resumed)[1]
    assert events_of(resumed, "invalid_arguments")[0].call_id == "call_1_1"


async def test_partial_decisions_keep_the_rest_deferred(tmp_path: Path) -> None:
    loop, run = await _deferred_run(tmp_path)
    partly = await loop.resume(run, {"call_1_2": Approve()})
    assert partly.stop_reason == "deferred"
    assert [d.call_id for d in partly.deferred] == ["call_1_1"]
    assert deleted == ["b.txt"]
    assert_no_orphans(partly)
    done = await loop.resume(partly, {"call_1_1": Deny()})
    assert done.stop_reason == "answered"
    assert deleted == ["b.txt"]
    assert_no_orphans(done, allow_deferred=False)


async def test_unknown_call_ids_are_refused_naming_the_pending_ones(tmp_path: Path) -> None:
    loop, run = await _deferred_run(tmp_path)
    with pytest.raises(
        ValueError,
        match=r"no deferred call with id 'call_9'.*deferred calls: "
        r"call_1_1, call_1_2",
    ):
        await loop.resume(run, {"call_9": Approve()})
    with pytest.raises(ValueError, match="expected Approve, Deny, Supply or Retry"):
        await loop.resume(run, {"call_1_1": "yes"})  # type: ignore[dict-item]


async def test_an_answered_run_cannot_be_resumed(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    loop, _ = scripted_loop(host, ["hi"])
    run = await loop.run("go")
    with pytest.raises(ValueError, match="already answered"):
        await loop.resume(run, {})


async def test_external_tools_are_deferred_and_supplied(tmp_path: Path) -> None:
    host = make_host(tmp_path, [calendar])
    loop, model = scripted_loop(host, [tool_call("calendar", {"day": "monday"}), "Busy."])
    run = await loop.run("am I free?")
    [request] = run.deferred
    assert (request.tool, request.reason, request.arguments) == (
        "calendar",
        "external",
        {"day": "monday"},
    )
    with pytest.raises(ValueError, match=r"external tool 'calendar'.*Supply"):
        await loop.resume(run, {request.call_id: Approve()})
    done = await loop.resume(run, {request.call_id: Supply("9:00 dentist")})
    assert done.text == "Busy."
    assert result_texts(done) == ["9:00 dentist"]
    assert done.tool_calls[0].outcome == "supplied"
    last_request = model.requests[-1]
    assert isinstance(last_request.messages[-1], ToolResultMessage)


async def test_resume_keeps_the_trust_requirement(tmp_path: Path) -> None:
    @toolwire.tool
    def secret() -> ToolResult:
        """Read a secret."""
        return ToolResult.ok("s", required_trust=TrustLevel.HIGH)

    host = make_host(tmp_path, [secret, delete_file], provider=ProviderConfig(trust="high"))
    loop, _ = scripted_loop(
        host, [[tool_call("secret"), tool_call("delete_file", {"path": "x"})], "ok"]
    )
    run = await loop.run("go")
    assert run.required_trust == TrustLevel.HIGH
    weaker = make_host(tmp_path, [secret, delete_file], provider=ProviderConfig(trust="medium"))
    other, _ = scripted_loop(weaker, [[tool_call("secret")], "ok"])
    resumed = await other.resume(Run.from_json(run.to_json()), {"call_1_1": Approve()})
    assert resumed.stop_reason == "trust"
    assert resumed.required_trust == TrustLevel.HIGH
    assert deleted == ["x"]  # the approved call ran; the next round was refused
    assert_no_orphans(resumed, allow_deferred=False)


async def test_resume_by_id_from_the_ledger(tmp_path: Path) -> None:
    _loop, run = await _deferred_run(tmp_path)
    host = make_host(tmp_path, [delete_file, list_files, calendar])
    fresh, _ = scripted_loop(host, _script())
    loaded = fresh.load(run.id)
    assert loaded.stop_reason == "deferred"
    assert loaded.messages == run.messages
    done = await fresh.resume(run.id, {"call_1_1": Approve(), "call_1_2": Deny()})
    assert done.stop_reason == "answered"
    assert deleted == ["a.txt"]
    with pytest.raises(ValueError, match="has no run 'nope'"):
        fresh.load("nope")
