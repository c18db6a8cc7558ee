"""Overhead of toolwire-otel per tool call and per round: the plugin on against off, in one run.

The same conversation as ``bench/loop.py`` (the scripted model, an async ``add`` tool, no
ledger) is timed in three run shapes and differenced:

- ``answer``: one round, no tool call;
- ``10x1``: ten rounds of one call each, then the answer;
- ``10x2``: ten rounds of two calls each, then the answer.

per call = (10x2 − 10x1) / 10; per round = (10x1 − answer) / 10 − per call.

Configurations, sampled in turn so that a drift of the machine hits all alike:

- ``off``: the plugin not enabled (the floor);
- ``on``: the plugin's observer over an SDK tracer provider with a ``BatchSpanProcessor`` (the
  processor the plugin builds) whose exporter drops the spans, and a meter provider aggregating
  the three histograms: the cost a run pays for its spans and metrics, without export I/O;
- ``on, collector down``: the plugin enabled by config, exporting OTLP/HTTP to a loopback port
  nobody listens on: the failing exports and their retries must not slow the run.

What is timed is the CPU time of the process (the batch processor's and exporters' threads
included): on a machine shared with other work, wall time mostly measures the neighbours.
The floor is the SDK's own cost for what a tool call records (one span with the same
attributes, one histogram value, through the same processor). Target: the plugin adds at most
2× that floor per tool call (the rest is reading events and keeping spans by id).

Run: ``python bench/otel.py`` (``--quick`` for fewer repetitions; ``--check`` to exit with status
1 when the target is missed).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import socket
import statistics
import sys
import time
import types
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

ROUNDS = 10
TARGET_FLOOR_RATIO = 2.0


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _telemetry_plugin() -> Any:
    """The plugin's observer over a batch span processor that drops what it exports."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
    from toolwire_otel._observer import TelemetryObserver
    from toolwire_otel._pipeline import Pipeline

    import toolwire

    class Dropping(SpanExporter):
        def __init__(self) -> None:
            self.spans = 0

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            self.spans += len(spans)
            return SpanExportResult.SUCCESS

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(Dropping()))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    pipeline = Pipeline(tracer_provider, meter_provider, owned=[tracer_provider, meter_provider])

    def toolwire_configure(host: toolwire.Host) -> None:
        observer = TelemetryObserver(host, pipeline, capture=False, agent_name="toolwire")
        host.plugin_manager.register(observer, name="otel.telemetry")

    return types.SimpleNamespace(
        __name__="otel_bench", toolwire_configure=toolwire.hookimpl(toolwire_configure)
    )


def _sdk_floor(repeat: int) -> float:
    """CPU seconds the SDK itself needs for one tool call's telemetry: one span started with the
    same attributes and ended, and one histogram value, through the same processor and meter."""
    from opentelemetry import trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropping(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(Dropping()))
    tracer = tracer_provider.get_tracer("floor")
    meter = MeterProvider(metric_readers=[InMemoryMetricReader()]).get_meter("floor")
    histogram = meter.create_histogram("floor.duration", unit="s")
    parent = trace.set_span_in_context(tracer.start_span("run"))
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Add two integers.",
    }
    samples = []
    for _ in range(repeat):
        started = time.process_time()
        for index in range(100):
            span = tracer.start_span(
                "execute_tool add",
                context=parent,
                attributes={**attributes, "gen_ai.tool.call.id": f"c{index}"},
            )
            span.set_attribute("toolwire.tool.status", "ok")
            span.end()
            histogram.record(0.001, {"gen_ai.tool.name": "add", "gen_ai.operation.name": "x"})
        samples.append((time.process_time() - started) / 100)
    tracer_provider.shutdown()
    return statistics.median(samples)


