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

toolwire is measured as users run it, with the ledger on (the default; the tool is not
idempotent, so each call costs two SQLite commits: ``started`` before it runs, ``settled``
after), and the figures quoted are those. It is also measured with an idempotent tool (no rows)
and with the ledger off, the configuration closest to pydantic-ai's (which has none). Targets:
≥ 5× less overhead than pydantic-ai, ≤ 100 µs per tool call, both with the defaults.

The floor of a call with side effects, ledger on, is one bare SQLite WAL commit of its
``started`` row (``BEGIN IMMEDIATE``, one insert, ``COMMIT`` at ``synchronous = NORMAL``, in the
ledger file the runs above wrote), which must be committed before the tool runs: the bench
measures it and prints what the defaults cost above it. Last measured (``--quick``, medians
of five runs, each alternated with a run of the loop as it was before its ledger rows moved to
orjson, "before"; the shared 2-core machine busy with other work): defaults 151 µs per round
+ 112 µs per call, 10.1× less overhead than pydantic-ai (before: 216 + 191 µs, 7.1×); ledger
off 48 + 43 µs, 30× (before: 52 + 61 µs, 23×); the floor 17.6 µs. The per-call target is
missed by about 12 µs: above the commit, such a call costs the loop's own work (the ledger-off
figure), its ``settled`` row (upserted with the next commit), its share of the turn's run
record and the JSON of both rows. None of that can move ahead of the tool without weakening
the ledger.

