"""The tool-calling loop: runs, their records, deferred calls, decisions and the ledger.

The terminal front end of ``toolwire run`` lives in :mod:`toolwire.cli`, a layer above.
"""

from ._call import call_tool
from ._contract import RunEvents, RunLoop, UnknownRun
from ._ledger import Ledger, LedgerEntry, default_ledger_path, ledger_path
from ._ledger_store import CallClaimed, LedgerError
from ._loop import ToolCallingLoop
from ._offer import NOT_OFFERED, NotOffered, Selection
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

__all__ = [
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
    "Outcome",
    "Run",
    "RunEvents",
    "RunInProgress",
    "RunLoop",
    "RunOptions",
    "RunStream",
    "Selection",
    "StopReason",
    "Supply",
    "ToolCallRecord",
    "ToolCallingLoop",
    "UnknownRun",
    "call_tool",
    "default_ledger_path",
    "ledger_path",
]
