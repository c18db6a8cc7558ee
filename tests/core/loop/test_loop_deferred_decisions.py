"""Deferred calls answered with ``Retry`` (a decision on resume, from the approver, or on a call
that asked while it ran), and the run's external handler answering external and deferred calls
inline so that the run goes on."""

from __future__ import annotations

import asyncio
import logging
import pickle
from pathlib import Path
from typing import Annotated, Any

import pytest
from loop_support import (
    assert_no_orphans,
    events_of,
    evolve_loop,
    make_host,
    result_texts,
    scripted_loop,
)

import toolwire
from toolwire import Retry, ToolContext, ToolResult
from toolwire.loop import Approve, DeferredRequest, Deny, Run, Supply
from toolwire.messages import ToolResultMessage
from toolwire.testing import tool_call

ran: list[str] = []


@toolwire.tool(requires_approval=True)
def delete_file(path: Annotated[str, "The file to delete."]) -> str:
    """Delete a file."""
    ran.append(path)
    return f"deleted {path}"


@toolwire.tool
def transfer(amount: int, context: ToolContext) -> str:
    """Move money."""
    if amount > 100 and not context.approved:
        raise toolwire.ApprovalRequired(f"a transfer of {amount}")
    ran.append(f"transfer {amount}")
    return f"moved {amount}"


@toolwire.tool
def fax(number: str, context: ToolContext) -> str:
    """Send a fax (the night batch sends them unless approved now)."""
    if not context.approved:
        raise toolwire.CallDeferred("the night batch sends faxes")
    ran.append(f"fax {number}")
    return f"faxed {number}"


calendar = toolwire.Tool.from_schema(
    name="calendar",
    description="The user's calendar, read by the calling application.",
    parameters={
        "type": "object",
        "properties": {"day": {"type": "string"}, "token": {"type": "string"}},
        "required": ["day"],
    },
    external=True,
    sensitive_arguments=["token"],
)


@pytest.fixture(autouse=True)
def _reset() -> None:
    ran.clear()


def _last_results(model: Any) -> list[ToolResultMessage]:
    """The tool results at the end of the last request the model got."""
    messages = list(model.requests[-1].messages)
    results: list[ToolResultMessage] = []
    while messages and isinstance(messages[-1], ToolResultMessage):
        results.insert(0, messages.pop())
    return results


# -- Retry as a decision -----------------------------------------------------------------------


async def test_resume_with_retry_tells_the_model_to_call_again(tmp_path: Path) -> None:
    host = make_host(tmp_path, [delete_file])
    loop, model = scripted_loop(
        host,
        [
            tool_call("delete_file", {"path": "/etc/hosts"}),
            tool_call("delete_file", {"path": "tmp/old.log"}),
            "Done.",
        ],
    )
    run = await loop.run("clean up")
    [request] = run.deferred
    assert run.tool_calls_used == 0  # not counted while it waits

    retried = await loop.resume(run, {request.call_id: Retry("Only files under tmp/.")})
    assert ran == []  # the call was not run
    [answer] = _last_results(model)
    assert answer.call_id == request.call_id
    assert answer.result.status == "error"
    assert answer.result.retryable
    assert answer.result.model_text() == "Only files under tmp/."
    record = next(r for r in retried.tool_calls if r.call.id == request.call_id)
    assert record.outcome == "retry"
    assert retried.tool_calls_used == 1  # counted, like a call that raised Retry
    started = [e for e in events_of(retried, "tool_started") if e.call_id == request.call_id]
    assert [e.answer for e in started] == ["retry"]
    assert [e.call_id for e in events_of(retried, "tool_failed")] == [request.call_id]
    # The model called again, in the next round: that call waits for its own approval.
    assert retried.stop_reason == "deferred"
    [again] = retried.deferred
    assert again.call_id != request.call_id
    assert again.arguments == {"path": "tmp/old.log"}
    assert_no_orphans(retried)

    done = await loop.resume(retried, {again.call_id: Approve()})
    assert done.stop_reason == "answered"
    assert ran == ["tmp/old.log"]
    assert Run.from_json(done.to_json()).tool_calls[0].outcome == "retry"


