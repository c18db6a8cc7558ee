"""What the tool-effect ledger costs a run, round by round, and a call on SQLite vs PostgreSQL.

**Per round over a long run.** A scripted model calls one tool per round for 200 rounds, then
answers, in the configuration users run: the default config (ledger on, in a temporary file;
``[loop] max_rounds`` raised to let the run go on) with the ``basics`` plugin enabled when it is
installed. The tool is a plain one, so not idempotent: each round writes a ``started`` row (with
the run's recovery record) and a ``settled`` one. The CPU time of each round (``RoundStarted``
to the next) is taken from a ``toolwire_event`` hook; the figure at round *k* is the median over
the repetitions of the mean of rounds *k-4 … k* (round 1 alone). The same run with the ledger off
is the floor. Flat means: the ledger's own per-round cost (on − off) rises by less than 0.5 µs
per round (least-squares slope over rounds 10…200; before records were append-only it rose by
~30 µs per round).

**Per call, SQLite vs PostgreSQL** (``--postgres URL``, or ``TOOLWIRE_BENCH_POSTGRES``): the
ledger's work for one call of a non-idempotent tool (``started`` committed, ``settled`` committed
with the next write), against the same ``Ledger`` API on both backends. PostgreSQL is measured
as the server is configured, and with ``synchronous_commit=off`` for the session: the SQLite
ledger's ``synchronous = NORMAL`` makes the same promise (a commit survives the process being
killed, not a power cut), so that pair compares like with like.

Run: ``python bench/ledger.py`` (``--quick`` for fewer repetitions; ``--check`` to exit with
status 1 when the per-round cost is not flat).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROUNDS = 200
AT = (1, 10, 50, 100, 200)
WINDOW = 5
MAX_SLOPE_US = 0.5


def _host(ledger: str | None, clock: _RoundClock) -> Any:
    import toolwire
    from toolwire import Config, Host
    from toolwire.config import LedgerConfig, LoopConfig, PluginsConfig

    @toolwire.tool(allow_duplicates=True)
    async def note(text: str) -> str:
        """Write a note."""
        return "noted"

    class Bench:
        __name__ = "bench_ledger"

        @toolwire.hookimpl
        def toolwire_tools(self, settings: Any) -> list[toolwire.Tool]:
            return [note]

        @toolwire.hookimpl
        def toolwire_event(self, event: Any) -> None:
            clock.observe(event)

    enable = ["basics"] if importlib.util.find_spec("toolwire_basics") else []
    config = Config(
        plugins=PluginsConfig(enable=enable),
        loop=LoopConfig(max_rounds=ROUNDS + 1, max_tool_calls=ROUNDS),
        ledger=LedgerConfig(enabled=ledger is not None, path=ledger),
    )
    return Host.load(config=config, plugins=[Bench()])


class _RoundClock:
    """Stamps the CPU clock at every round start and at the end of the run."""

    def __init__(self) -> None:
        self.stamps: list[float] = []

    def reset(self) -> None:
        self.stamps.clear()

    def observe(self, event: Any) -> None:
        from toolwire.events import RoundStarted, RunFinished

        if isinstance(event, RoundStarted | RunFinished):
            self.stamps.append(time.process_time())


async def _round_costs(ledger: str | None, repeat: int) -> list[list[float]]:
    """Per repetition, the CPU seconds of rounds 1…ROUNDS."""
    from toolwire.adapters import ModelRequest
    from toolwire.loop import ToolCallingLoop
    from toolwire.messages import AssistantMessage, TextPart, ToolCall
    from toolwire.testing import ScriptedModel

    clock = _RoundClock()
    host = _host(ledger, clock)
    answer = AssistantMessage(parts=(TextPart("done"),))

    def respond(request: ModelRequest) -> AssistantMessage:
        if request.round > ROUNDS:
            return answer
        call = ToolCall(id=f"c{request.round}", name="note", arguments={"text": "x"})
        return AssistantMessage(parts=(call,))

    model = ScriptedModel(script=respond)
    loop = ToolCallingLoop(host, adapter=model)
    out: list[list[float]] = []
    for index in range(repeat + 1):  # the first run warms up
        model.requests.clear()
        clock.reset()
        gc.collect()
        gc.disable()
        try:
            run = await loop.run("take notes")
        finally:
            gc.enable()
        assert run.stop_reason == "answered", run.detail
        assert len(clock.stamps) == ROUNDS + 2
        if index:
            stamps = clock.stamps
            out.append([stamps[k + 1] - stamps[k] for k in range(ROUNDS)])
    return out


def _at(costs: list[list[float]], k: int) -> float:
    """The median over repetitions of the mean cost of rounds k-WINDOW+1 … k (1-based)."""
    lo = max(0, k - WINDOW) if k > 1 else 0
    return statistics.median(statistics.fmean(c[lo:k]) for c in costs)


def _slope(costs: list[list[float]]) -> float:
    """Seconds per round by which the median per-round cost rises over rounds 10…ROUNDS."""
    xs = list(range(10, ROUNDS + 1))
    ys = [statistics.median(c[x - 1] for c in costs) for x in xs]
    return statistics.linear_regression(xs, ys).slope


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:8.1f} µs"


async def _per_round(repeat: int) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        on = await _round_costs(str(Path(tmp) / "ledger.sqlite3"), repeat)
    off = await _round_costs(None, repeat)
    print(f"per-round CPU cost over a {ROUNDS}-round run ({repeat} runs each, median):")
    print(f"{'round':>8} {'ledger on':>12} {'ledger off':>12} {'on − off':>12}")
    for k in AT:
        a, b = _at(on, k), _at(off, k)
        print(f"{k:>8} {_us(a):>12} {_us(b):>12} {_us(a - b):>12}")
    slope_on, slope_off = _slope(on), _slope(off)
    own = slope_on - slope_off
    ok = own * 1e6 < MAX_SLOPE_US
    print(
        f"slope: ledger on {slope_on * 1e6:+.2f} µs/round, off {slope_off * 1e6:+.2f} µs/round; "
        f"the ledger's own {own * 1e6:+.2f} µs/round (target < {MAX_SLOPE_US}): "
        f"{'flat' if ok else 'NOT FLAT'}"
    )
    total_on = statistics.median(sum(c) for c in on)
    total_off = statistics.median(sum(c) for c in off)
    print(
        f"whole run: {total_on * 1e3:.1f} ms with the ledger, {total_off * 1e3:.1f} ms without "
        f"({total_on / total_off:.2f}×)"
    )
    return ok


def _per_call(ledger: Any, calls: int) -> float:
    """CPU-and-wait seconds per call of the ledger's own work for ``calls`` calls."""
    from toolwire.tools import ToolResult

    result = ToolResult.ok("done")
    run_id = f"bench_{time.time_ns()}"
    started = time.perf_counter()
    for i in range(calls):
        call_id = f"c{i}"
        ledger.started(run_id, 1, call_id, "note", {"text": "x"}, idempotent=False)
        ledger.settled(run_id, 1, call_id, "note", {"text": "x"}, result, idempotent=False)
    ledger.flush()
    return (time.perf_counter() - started) / calls