A grown ledger: the defaults are measured again in the same process after ten times as many
runs again (ten rounds of two calls each, the collector on), in the same ledger file: a
process's and a ledger's history must not make a call cost more (users' ledgers grow too).

The offer: with 10, 100 and 1000 offered tools (one of them called), the per-round cost of a
run through the real ``openai-chat`` adapter (rendering and parsing included; its HTTP post is
replaced by an in-process answer, so the transport is not timed; the called tool is idempotent,
so the ledger, on, writes no rows), with the kept offer and
rendering (``cached``, the default) and with both cleared before every round (``cold``, what
every round cost before they were kept).

Large catalogues: the same run with 1000 tools and ``[tools] max_direct = 20`` (the 20 tools
most relevant to the prompt, ``tool_search`` and ``tool_call`` go to the model), per round,
against all 1000 offered; the budget is to cost less than the full offer, not more.

Run: ``python bench/loop.py`` (``--quick`` for fewer repetitions, ``--catalogue`` for the large
catalogue alone, ``--rounds N`` for runs of N rounds instead of ten: what a round of a long run
costs, where work that grows with the run shows; ``--check`` to exit with status 1 when a target
is missed).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import tempfile
import time
import uuid
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


# -- the floor of the defaults -------------------------------------------------------------------


def _commit_floor(path: str, repeat: int) -> float:
    """The CPU seconds of one bare SQLite commit of a ``started`` row, as the ledger makes it,
    in the ledger file the runs above wrote (its size and pages as they left it): WAL,
    ``synchronous = NORMAL``, ``BEGIN IMMEDIATE``, one insert, ``COMMIT``, straight through
    ``sqlite3``. A call with side effects cannot cost less with the ledger on: its ``started``
    row is committed before it runs."""
    from toolwire.loop._ledger_sqlite import SQLiteStore

    batch = 100
    store = SQLiteStore(Path(path))
    db = store._connect()
    insert = (
        "INSERT INTO calls (run_id, round, call_id, tool, arguments, idempotent, state, result, "
        "started, settled, attempt) VALUES (?, ?, ?, 'add', ?, 0, 'started', NULL, ?, NULL, 1)"
    )
    samples = []
    try:
        for sample in range(repeat + 3):
            run_id = f"run_{uuid.uuid4().hex}"  # placed in the index as a run's rows are
            started = time.process_time()
            for i in range(batch):
                db.execute("BEGIN IMMEDIATE")
                db.execute(insert, (run_id, i // 2 + 1, f"c{i}", '{"a":1,"b":2}', time.time()))
                db.execute("COMMIT")
            if sample >= 3:  # after warm-up
                samples.append((time.process_time() - started) / batch)
    finally:
        store.close()
    return statistics.median(samples)


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
        f"{name:<34} run {_us(figures['run'])} | {ROUNDS}x1 {_us(figures['run_10x1'])} | "
        f"per round {_us(figures['per_round'])} | per call {_us(figures['per_call'])}"
    )


DEFAULT = "toolwire (defaults: ledger on)"
GROWN = "toolwire (defaults, grown ledger)"
GROWN_RUNS_PER_REPEAT = 10


async def _grow(path: str, runs: int) -> int:
    """Grow the ledger file at ``path`` by ``runs`` runs of ten rounds of two calls, with the
    collector on, in this process (what a long-lived process does to its ledger and its heap);
    the ledger's size after (the file and its WAL)."""
    once = _toolwire_runner(2, ROUNDS, ledger=path, idempotent=False)
    for _ in range(runs):
        await once()
    return sum(f.stat().st_size for f in Path(path).parent.iterdir() if f.is_file())


async def main(repeat: int) -> int:
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "ledger.sqlite3")
        results[DEFAULT] = await _measure(
            lambda calls, rounds: _toolwire_runner(calls, rounds, ledger=path, idempotent=False),
            repeat,
        )
        results["toolwire (ledger on, idempotent tool)"] = await _measure(
            lambda calls, rounds: _toolwire_runner(calls, rounds, ledger=path, idempotent=True),
            repeat,
        )
        grown_bytes = await _grow(path, GROWN_RUNS_PER_REPEAT * repeat)
        results[GROWN] = await _measure(
            lambda calls, rounds: _toolwire_runner(calls, rounds, ledger=path, idempotent=False),
            repeat,
        )
        gc.collect()  # the runs' hosts close their ledger connections
        floor = _commit_floor(path, max(repeat // 4, 10))
    results["toolwire (ledger off)"] = await _measure(
        lambda calls, rounds: _toolwire_runner(calls, rounds, ledger=None, idempotent=False),
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
    ours = results[DEFAULT]
    ok = ours["per_call"] * 1e6 <= TARGET_PER_CALL_US
    print(
        f"\nper tool call, defaults: {ours['per_call'] * 1e6:.1f} µs "
        f"(target ≤ {TARGET_PER_CALL_US:.0f} µs: {'met' if ok else 'MISSED'}); "
        f"ledger off: {results['toolwire (ledger off)']['per_call'] * 1e6:.1f} µs"
    )
    grown = results[GROWN]
    print(
        f"grown ledger ({grown_bytes / 1e6:.0f} MB, the same process after "
        f"{GROWN_RUNS_PER_REPEAT * repeat} more runs): per call {grown['per_call'] * 1e6:.1f} µs, "
        f"per round {grown['per_round'] * 1e6:.1f} µs "
        f"({grown['per_call'] / ours['per_call']:.2f}× and "
        f"{grown['per_round'] / ours['per_round']:.2f}× the defaults above)"
    )
    print(
        f"floor of a call with side effects, ledger on: one bare SQLite WAL commit of its "
        f"started row, {floor * 1e6:.1f} µs; above it, defaults: "
        f"{(ours['per_call'] - floor) * 1e6:.1f} µs per call"
    )
    if peer is not None:
        ratio = peer["per_round_and_call"] / ours["per_round_and_call"]
        whole = peer["run_10x1"] / ours["run_10x1"]
        met = ratio >= TARGET_RATIO
        ok = ok and met
        off = results["toolwire (ledger off)"]
        print(
            f"pydantic-ai / toolwire overhead per round with one call, defaults: {ratio:.1f}× "
            f"(target ≥ {TARGET_RATIO:.0f}×: {'met' if met else 'MISSED'}); "
            f"whole 10-round run: {whole:.1f}×; ledger off: "
            f"{peer['per_round_and_call'] / off['per_round_and_call']:.1f}×"
        )
    await _offer_section(max(repeat // 4, 10))
    await _catalogue_section(max(repeat // 4, 10))
    return 0 if ok else 1


# -- the offer -------------------------------------------------------------------------------------

OFFERED = (10, 100, 1000)


def _offer_runner(
    offered: int, rounds: int, *, cold: bool, max_direct: int | None = None
) -> Callable[[], Awaitable[Any]]:
    import toolwire
    from toolwire import Config, Host, Tool
    from toolwire.config import LedgerConfig, LoopConfig, ProviderConfig, ToolsConfig
    from toolwire.loop import ToolCallingLoop
    from toolwire_openai import OpenAIChatAdapter

    # Idempotent: the ledger is on, but writes no rows for it, so the figures are the offer's.
    @toolwire.tool(idempotent=True, allow_duplicates=True)
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    def filler(i: int) -> Tool:
        return Tool.from_schema(
            name=f"lookup_{i:04d}",
            description=f"Look up entry {i} of the catalogue.",
            parameters={
                "type": "object",
                "properties": {"query": {"type": "string", "description": "What to look up."}},
                "required": ["query"],
            },
            handler=lambda arguments: "found",
        )

    tools = [add, *(filler(i) for i in range(offered - 1))]

    class Bench:
        __name__ = "bench"

        @toolwire.hookimpl
        def toolwire_tools(self, settings: Any) -> list[toolwire.Tool]:
            return tools

    tmp = tempfile.mkdtemp(prefix="toolwire-bench-offer-")
    provider = ProviderConfig(adapter="openai-chat", base_url="http://127.0.0.1:9/v1", model="m")
    config = Config(
        loop=LoopConfig(max_rounds=rounds + 1, max_tool_calls=rounds),
        ledger=LedgerConfig(path=str(Path(tmp) / "ledger.sqlite3")),
        provider=provider,
        tools=ToolsConfig(max_direct=max_direct),
    )
    host = Host.load(config=config, plugins=[Bench()])
    # the direct ones, tool_search and tool_call
    sent = offered if max_direct is None else max_direct + 2
    loop: Any = None

    class InProcess(OpenAIChatAdapter):
        # The real adapter: wire_request, the tools array, the messages, the body, parsing;
        # only the HTTP post is an in-process answer.
        async def post(self, url: str, body: Any, request: Any, emit: Any, **options: Any) -> Any:
            if cold:
                loop._offers.clear()
                self._tools.clear()
            assert len(body.get("tools", ())) == sent
            index = request.round
            if index <= rounds:
                call = {
                    "id": f"c{index}",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
                }
                message = {"role": "assistant", "content": None, "tool_calls": [call]}
                return {"choices": [{"message": message, "finish_reason": "tool_calls"}]}
            message = {"role": "assistant", "content": "done"}
            return {"choices": [{"message": message, "finish_reason": "stop"}]}

    loop = ToolCallingLoop(host, adapter=InProcess(provider))

    async def once() -> Any:
        run = await loop.run("add numbers")
        assert run.stop_reason == "answered", run.detail
        assert len(run.tool_calls) == rounds
        return run

    return once


async def _offer_section(repeat: int) -> None:
    print(
        f"\nThe offer, per round (openai-chat adapter, ledger on, {ROUNDS} rounds of one call; "
        f"median of {repeat} runs):"
    )
    print(f"{'offered tools':>14} {'cold':>12} {'cached':>12} {'cold / cached':>14}")
    for offered in OFFERED:
        cold_answer, cold_run, answer, run = await _time_interleaved(
            [
                _offer_runner(offered, 0, cold=True),
                _offer_runner(offered, ROUNDS, cold=True),
                _offer_runner(offered, 0, cold=False),
                _offer_runner(offered, ROUNDS, cold=False),
            ],
            repeat,
        )
        cold = (cold_run - cold_answer) / ROUNDS
        cached = (run - answer) / ROUNDS
        print(f"{offered:>14} {_us(cold)} {_us(cached)} {cold / cached:13.1f}×")


async def _catalogue_section(repeat: int) -> None:
    offered, budget = 1000, 20
    print(
        f"\nA large catalogue, per round ({offered} tools, [tools] max_direct = {budget}, "
        f"openai-chat adapter, ledger on; median of {repeat} runs):"
    )
    full_answer, full_run, answer, run = await _time_interleaved(
        [
            _offer_runner(offered, 0, cold=False),
            _offer_runner(offered, ROUNDS, cold=False),
            _offer_runner(offered, 0, cold=False, max_direct=budget),
            _offer_runner(offered, ROUNDS, cold=False, max_direct=budget),
        ],
        repeat,
    )
    full = (full_run - full_answer) / ROUNDS
    budgeted = (run - answer) / ROUNDS
    # The fixed cost of a run includes its first offer, where the choice is made.
    print(f"{'all offered':>14} {_us(full)}   first round and answer {_us(full_answer)}")
    print(f"{'max_direct':>14} {_us(budgeted)}   first round and answer {_us(answer)}")
    print(
        f"all offered / max_direct per round: {full / budgeted:.1f}×; "
        f"first round: {full_answer / answer:.1f}× (target: ≥ 1×, the budget must not cost more)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--catalogue", action="store_true", help="only the large catalogue")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="rounds of each run shape")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    ROUNDS = args.rounds
    repetitions = 40 if args.quick else 200
    if args.catalogue:
        sys.exit(asyncio.run(_catalogue_section(max(repetitions // 4, 10))))
    status = asyncio.run(main(repetitions))
    sys.exit(status if args.check else 0)