async def test_an_approver_answers_retry_inline_and_the_run_goes_on(tmp_path: Path) -> None:
    host = make_host(tmp_path, [delete_file])
    loop, _ = scripted_loop(
        host,
        [
            tool_call("delete_file", {"path": "/etc/hosts"}),
            tool_call("delete_file", {"path": "tmp/old.log"}),
            "Done.",
        ],
    )
    asked: list[str] = []

    def approver(request: DeferredRequest) -> Retry | Approve:
        asked.append(request.arguments["path"])
        return Retry("Not there.") if len(asked) == 1 else Approve()

    run = await loop.run("clean up", approval=approver)
    assert run.stop_reason == "answered"
    assert asked == ["/etc/hosts", "tmp/old.log"]
    assert ran == ["tmp/old.log"]
    assert [r.outcome for r in run.tool_calls] == ["retry", "executed"]
    assert result_texts(run)[0] == "Not there."
    assert run.tool_calls_used == 2
    assert_no_orphans(run, allow_deferred=False)


async def test_a_running_call_asking_for_approval_is_answered_with_retry(tmp_path: Path) -> None:
    host = make_host(tmp_path, [transfer])
    loop, _ = scripted_loop(
        host, [tool_call("transfer", {"amount": 500}), tool_call("transfer", {"amount": 90}), "ok"]
    )
    run = await loop.run("pay", approval=lambda request: Retry("At most 100 at a time."))
    assert run.stop_reason == "answered"
    assert ran == ["transfer 90"]
    first = run.tool_calls[0]
    assert (first.outcome, first.status) == ("retry", "error")
    assert first.result is not None
    assert first.result.retryable
    assert result_texts(run) == ["At most 100 at a time.", "moved 90"]
    assert run.tool_calls_used == 2  # the running call was counted once, when admitted


async def test_a_retry_names_the_request_it_answers(tmp_path: Path) -> None:
    host = make_host(tmp_path, [delete_file])
    loop, _ = scripted_loop(host, [tool_call("delete_file", {"path": "a"}), "Done."])
    run = await loop.run("go")
    [request] = run.deferred
    with pytest.raises(ValueError, match=r"answers attempt 2, but the call waits on attempt 1"):
        await loop.resume(run, {request.call_id: Retry("no", attempt=2)})
    done = await loop.resume(run, {request.call_id: Retry("no", attempt=1)})
    assert done.tool_calls[0].outcome == "retry"


def test_retry_as_a_value() -> None:
    decision = Retry("Try tmp/.", attempt=2)
    copy = pickle.loads(pickle.dumps(decision))
    assert (copy.message, copy.attempt) == ("Try tmp/.", 2)
    assert repr(decision) == "Retry('Try tmp/.', attempt=2)"
    assert Retry("x").attempt is None
    assert toolwire.Retry is Retry
    with pytest.raises(ValueError, match="attempt=0"):
        Retry("x", attempt=0)


# -- the external handler ----------------------------------------------------------------------


async def test_an_external_handler_answers_the_call_and_the_run_goes_on(tmp_path: Path) -> None:
    host = make_host(tmp_path, [calendar])
    loop, model = scripted_loop(
        host, [tool_call("calendar", {"day": "monday", "token": "s3cret"}), "Busy at nine."]
    )
    seen: list[DeferredRequest] = []

    def handler(request: DeferredRequest) -> str:
        seen.append(request)
        return "9:00 dentist"

    run = await loop.run("am I free?", external=handler)
    assert run.stop_reason == "answered"
    assert run.text == "Busy at nine."
    assert [(r.tool, r.reason, dict(r.arguments)) for r in seen] == [
        ("calendar", "external", {"day": "monday", "token": "s3cret"})
    ]
    assert [m.result.model_text() for m in _last_results(model)] == ["9:00 dentist"]
    assert run.tool_calls[0].outcome == "supplied"
    assert run.tool_calls_used == 1  # it ran, elsewhere, within the run
    [started] = events_of(run, "tool_started")
    assert started.answer == "supplied"
    assert started.arguments["token"] != "s3cret"  # redacted by the tool's sensitive arguments
    assert events_of(run, "tool_deferred") == []
    assert_no_orphans(run, allow_deferred=False)


@pytest.mark.parametrize(
    ("answer", "status", "text"),
    [
        (ToolResult.ok("free"), "ok", "free"),
        ({"free": True}, "ok", '{"free": true}'),
        (Supply("free all day"), "ok", "free all day"),
        (Deny("The calendar is private."), "denied", "The calendar is private."),
        (Retry("Ask for one day."), "error", "Ask for one day."),
    ],
    ids=["result", "data", "supply", "deny", "retry"],
)
async def test_an_async_external_handler_may_answer_with_any_result_or_decision(
    tmp_path: Path, answer: Any, status: str, text: str
) -> None:
    host = make_host(tmp_path, [calendar])
    loop, _ = scripted_loop(host, [tool_call("calendar", {"day": "monday"}), "ok"])

    async def handler(request: DeferredRequest) -> Any:
        await asyncio.sleep(0)
        return answer

    run = await loop.run("am I free?", external=handler)
    assert run.stop_reason == "answered"
    [record] = run.tool_calls
    assert record.status == status
    assert result_texts(run) == [text]


