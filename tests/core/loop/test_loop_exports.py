"""The public names of ``toolwire.loop`` are exactly the intended ones."""

from __future__ import annotations

import inspect

import toolwire.loop

EXPECTED = {
    "NOT_OFFERED",
    "ApprovalPrompter",
    "Approve",
    "Approver",
    "CallClaimed",
    "Decision",
    "DeferReason",
    "DeferredRequest",
    "Deny",
    "ExternalHandler",
    "Ledger",
    "LedgerEntry",
    "LedgerError",
    "NotOffered",
    "Offer",
    "Outcome",
    "Retry",
    "Run",
    "RunEvents",
    "RunInProgress",
    "RunLoop",
    "RunOptions",
    "RunStream",
    "Selection",
    "StopReason",
    "Supply",
    "TerminalRenderer",
    "ToolCallRecord",
    "ToolCallingLoop",
    "UnknownRun",
    "call_tool",
    "default_ledger_path",
    "ledger_path",
    "render_event",
    "run_cli",
}


def test_exported_names() -> None:
    assert set(toolwire.loop.__all__) == EXPECTED
    for name in EXPECTED:
        assert getattr(toolwire.loop, name) is not None


def test_public_names_are_documented() -> None:
    for name in toolwire.loop.__all__:
        value = getattr(toolwire.loop, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__doc__, name


def test_top_level_names_come_from_the_loop() -> None:
    assert toolwire.NOT_OFFERED is toolwire.loop.NOT_OFFERED
    assert toolwire.ToolCallingLoop is toolwire.loop.ToolCallingLoop
    assert toolwire.middleware.__module__ == "toolwire.host._middleware"
