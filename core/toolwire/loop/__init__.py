"""The tool-calling loop: runs, their records, deferred calls, decisions, and ``toolwire run``."""

from ._call import call_tool
from ._ledger import Ledger, LedgerEntry, default_ledger_path, ledger_path
from ._loop import Approver, RunStream, ToolCallingLoop
from ._offer import NOT_OFFERED, NotOffered, Offer, Selection
from ._render import ApprovalPrompter, TerminalRenderer, render_event, run_cli
from ._run import (
    Approve,
    Decision,
    DeferReason,
    DeferredRequest,
    Deny,
    Outcome,
    Run,
    RunOptions,
    StopReason,
    Supply,
    ToolCallRecord,
)

__all__ = [
    "ApprovalPrompter",
    "Approve",
    "Approver",
    "Decision",
    "DeferReason",
    "DeferredRequest",
    "Deny",
    "Ledger",
    "LedgerEntry",
    "NOT_OFFERED",
    "NotOffered",
    "Offer",
    "Outcome",
    "Run",
    "RunOptions",
    "RunStream",
    "Selection",
    "StopReason",
    "Supply",
    "TerminalRenderer",
    "ToolCallRecord",
    "ToolCallingLoop",
    "call_tool",
    "default_ledger_path",
    "ledger_path",
    "render_event",
    "run_cli",
]