def _backends(postgres: str | None, calls: int) -> None:
    from toolwire.config import LedgerConfig
    from toolwire.loop import Ledger

    print(f"ledger cost per call of a non-idempotent tool ({calls} calls, wall time):")
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = Ledger.open(LedgerConfig(path=str(Path(tmp) / "ledger.sqlite3")))
        try:
            _per_call(sqlite, max(10, calls // 10))
            base = _per_call(sqlite, calls)
        finally:
            sqlite.close()
    print(f"  {'SQLite':<35} {_us(base)}")
    if postgres is None:
        print("  PostgreSQL (not measured: pass --postgres URL or set TOOLWIRE_BENCH_POSTGRES)")
        return
    relaxed = postgres + ("&" if "?" in postgres else "?") + "options=-c%20synchronous_commit%3Doff"
    for name, url in (("PostgreSQL", postgres), ("PostgreSQL, synchronous_commit=off", relaxed)):
        pg = Ledger.open(LedgerConfig(url=url))
        try:
            _per_call(pg, max(10, calls // 10))
            cost = _per_call(pg, calls)
        finally:
            pg.close()
        print(f"  {name:<35} {_us(cost)}  ({cost / base:.1f}× SQLite)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--postgres", default=os.environ.get("TOOLWIRE_BENCH_POSTGRES"))
    parser.add_argument("--only", choices=["rounds", "backends"])
    parser.add_argument("--check", action="store_true", help="exit 1 when the cost is not flat")
    args = parser.parse_args()
    repeat = 3 if args.quick else 9
    ok = True
    if args.only in (None, "rounds"):
        ok = asyncio.run(_per_round(repeat))
    if args.only in (None, "backends"):
        _backends(args.postgres, 200 if args.quick else 1000)
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