async def test_a_failing_external_handler_answers_with_an_error_not_a_crash(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host = make_host(tmp_path, [calendar])
    loop, _ = scripted_loop(
        host, [tool_call("calendar", {"day": "monday", "token": "s3cret"}), "Sorry."]
    )

    def handler(request: DeferredRequest) -> str:
        raise ConnectionError(f"calendar service down (token {request.arguments['token']})")

    with caplog.at_level(logging.ERROR):
        run = await loop.run("am I free?", external=handler)
    assert run.stop_reason == "answered"
    [text] = result_texts(run)
    assert text.startswith("Tool execution failed: ConnectionError: calendar service down")
    assert "s3cret" not in text
    assert run.tool_calls[0].status == "error"
    assert_no_orphans(run, allow_deferred=False)


async def test_an_external_handler_that_does_not_answer_leaves_the_call_deferred(
    tmp_path: Path,
) -> None:
    host = make_host(tmp_path, [calendar])
    loop, _ = scripted_loop(host, [tool_call("calendar", {"day": "monday"}), "ok"])
    run = await loop.run("am I free?", external=lambda request: None)
    assert run.stop_reason == "deferred"
    assert [(d.tool, d.reason) for d in run.deferred] == [("calendar", "external")]
    done = await loop.resume(run, {run.deferred[0].call_id: Supply("free")})
    assert done.stop_reason == "answered"


async def test_an_external_handler_cannot_approve_a_call_the_host_cannot_run(
    tmp_path: Path,
) -> None:
    host = make_host(tmp_path, [calendar])
    loop, _ = scripted_loop(host, [tool_call("calendar", {"day": "monday"}), "ok"])
    run = await loop.run("am I free?", external=lambda request: Approve())
    assert run.stop_reason == "answered"
    [text] = result_texts(run)
    assert "Not run: the external handler answered Approve() for calendar" in text


async def test_an_external_handler_answers_a_call_deferred_while_it_ran(tmp_path: Path) -> None:
    host = make_host(tmp_path, [fax])
    loop, _ = scripted_loop(
        host, [[tool_call("fax", {"number": "1"}), tool_call("fax", {"number": "2"})], "Sent."]
    )

    def handler(request: DeferredRequest) -> Any:
        assert (request.reason, request.started) == ("deferred", True)  # its row: started
        return Approve() if request.arguments["number"] == "1" else "queued for tonight"

    run = await loop.run("fax them", external=handler)
    assert run.stop_reason == "answered"
    assert ran == ["fax 1"]  # approved: it ran again, approved
    assert result_texts(run) == ["faxed 1", "queued for tonight"]
    assert [r.outcome for r in run.tool_calls] == ["executed", "supplied"]


async def test_without_local_execution_the_handler_runs_every_call(tmp_path: Path) -> None:
    @toolwire.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        raise AssertionError("the host must not run it")

    host = make_host(tmp_path, [add], loop=evolve_loop(execute_tools=False))
    loop, _ = scripted_loop(host, [tool_call("add", {"a": 2, "b": 3}), "5"])
    run = await loop.run("2+3?", external=lambda r: r.arguments["a"] + r.arguments["b"])
    assert run.stop_reason == "answered"
    assert result_texts(run) == ["5"]
    assert run.tool_calls[0].outcome == "supplied"


async def test_a_streamed_run_and_a_resume_take_the_handler(tmp_path: Path) -> None:
    host = make_host(tmp_path, [delete_file, calendar])
    loop, _ = scripted_loop(
        host,
        [
            tool_call("delete_file", {"path": "a"}),
            tool_call("calendar", {"day": "monday"}),
            "ok",
        ],
    )
    stream = loop.stream("go", external=lambda request: "free")
    kinds = [event.kind async for event in stream]
    assert kinds[-1] == "run_finished"
    assert stream.run is not None
    assert stream.run.stop_reason == "deferred"
    [request] = stream.run.deferred
    done = await loop.resume(stream.run, {request.call_id: Deny()}, external=lambda r: "free")
    assert done.stop_reason == "answered"
    assert result_texts(done)[-1] == "free"


def test_an_external_handler_must_be_callable(tmp_path: Path) -> None:
    host = make_host(tmp_path, [calendar])
    loop, _ = scripted_loop(host, ["ok"])
    with pytest.raises(TypeError, match="external= takes a function"):
        asyncio.run(loop.run("go", external="yes"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="external= takes a function"):
        loop.stream("go", external=3)
