"""Child process of the ledger race tests: claims calls from a given moment and, for each it
won, runs its side effect (a line appended to a file) and settles it. With ``open-at-go`` it
also opens the ledger at that moment, as a batch's workers do on a ledger nobody created yet."""

from __future__ import annotations

import os
import sys
import time

from toolwire.config import LedgerConfig
from toolwire.loop import CallClaimed, Ledger
from toolwire.tools import ToolResult


def main(location: str, run_id: str, calls: int, effects: str, go: float, when: str) -> None:
    config = LedgerConfig(url=location) if "://" in location else LedgerConfig(path=location)
    ledger = Ledger.open(config)
    if when != "open-at-go":
        ledger.entries(run_id, 1)  # connected and ready before the start signal
    while time.time() < go:
        time.sleep(0.001)
    for i in range(calls):
        call_id = f"call_{i}"
        try:
            ledger.started(run_id, 1, call_id, "charge", {"n": i}, idempotent=False)
        except CallClaimed:
            continue
        with open(effects, "a") as log:
            log.write(f"{call_id} {os.getpid()}\n")
        result = ToolResult.ok(f"charged by {os.getpid()}")
        ledger.settled(run_id, 1, call_id, "charge", {"n": i}, result, idempotent=False)
        ledger.flush()
    ledger.close()


if __name__ == "__main__":
    when = sys.argv[6] if len(sys.argv) > 6 else "open-first"
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5]), when)