def _runner(
    calls_per_round: int, rounds: int, mode: str
) -> tuple[Callable[[], Awaitable[Any]], Any]:
    import toolwire
    from toolwire import Host
    from toolwire.adapters import ModelRequest
    from toolwire.config import config_from_dict
    from toolwire.loop import ToolCallingLoop
    from toolwire.messages import AssistantMessage, TextPart, ToolCall
    from toolwire.testing import ScriptedModel

    @toolwire.tool(allow_duplicates=True)
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    tools = types.SimpleNamespace(
        __name__="bench", toolwire_tools=toolwire.hookimpl(lambda settings: [add])
    )
    raw: dict[str, Any] = {
        "loop": {"max_rounds": rounds + 1, "max_tool_calls": max(rounds * calls_per_round, 1)},
        "ledger": {"enabled": False},
    }
    plugins: list[Any] = [tools]
    if mode == "on":
        plugins.append(_telemetry_plugin())
    elif mode == "down":
        raw["plugins"] = {"enable": ["otel"]}
        raw["tools"] = {
            "otel": {"endpoint": f"http://127.0.0.1:{_closed_port()}", "flush_timeout": 0.5}
        }
    host = Host.load(config_from_dict(raw), plugins=plugins)
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
        return run

    return once, host


async def _time_interleaved(
    onces: list[Callable[[], Awaitable[Any]]], repeat: int, clock: Callable[[], float]
) -> list[float]:
    """The median seconds of each runner, sampled in turn after a warm-up, GC paused."""
    for once in onces:
        for _ in range(max(3, repeat // 10)):
            await once()
    samples: list[list[float]] = [[] for _ in onces]
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            for index, once in enumerate(onces):
                started = clock()
                await once()
                samples[index].append(clock() - started)
    finally:
        gc.enable()
    return [statistics.median(s) for s in samples]


def _shapes(times: list[float]) -> dict[str, float]:
    answer, one, two = times
    per_call = (two - one) / ROUNDS
    return {
        "run": answer,
        "run_10x1": one,
        "per_call": per_call,
        "per_round": (one - answer) / ROUNDS - per_call,
    }


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:8.1f} µs"


async def main(repeat: int) -> int:
    shapes = [(1, 0), (1, ROUNDS), (2, ROUNDS)]
    modes = {
        "off": "otel off",
        "on": "otel on (batch processor)",
        "down": "otel on, collector down",
    }
    onces: list[Callable[[], Awaitable[Any]]] = []
    hosts: list[Any] = []
    for mode in modes:
        for calls, rounds in shapes:
            once, host = _runner(calls, rounds, mode)
            onces.append(once)
            hosts.append(host)
    cpu = await _time_interleaved(onces, repeat, time.process_time)
    figures = {mode: _shapes(cpu[3 * i : 3 * i + 3]) for i, mode in enumerate(modes)}
    # The hosts with the collector down are the last three; their close is bounded.
    closing = time.perf_counter()
    for host in hosts[-3:]:
        await host.aclose()
    close_down = (time.perf_counter() - closing) / 3
    for host in hosts[:-3]:
        await host.aclose()

    print(f"Python {sys.version.split()[0]}; {ROUNDS} rounds; median of {repeat} runs (CPU time)\n")
    for mode, name in modes.items():
        f = figures[mode]
        print(
            f"{name:<28} run {_us(f['run'])} | 10x1 {_us(f['run_10x1'])} | "
            f"per round {_us(f['per_round'])} | per call {_us(f['per_call'])}"
        )
    off, on, down = figures["off"], figures["on"], figures["down"]
    added_call = on["per_call"] - off["per_call"]
    added_round = on["per_round"] - off["per_round"]
    print(
        f"\nadded by the plugin: {added_call * 1e6:.1f} µs per tool call "
        f"({on['per_call'] / off['per_call']:.2f}× off), {added_round * 1e6:.1f} µs per round "
        f"({on['per_round'] / off['per_round']:.2f}× off), "
        f"{(on['run'] - off['run']) * 1e6:.1f} µs per run"
    )
    print(
        f"collector down against up: a 10-round run {down['run_10x1'] / on['run_10x1']:.2f}×; "
        f"closing such a host took {close_down:.2f} s (flush_timeout 0.5 s)"
    )
    floor = _sdk_floor(max(repeat // 4, 10))
    ratio = added_call / floor
    print(
        f"floor: the SDK alone needs {floor * 1e6:.1f} µs for one tool call's span and histogram "
        f"value; the plugin adds {ratio:.2f}× that per call"
    )
    ok = ratio <= TARGET_FLOOR_RATIO
    print(
        f"target: ≤ {TARGET_FLOOR_RATIO:.1f}× the SDK's floor per tool call: "
        f"{'met' if ok else 'MISSED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    args = parser.parse_args()
    status = asyncio.run(main(40 if args.quick else 200))
    sys.exit(status if args.check else 0)
