"""The tool-calling loop: runs, their records, deferred calls, decisions, and ``toolwire run``."""

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr
from ..tools._errors import Retry
from ._call import call_tool
from ._contract import RunEvents, RunLoop, UnknownRun
from ._ledger import Ledger, LedgerEntry, default_ledger_path, ledger_path
from ._ledger_store import CallClaimed, LedgerError
from ._loop import ToolCallingLoop
from ._offer import NOT_OFFERED, NotOffered, Offer, Selection
from ._reconcile import RunInProgress
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
from ._state import Approver, ExternalHandler
from ._stream import RunStream

if TYPE_CHECKING:
    from ..cli._render import ApprovalPrompter, TerminalRenderer, render_event, run_cli

# The terminal front end lives in toolwire.cli, a layer above the loop; these names stay here for
# existing callers and load on first use, so importing the loop never imports the CLI.
_FROM_CLI = frozenset({"ApprovalPrompter", "TerminalRenderer", "render_event", "run_cli"})


__getattr__ = lazy_getattr(globals(), dict.fromkeys(_FROM_CLI, "toolwire.cli._render"))


__all__ = [
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
    "NOT_OFFERED",
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
]
