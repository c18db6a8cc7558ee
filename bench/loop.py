"""Host overhead of the tool-calling loop, per round and per tool call, against pydantic-ai.

Both frameworks drive the same conversation with an in-process model (no network): ten rounds,
each with one call of a trivial tool (``async def add(a, b)``: a sync tool would add a worker
thread hand-off to both), then an answer. toolwire uses its scripted model; pydantic-ai
(installed only for the bench: ``pip install pydantic-ai-slim``) its ``FunctionModel``. What is
timed is the CPU time of whole runs, so the figures are the frameworks' own work (the models do
next to nothing).

Per call and per round are separated by timing three shapes of run and differencing them:

- ``answer``: one round, no tool call (the fixed cost of a run);
- ``10x1``: ten rounds of one call each, then the answer;
- ``10x2``: ten rounds of two calls each, then the answer.

per call = (10x2 − 10x1) / 10; per round = (10x1 − answer) / 10 − per call.

toolwire is measured without the ledger (pydantic-ai has none), then with it: a tool that is not
idempotent costs two SQLite commits per call (``started`` before it runs, ``settled`` after),
an idempotent one none. Targets: ≥ 5× less overhead than pydantic-ai, ≤ 100 µs per tool call.

Run: ``python bench/loop.py`` (``--quick`` for fewer repetitions).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROUNDS = 10
TARGET_RATIO = 5.0
TARGET_PER_CALL_US = 100.0


# -- toolwire --------------------------------------------------------------------------------------


def _toolwire_runner(
    calls_per_round: int, rounds: int, *, ledger: str | None, idempotent: bool
) -> Callable[[], Awaitable[Any]]:
    import toolwire
    from toolwire import Config, Host
    from toolwire.adapters import ModelRequest
    from toolwire.config import LedgerConfig, LoopConfig
    from toolwire.loop import ToolCallingLoop
    from toolwire.messages import AssistantMessage, TextPart, ToolCall
    from toolwire.testing import ScriptedModel

    @toolwire.tool(idempotent=idempotent, allow_duplicates=True)
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    class Bench:
        __name__ = "bench"

        @toolwire.hookimpl
        def toolwire_tools(self, settings: Any) -> list[toolwire.Tool]:
            return [add]

    config = Config(
        loop=LoopConfig(max_rounds=rounds + 1, max_tool_calls=rounds * calls_per_round),
        ledger=LedgerConfig(enabled=ledger is not None, path=ledger),
    )
    host = Host.load(config=config, plugins=[Bench()])
    answer = AssistantMessage(parts=(TextPart("done"),))
    turns = [
        AssistantMessage(
            parts=tuple(
                ToolCall(id=f"c{r}_{i}", name="add", arguments={"a": r, "b": i})
                for i in range(calls_per_round)
            )
        )
        for r in range(rounds)
    ]

    def respond(request: ModelRequest) -> AssistantMessage:
        index = request.round - 1
        return turns[index] if index < rounds else answer

    model = ScriptedModel(script=respond)
    loop = ToolCallingLoop(host, adapter=model)

    async def once() -> Any:
        model.requests.clear()
        run = await loop.run("add numbers")
        assert run.stop_reason == "answered", run.detail
        assert len(run.tool_calls) == rounds * calls_per_round
        return run

    return once


# -- pydantic-ai -----------------------------------------------------------------------------------


def _pydantic_ai_runner(calls_per_round: int, rounds: int) -> Callable[[], Awaitable[Any]]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        index = sum(1 for m in messages if isinstance(m, ModelResponse))
        if index < rounds:
            return ModelResponse(
                parts=[
                    ToolCallPart(
                        tool_name="add", args={"a": index, "b": i}, tool_call_id=f"c{index}_{i}"
                    )
                    for i in range(calls_per_round)
                ]
            )
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(respond))

    @agent.tool_plain
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    async def once() -> Any:
        result = await agent.run("add numbers")
        assert result.output == "done"
        return result

    return once


# -- timing ----------------------------------------------------------------------------------------


async def _time_interleaved(onces: list[Callable[[], Awaitable[Any]]], repeat: int) -> list[float]:
    """The median CPU seconds of each run shape, sampled in turn (after warm-up), GC paused.

    CPU time of the process rather than wall time: both frameworks run everything in this
    process, and CPU time does not count the waits a busy machine imposes on it.
    """
    for once in onces:
        for _ in range(max(3, repeat // 10)):
            await once()
    samples: list[list[float]] = [[] for _ in onces]
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            for index, once in enumerate(onces):
                started = time.process_time()
                await once()
                samples[index].append(time.process_time() - started)
    finally:
        gc.enable()
    return [statistics.median(s) for s in samples]


async def _measure(
    make: Callable[[int, int], Callable[[], Awaitable[Any]]], repeat: int
) -> dict[str, float]:
    # The three shapes are timed in turn, sample by sample: timed one after the other, a drift of
    # the machine between them (caches, clock, a neighbour's load) made the differences meaningless.
    answer, one, two = await _time_interleaved(
        [make(1, 0), make(1, ROUNDS), make(2, ROUNDS)], repeat
    )
    per_call = (two - one) / ROUNDS
    per_round = (one - answer) / ROUNDS - per_call
    return {
        "run": answer,
        "run_10x1": one,
        "per_call": per_call,
        "per_round": per_round,
        "per_round_and_call": (one - answer) / ROUNDS,
    }


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:8.1f} µs"


def _report(name: str, figures: dict[str, float]) -> None:
    print(
        f"{name:<34} run {_us(figures['run'])} | 10x1 {_us(figures['run_10x1'])} | "
        f"per round {_us(figures['per_round'])} | per call {_us(figures['per_call'])}"
    )


async def main(repeat: int) -> int:
    results: dict[str, dict[str, float]] = {}
    results["toolwire (no ledger)"] = await _measure(
        lambda calls, rounds: _toolwire_runner(calls, rounds, ledger=None, idempotent=False),
        repeat,
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "ledger.sqlite3")
        results["toolwire (ledger, idempotent tool)"] = await _measure(
            lambda calls, rounds: _toolwire_runner(calls, rounds, ledger=path, idempotent=True),
            repeat,
        )
        results["toolwire (ledger, side-effect tool)"] = await _measure(
            lambda calls, rounds: _toolwire_runner(calls, rounds, ledger=path, idempotent=False),
            repeat,
        )
    try:
        import pydantic_ai  # noqa: F401
    except ImportError:
        peer = None
        print("pydantic-ai is not installed (pip install pydantic-ai-slim): peer skipped")
    else:
        peer = await _measure(_pydantic_ai_runner, max(repeat // 4, 10))
        results["pydantic-ai FunctionModel"] = peer
    print(f"Python {sys.version.split()[0]}; {ROUNDS} rounds; median of {repeat} runs\n")
    for name, figures in results.items():
        _report(name, figures)
    ours = results["toolwire (no ledger)"]
    ok = ours["per_call"] * 1e6 <= TARGET_PER_CALL_US
    print(
        f"\nper tool call: {ours['per_call'] * 1e6:.1f} µs "
        f"(target ≤ {TARGET_PER_CALL_US:.0f} µs: {'met' if ok else 'MISSED'})"
    )
    if peer is not None:
        ratio = peer["per_round_and_call"] / ours["per_round_and_call"]
        whole = peer["run_10x1"] / ours["run_10x1"]
        met = ratio >= TARGET_RATIO
        ok = ok and met
        print(
            f"pydantic-ai / toolwire overhead per round with one call: {ratio:.1f}× "
            f"(target ≥ {TARGET_RATIO:.0f}×: {'met' if met else 'MISSED'}); "
            f"whole 10-round run: {whole:.1f}×"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(40 if args.quick else 200)))
