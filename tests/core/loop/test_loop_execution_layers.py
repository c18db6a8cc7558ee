"""The execution layers of one call: the one map from an exception to a result, one attempt,
retries and the ledger rows."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from toolwire.loop import Ledger
from toolwire.loop._execution import Attempt, attempt, with_retries
from toolwire.loop._lifecycle import LedgerRow, record_start, with_ledger
from toolwire.loop._state import CallSlot
from toolwire.messages import ToolCall
from toolwire.tools import Tool, ToolBlocked, ToolResult, ToolStatus
from toolwire.tools._errors import RunCancelled, result_for

TOOL = Tool.from_schema("slow", "A slow tool.", {"type": "object"}, lambda a: "ok", max_retries=2)

E, B = ToolStatus.ERROR, ToolStatus.BLOCKED
CANCELLED = "Cancelled: the run was cancelled while slow ran."
DEADLINE = "Tool slow was stopped: the run's deadline passed while it ran."
FAILED = "Tool execution failed: "
CAPTURED = [
    ("blocked", ToolBlocked("no network"), {}, B, "no network"),
    ("cancelled", RunCancelled(), {}, E, CANCELLED),
    ("task cancelled", asyncio.CancelledError(), {}, E, CANCELLED),
    ("timeout", TimeoutError(), {"timeout": 2.0}, E, "Tool slow timed out after 2 s."),
    ("deadline", TimeoutError(), {"timeout": 0.5, "deadline_bound": True}, E, DEADLINE),
    ("own timeout", TimeoutError("db"), {}, E, FAILED + "TimeoutError: db"),
    ("failure", ValueError("bad"), {}, E, FAILED + "ValueError: bad"),
    ("bare failure", KeyError(), {}, E, FAILED + "KeyError"),
    ("the tool's failure", KeyError(), {"by_tool": True}, E, FAILED + "KeyError: "),
]


@pytest.mark.parametrize(
    ("exc", "options", "status", "text"), [c[1:] for c in CAPTURED], ids=[c[0] for c in CAPTURED]
)
def test_result_for(exc: BaseException, options: Any, status: ToolStatus, text: str) -> None:
    result = result_for(exc, TOOL, **options)
    assert (result.status, result.content) == (status, text)
    assert result.retryable is options.get("by_tool", False)


def _slot() -> CallSlot:
    return CallSlot(ToolCall(id="c1", name="slow", arguments={}))


async def test_an_attempt_past_its_deadline_says_so_and_reports_it() -> None:
    hit: list[bool] = []
    a = Attempt(
        tool=TOOL,
        send=lambda: asyncio.sleep(5),
        timeout=0.01,
        deadline_bound=True,
        on_deadline=lambda: hit.append(True),
    )
    result = await attempt(a)
    assert "deadline passed" in str(result.content)
    assert hit == [True]


async def test_an_attempt_that_answers_no_result_is_an_error() -> None:
    async def wrong() -> str:
        return "text"

    result = await attempt(Attempt(tool=TOOL, send=wrong))
    assert result.content == (
        "Tool execution failed: toolwire_execute_tool produced a str, not a ToolResult."
    )
    missing = await attempt(Attempt(tool=TOOL, send=lambda: None))
    assert missing.content == "No implementation of toolwire_execute_tool ran the tool 'slow'."


async def test_a_cancelled_run_stops_the_attempt() -> None:
    cancel = asyncio.Event()
    cancel.set()
    with pytest.raises(RunCancelled):
        await attempt(Attempt(tool=TOOL, send=lambda: asyncio.sleep(5), cancel=cancel))


async def test_retries_stop_at_the_tools_limit() -> None:
    sent: list[int] = []

    async def flaky() -> ToolResult:
        sent.append(1)
        return ToolResult.error("busy", retryable=True)

    slot = _slot()
    result, outcome = await with_retries(
        Attempt(tool=TOOL, send=flaky), slot, backoff=0.0, backoff_max=0.0
    )
    assert (result.content, outcome, slot.attempts, len(sent)) == ("busy", "executed", 3, 3)


async def test_a_run_cancelled_during_retries_answers_cancelled() -> None:
    cancel = asyncio.Event()
    cancel.set()
    a = Attempt(tool=TOOL, send=lambda: asyncio.sleep(5), cancel=cancel)
    result, outcome = await with_retries(a, _slot(), backoff=0.0, backoff_max=0.0)
    assert outcome == "cancelled"
    assert result.content == "Cancelled: the run was cancelled while slow ran."


async def test_the_ledger_settles_what_ran(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.db")
    row = LedgerRow(run_id="r1", round=1, call_id="c1", tool="slow", arguments={}, idempotent=False)

    async def send() -> tuple[ToolResult, Any]:
        return ToolResult.ok("done"), "executed"

    try:
        assert record_start(ledger, row, None) == 1  # the first attempt
        slot = _slot()
        result, _ = await with_ledger(ledger, row, slot, send)
        assert slot.duration is not None
        ledger.started("r1", 1, "c2", "slow", {}, idempotent=False)  # commits the settled row
        entry = ledger.entries("r1", 1)["c1"]
        assert entry.settled
        assert entry.result == result
    finally:
        ledger.close()
