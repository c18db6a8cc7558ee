"""toolwire as users run it, against a bare aiohttp client on the same loopback server.

The provider is a fake server of ``toolwire.testing`` (and ``toolwire_gemini.testing``) in a
process of its own. It answers a conversation whose model is ``e2e-R`` with one call of the
``basics`` plugin's ``calculator`` per round for R rounds, then a text, by counting the tool
results in the request (so one server serves every client, without state).

What runs, per adapter (``openai-chat``, ``openai-responses``, ``anthropic-messages``,
``gemini``), streamed and not:

- ``run``: ``toolwire run --json PROMPT`` (the CLI; defaults, ledger on; ``[tools.basics] offer
  = "always"`` and limits that let 300 rounds through) at 1, 20 and 300 rounds;
- ``chat``: ``toolwire chat`` in a pseudo-terminal (pexpect): one typed line whose turn takes
  1, 20 or 300 rounds, rendered live, then ``/exit``;
- ``batch``: ``toolwire batch`` of 100 runs of one round each, at the default concurrency (4).

The bare client (``--bare``, this file) is what a person would write with aiohttp: it keeps
the wire messages as a list, starting from the very body toolwire sent first (the same tools,
system text and prompt), appends each answer and its results as the API wants them, encodes
the whole body with ``json.dumps`` every round (aiohttp's own default), decodes answers with
``json.loads`` (streamed ones event by event, assembling the calls), answers each call with
what the ``calculator`` tool answers (the tool's own evaluator: the tool's work is not the
client's), and in a terminal prints one line per call and the answer. For ``batch`` it runs
100 conversations with the same concurrency.

A round is measured as the server sees it: the bench tells the server the process id of the
client it starts, and the server notes the wall clock and the client's CPU time (every
thread's, from ``/proc/PID/task/*/schedstat``) when the conversation's first request arrives
and when its last does. Per round is that window divided by R (per run for ``batch``: from the
first run's first request to the last run's last, divided by the runs): start-up (imports,
config; ``bench/startup.py`` measures it) and what is written after the answer stay out, and
what a process does once (the first call of a tool compiles its validator) is spread over its
rounds. Printed per round: the wall time (what a person waits, the server's work included),
the client's CPU time in the window (its own work, whatever else the machine runs), and the
ratio of the whole processes' CPU time. Samples are interleaved (toolwire, bare, the baseline
tree if any, in turn, the order turned every sample); each time is a median, and each ratio the
median of the turns' ratios (one turn's toolwire against the same turn's bare client: a slow
spell of the machine, common on a shared host, then weighs on both sides of a ratio). Target:
toolwire ≤ 1.3× the bare client's wall time per round at 20 and 300 rounds, every adapter,
streamed and not.

``--baseline REF`` also runs toolwire from the git commit ``REF`` of this repository (see
``bench/_baseline.py``), in the same run, taking turns with the others: before and after
under the same load.

Run: ``python bench/end_to_end.py`` (``--quick``: 3 samples, 1 and 20 rounds; ``--only
run,chat,batch``; ``--apis openai-chat,gemini``; ``--streams on,off``; ``--rounds 1,20,300``;
``--reps N``; ``--first-rounds N``: also the client's CPU in each of the first N rounds of
``run`` and ``chat`` against the median of the later ones, the server reading it at every
request: what a process pays once, round by round).

``--instructions`` counts instead, once per side, the instructions of each round of ``run``
(default 20 rounds) under valgrind's callgrind (``apt-get install valgrind``), cut at each
request the client makes (``_marked.py``): round 1, rounds 2-8, the later rounds and the whole
window, toolwire's against the bare client's. No other process on the machine moves these
figures, and they tell a round's own work from what a process pays once; what they cannot show
is how fast those instructions run (cache misses, the kernel's share, the server).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import _baseline
import attrs

HERE = Path(__file__).resolve()
APIS = ("openai-chat", "openai-responses", "anthropic-messages", "gemini")
PLUGIN = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic-messages": "anthropic",
    "gemini": "gemini",
}
PROMPT = "Add up the numbers, one at a time, with the calculator."
TARGET = 1.3
BATCH_RUNS = 100
CONCURRENCY = 4  # [batch] concurrency's default
_MODEL = re.compile(r"e2e-(\d+)")


# -- the server (its own process) ----------------------------------------------------------------


def rounds_done(api: str, body: Any) -> int:
    """The tool results a request carries: the rounds its conversation has had."""
    if api == "openai-chat":
        return sum(1 for m in body["messages"] if m.get("role") == "tool")
    if api == "openai-responses":
        return sum(1 for i in body["input"] if i.get("type") == "function_call_output")
    if api == "anthropic-messages":
        return sum(
            1
            for m in body["messages"]
            if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        )
    return sum(1 for c in body["contents"] for p in c["parts"] if "functionResponse" in p)


def expression(number: int) -> str:
    """The calculator expression of round ``number`` (distinct, so no call is a duplicate)."""
    return f"{number} + 1"


class Watch:
    """The client being measured (its pid, told by the bench on the server's stdin) and, per
    client, the wall clock and its CPU time when its first request and its last final request
    arrived; with ``detail``, also its CPU time at every request (the rounds one by one)."""

    def __init__(self, detail: bool = False) -> None:
        self.pid = 0
        self.detail = detail
        self.windows: dict[int, list[float]] = {}
        self.requests: dict[int, list[float]] = {}

    def mark(self, first: bool, final: bool) -> None:
        pid = self.pid
        if not pid or not (first or final or self.detail):
            return
        now = (time.perf_counter(), cpu_of(pid))
        if self.detail:
            self.requests.setdefault(pid, []).append(now[1])
        if not (first or final):
            return
        window = self.windows.setdefault(pid, [*now, *now, 0])
        if final:
            window[2:4] = now
            window[4] += 1

    def commands(self) -> None:
        """``pid N``: N is the client now; ``get N``: print N's window; end of input: stop."""
        for line in sys.stdin:
            word, _, number = line.partition(" ")
            if word == "pid":
                self.pid = int(number)
            elif word == "get":
                pid = int(number)
                window = self.windows.pop(pid, None)
                requests = self.requests.pop(pid, [])
                print(json.dumps([window, requests]), flush=True)


def cpu_of(pid: int) -> float:
    """The CPU seconds of every thread of process ``pid`` so far (``schedstat``, in ns)."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return 0.0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as stat:
                total += int(stat.read().split()[0])
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
    return total / 1e9


def _responder(api: str, firsts: Path, watch: Watch, forget: Callable[[], None]) -> Any:
    from toolwire.testing import tool_call

    def respond(request: Any) -> Any:
        forget()  # a fake server keeps every request: a long conversation's would fill memory
        found = _MODEL.search(request.body.get("model") or request.path)
        target = int(found.group(1)) if found else 1
        done = rounds_done(api, request.body)
        watch.mark(done == 0, done >= target)
        if done == 0:
            first = (
                firsts / f"{api}-{'on' if request.stream or 'stream' in request.path else 'off'}"
            )
            if not first.exists():
                first.write_bytes(request.raw)
        if done < target:
            return tool_call("calculator", {"expression": expression(done)})
        return "All added up: done."

    return respond


async def serve(firsts: Path, detail: bool) -> None:
    """``--serve DIR``: the four fake servers, their base URLs on stdout, then the commands of
    :meth:`Watch.commands` until stdin closes (``--detail``: the client's CPU at every
    request)."""
    from toolwire.testing import (
        FakeAnthropicServer,
        FakeOpenAIChatServer,
        FakeOpenAIResponsesServer,
    )
    from toolwire_gemini.testing import FakeGeminiServer

    kinds: dict[str, Any] = {
        "openai-chat": FakeOpenAIChatServer,
        "openai-responses": FakeOpenAIResponsesServer,
        "anthropic-messages": FakeAnthropicServer,
        "gemini": FakeGeminiServer,
    }
    watch = Watch(detail)
    servers: dict[str, Any] = {}

    def forgetting(api: str) -> Callable[[], None]:
        def forget() -> None:
            server = servers[api]
            server.requests.clear()
            # Kept for Gemini's check of the thought signatures sent back: as many as the
            # longest conversation has answers.
            while len(server.answered) > 400:
                del server.answered[next(iter(server.answered))]

        return forget

    for api, kind in kinds.items():
        respond = _responder(api, firsts, watch, forgetting(api))
        servers[api] = kind(respond, chunk_size=16)
    for server in servers.values():
        await server.start()
    try:
        print(json.dumps({api: s.base_url for api, s in servers.items()}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, watch.commands)
    finally:
        for server in servers.values():
            await server.close()


# -- the bare client ----------------------------------------------------------------------------


def _calculate(arguments: Any) -> str:
    """What the ``calculator`` tool answers, worked out by the tool's own evaluator, imported at
    the first call as the tool imports it: the tool's work (its first evaluation sets up several
    milliseconds of tables) is the same on both sides, so the ratio is the client's alone."""
    from toolwire_basics._calculator import evaluate, format_number

    expression = str(arguments["expression"])
    return f"{expression.strip()} = {format_number(evaluate(expression))}"


class Bare:
    """One API's wire, as a hand-written aiohttp client speaks it."""

    def __init__(self, api: str, base_url: str, first: dict[str, Any], rounds: int) -> None:
        self.api = api
        self.stream = bool(first.get("stream"))
        self.body = first
        model = f"e2e-{rounds}"
        if api == "gemini":
            self.url = base_url  # the model is in the URL
        else:
            self.body["model"] = model
            self.url = (
                base_url
                + {
                    "openai-chat": "/chat/completions",
                    "openai-responses": "/responses",
                    "anthropic-messages": "/v1/messages",
                }[api]
            )
        self.headers = {"Content-Type": "application/json"}
        if api == "anthropic-messages":
            self.headers["anthropic-version"] = "2023-06-01"
        self.history: list[Any] = self.body[
            {
                "openai-chat": "messages",
                "openai-responses": "input",
                "anthropic-messages": "messages",
                "gemini": "contents",
            }[api]
        ]

    # Each returns the calls answered, as (id, name, arguments): empty when the model answered.

    def take(self, payload: Any) -> list[tuple[str, str, Any]]:
        api = self.api
        if api == "openai-chat":
            message = payload["choices"][0]["message"]
            calls = message.get("tool_calls") or []
            self.history.append(
                {"role": "assistant", "content": message.get("content") or "", "tool_calls": calls}
                if calls
                else {"role": "assistant", "content": message.get("content") or ""}
            )
            return [
                (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                for c in calls
            ]
        if api == "openai-responses":
            output = payload["output"]
            self.history.extend(output)
            return [
                (i["call_id"], i["name"], json.loads(i["arguments"]))
                for i in output
                if i["type"] == "function_call"
            ]
        if api == "anthropic-messages":
            blocks = payload["content"]
            self.history.append({"role": "assistant", "content": blocks})
            return [(b["id"], b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"]
        content = payload["candidates"][0]["content"]
        self.history.append(content)
        return [
            (p["functionCall"].get("id", ""), p["functionCall"]["name"], p["functionCall"]["args"])
            for p in content["parts"]
            if "functionCall" in p
        ]

    def answer(self, calls: list[tuple[str, str, Any]]) -> None:
        api = self.api
        results = [(i, n, _calculate(a)) for i, n, a in calls]
        if api == "openai-chat":
            for call_id, _, text in results:
                self.history.append({"role": "tool", "tool_call_id": call_id, "content": text})
        elif api == "openai-responses":
            for call_id, _, text in results:
                self.history.append(
                    {"type": "function_call_output", "call_id": call_id, "output": text}
                )
        elif api == "anthropic-messages":
            self.history.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": i, "content": t}
                        for i, _, t in results
                    ],
                }
            )
        else:
            self.history.append(
                {
                    "role": "user",
                    "parts": [
                        {"functionResponse": {"id": i, "name": n, "response": {"output": t}}}
                        for i, n, t in results
                    ],
                }
            )

    def assemble(self, events: list[dict[str, Any]]) -> Any:
        """The whole answer of a stream, from its events (as the API's own clients do)."""
        api = self.api
        if api == "openai-chat":
            text: list[str] = []
            calls: dict[int, dict[str, Any]] = {}
            for event in events:
                for choice in event.get("choices") or ():
                    delta = choice.get("delta") or {}
                    if delta.get("content"):
                        text.append(delta["content"])
                    for part in delta.get("tool_calls") or ():
                        call = calls.setdefault(
                            part["index"],
                            {
                                "id": "",
                                "type": "function",
                                "function": {"name": "", "arguments": ""},
                            },
                        )
                        call["id"] = part.get("id") or call["id"]
                        function = part.get("function") or {}
                        call["function"]["name"] += function.get("name") or ""
                        call["function"]["arguments"] += function.get("arguments") or ""
            message = {"content": "".join(text), "tool_calls": [calls[i] for i in sorted(calls)]}
            return {"choices": [{"message": message}]}
        if api == "openai-responses":
            output = [e["item"] for e in events if e.get("type") == "response.output_item.done"]
            return {"output": output}
        if api == "anthropic-messages":
            blocks: dict[int, dict[str, Any]] = {}
            partial: dict[int, list[str]] = {}
            for event in events:
                kind = event.get("type")
                if kind == "content_block_start":
                    blocks[event["index"]] = dict(event["content_block"])
                elif kind == "content_block_delta":
                    delta = event["delta"]
                    if delta["type"] == "text_delta":
                        blocks[event["index"]]["text"] += delta["text"]
                    elif delta["type"] == "input_json_delta":
                        partial.setdefault(event["index"], []).append(delta["partial_json"])
            for index, pieces in partial.items():
                blocks[index]["input"] = json.loads("".join(pieces) or "{}")
            return {"content": [blocks[i] for i in sorted(blocks)]}
        parts: list[dict[str, Any]] = []
        for event in events:
            for candidate in event.get("candidates") or ():
                for part in (candidate.get("content") or {}).get("parts") or ():
                    if parts and set(part) == {"text"} and set(parts[-1]) == {"text"}:
                        parts[-1]["text"] += part["text"]
                    else:
                        parts.append(dict(part))
        return {"candidates": [{"content": {"role": "model", "parts": parts}}]}


async def _bare_conversation(session: Any, bare: Bare, show: Callable[[str], None] | None) -> int:
    rounds = 0
    while True:
        data = json.dumps(bare.body).encode()
        async with session.post(bare.url, data=data, headers=bare.headers) as response:
            if response.status != 200:
                raise SystemExit(
                    f"bare {bare.api}: HTTP {response.status}: {await response.text()}"
                )
            if bare.stream:
                events = []
                async for line in response.content:
                    if line.startswith(b"data: ") and line[6:].strip() != b"[DONE]":
                        events.append(json.loads(line[6:]))
                payload = bare.assemble(events)
            else:
                payload = json.loads(await response.read())
        calls = bare.take(payload)
        if not calls:
            if show is not None:
                show("All added up: done.")
            return rounds
        if show is not None:
            for _, name, arguments in calls:
                show(f"{name}({json.dumps(arguments)})")
        bare.answer(calls)
        rounds += 1


def _bare_for(api: str, base_url: str, first: bytes, rounds: int, stream: bool) -> Bare:
    body = json.loads(first)
    if api == "gemini":
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        url = f"{base_url}/v1beta/models/e2e-{rounds}:{method}"
        bare = Bare(api, url, body, rounds)
        bare.stream = stream
        return bare
    return Bare(api, base_url, body, rounds)


async def bare_main(args: argparse.Namespace) -> int:
    """``--bare``: the bare client's conversations (``--runs`` of them, ``--concurrency`` at a
    time); with ``--chat``, one typed turn at a ``› `` prompt, as in a terminal."""
    import aiohttp

    first = Path(args.first).read_bytes()  # noqa: ASYNC240 (before any request)
    stream = args.stream == "on"
    async with aiohttp.ClientSession() as session:
        if args.chat:
            line = await asyncio.to_thread(input, "› ")
            del line  # the typed line is the prompt of the first body
            bare = _bare_for(args.api, args.url, first, args.rounds, stream)

            def show(text: str) -> None:
                sys.stdout.write(text + "\n")
                sys.stdout.flush()

            done = await _bare_conversation(session, bare, show)
            await asyncio.to_thread(input, "› ")
        else:
            gate = asyncio.Semaphore(args.concurrency)

            async def one() -> int:
                async with gate:
                    bare = _bare_for(args.api, args.url, first, args.rounds, stream)
                    return await _bare_conversation(session, bare, None)

            counts = await asyncio.gather(*(one() for _ in range(args.runs)))
            done = counts[0]
    if done != args.rounds:
        raise SystemExit(f"bare {args.api}: {done} rounds, expected {args.rounds}")
    return 0


# -- measuring ----------------------------------------------------------------------------------


class Setup:
    """The files and environment every measured process shares."""

    def __init__(self, work: Path, server: Server, firsts: Path, baseline: Path | None):
        self.work = work
        self.server = server
        self.urls = server.urls
        self.firsts = firsts
        self.baseline = baseline
        home = work / "home"
        home.mkdir(exist_ok=True)
        self.env = {
            **os.environ,
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_STATE_HOME": str(home / "state"),
            "TERM": "xterm-256color",
            "COLUMNS": "120",
            "LINES": "40",
            "PROMPT_TOOLKIT_NO_CPR": "1",  # no cursor-position request to answer
        }
        self.env.pop("TOOLWIRE_CONFIG", None)
        self.env.pop("TOOLWIRE_PLUGINS", None)

    def env_of(self, side: str) -> dict[str, str]:
        if side != "before" or self.baseline is None:
            return self.env
        tree = self.baseline
        paths = [
            tree / "core",
            *sorted(tree.glob("plugins/*")),
            *sorted(tree.glob("contrib-tools/*")),
        ]
        return {**self.env, "PYTHONPATH": os.pathsep.join(str(p) for p in paths)}

    def config(self, api: str, rounds: int, stream: bool) -> Path:
        path = self.work / f"toolwire-{api}-{rounds}-{'on' if stream else 'off'}.toml"
        if not path.exists():
            url = self.urls[api]
            path.write_text(
                f'[plugins]\nenable = ["{PLUGIN[api]}", "basics"]\n'
                f'[provider]\nadapter = "{api}"\nbase_url = "{url}"\nmodel = "e2e-{rounds}"\n'
                f"stream = {'true' if stream else 'false'}\n"
                f"[loop]\nmax_rounds = {rounds + 5}\nmax_tool_calls = {rounds + 5}\n"
                '[tools.basics]\noffer = "always"\n'
                '[surfaces.batch]\nallow = ["calculator"]\n'
                f'[ledger]\npath = "{self.work / "ledger.sqlite3"}"\n',
                encoding="utf-8",
            )
        return path

    def first(self, api: str, stream: bool) -> Path:
        return self.firsts / f"{api}-{'on' if stream else 'off'}"


@attrs.frozen
class Sample:
    """One measured process: its whole CPU time, and the window from its first request to its
    last final one as the server saw it (wall seconds, the client's CPU seconds), and with
    ``--first-rounds`` the client's CPU seconds of each round (from one request to the next)."""

    cpu: float
    wall_window: float
    cpu_window: float
    rounds: tuple[float, ...] = ()


class Server:
    """The fake servers' process, and the channel that tells it which client to watch."""

    def __init__(self, firsts: Path, detail: bool) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE), "--serve", str(firsts), *(["--detail"] if detail else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self._in, self._out = self.process.stdin, self.process.stdout
        line = self._out.readline()
        try:
            self.urls: dict[str, str] = json.loads(line)
        except ValueError:
            self.process.kill()
            raise SystemExit(f"the fake servers did not start (they said {line!r})") from None

    def watch(self, pid: int) -> None:
        self._in.write(f"pid {pid}\n")
        self._in.flush()

    def window(self, pid: int, finals: int) -> tuple[float, float, tuple[float, ...]]:
        """The wall and CPU seconds of client ``pid``'s window, and its CPU seconds per round
        (empty without ``--detail``)."""
        self._in.write(f"get {pid}\n")
        self._in.flush()
        window, requests = json.loads(self._out.readline())
        if window is None or window[4] != finals:
            raise SystemExit(
                f"the server saw {window} of client {pid}, not {finals} final requests"
            )
        rounds = tuple(b - a for a, b in itertools.pairwise(requests))
        return window[2] - window[0], window[3] - window[1], rounds

    def close(self) -> None:
        self._in.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a connection a client left open holds it up
            self.process.kill()
            self.process.wait()


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _process(
    server: Server, argv: list[str], env: dict[str, str], cwd: Path, finals: int, out: Path | None
) -> Sample:
    """Run ``argv`` to its end (stdout to ``out``), watched by the server."""
    before = _cpu_of_children()
    with open(out or os.devnull, "wb") as sink:
        child = subprocess.Popen(
            argv, env=env, cwd=cwd, stdout=sink, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
        )
        server.watch(child.pid)
        _, errors = child.communicate()
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({child.returncode}): {errors.decode()}")
    cpu = _cpu_of_children() - before
    return Sample(cpu, *server.window(child.pid, finals))


def _bare(setup: Setup, api: str, rounds: int, stream: bool, *more: str) -> list[str]:
    return [
        sys.executable, str(HERE), "--bare", "--api", api, "--url", setup.urls[api],
        "--first", str(setup.first(api, stream)), "--rounds", str(rounds),
        "--stream", "on" if stream else "off", *more,
    ]  # fmt: skip


def _toolwire(setup: Setup, api: str, rounds: int, stream: bool, *command: str) -> list[str]:
    config = setup.config(api, rounds, stream)
    return [sys.executable, "-m", "toolwire", "--config", str(config), *command]


def measure_run(setup: Setup, side: str, api: str, rounds: int, stream: bool) -> Sample:
    """``toolwire run --json`` (or the bare client's conversation) of ``rounds`` rounds."""
    if side == "bare":
        return _process(
            setup.server, _bare(setup, api, rounds, stream), setup.env, setup.work, 1, None
        )
    argv = _toolwire(setup, api, rounds, stream, "run", "--json", PROMPT)
    out = setup.work / "run.json"
    sample = _process(setup.server, argv, setup.env_of(side), setup.work, 1, out)
    run = json.loads(out.read_bytes())
    if run["stop_reason"] != "answered" or len(run["tool_calls"]) != rounds:
        raise SystemExit(f"{side} {api}: {run['stop_reason']} after {len(run['tool_calls'])} calls")
    return sample


def measure_chat(setup: Setup, side: str, api: str, rounds: int, stream: bool) -> Sample:
    """``toolwire chat`` in a pseudo-terminal (or the bare client printing as it goes): one
    typed turn of ``rounds`` rounds, then ``/exit``."""
    import pexpect

    if side == "bare":
        argv = _bare(setup, api, rounds, stream, "--chat")
        env = setup.env
    else:
        argv = _toolwire(setup, api, rounds, stream, "chat")
        env = setup.env_of(side)
    before = _cpu_of_children()
    child = pexpect.spawn(
        argv[0], argv[1:], env=env, cwd=str(setup.work), timeout=600, dimensions=(40, 120),
        encoding="utf-8",
    )  # fmt: skip
    setup.server.watch(child.pid)
    try:
        child.expect_exact("›")  # prompt_toolkit draws the space as a cursor move
        child.send(PROMPT + "\r")
        child.expect_exact("done.")
        child.expect_exact("›")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
        child.wait()  # reaped here, so its CPU time is counted
    finally:
        child.close(force=True)
    if child.exitstatus not in (0, None):
        raise SystemExit(f"{side} chat {api} exited {child.exitstatus}")
    return Sample(_cpu_of_children() - before, *setup.server.window(child.pid, 1))


def measure_batch(setup: Setup, side: str, api: str, runs: int, stream: bool) -> Sample:
    """``toolwire batch`` of ``runs`` runs of one round (or the bare client's conversations,
    as many at a time)."""
    if side == "bare":
        more = ("--runs", str(runs), "--concurrency", str(CONCURRENCY))
        argv = _bare(setup, api, 1, stream, *more)
        return _process(setup.server, argv, setup.env, setup.work, runs, None)
    source = setup.work / f"batch-{runs}.jsonl"
    if not source.exists():
        lines = (json.dumps({"id": str(i), "prompt": PROMPT}) for i in range(runs))
        source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = setup.work / "batch.out.jsonl"
    out.unlink(missing_ok=True)
    argv = _toolwire(setup, api, 1, stream, "batch", str(source), "--out", str(out))
    sample = _process(setup.server, argv, setup.env_of(side), setup.work, runs, None)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    if len(records) != runs or any(r["status"] != "done" for r in records):
        raise SystemExit(f"{side} batch {api}: {records[:2]}")
    return sample


def count_rounds(setup: Setup, side: str, api: str, rounds: int, stream: bool) -> list[float]:
    """The instructions of each round of one run (``--instructions``), from each request to the
    next as the client makes them, counted by valgrind's callgrind (``_marked.py`` marks the
    requests); the server is not counted."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    if side == "bare":
        argv, env = _bare(setup, api, rounds, stream), setup.env
    else:
        argv = _toolwire(setup, api, rounds, stream, "run", "--json", PROMPT)
        env = setup.env_of(side)
    marked = [argv[0], str(HERE.parent / "_marked.py"), *argv[1:]]
    with tempfile.TemporaryDirectory(prefix="callgrind-") as tmp:
        out = Path(tmp) / "out"
        counted = subprocess.run(
            [valgrind, "--tool=callgrind", "--dump-before=getppid",
             f"--callgrind-out-file={out}", *marked],
            env={**env, "PYTHONHASHSEED": "0"}, cwd=setup.work,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        if counted.returncode != 0:
            raise SystemExit(f"{side} {api} under callgrind: {counted.stderr.decode()[-2000:]}")
        dumps = sorted(Path(tmp).glob("out.*"), key=lambda path: int(path.suffix[1:]))
        counts = [_instructions(path) for path in dumps]
    # Dump 1 is start-up; dump k + 1 is request k to request k + 1; the last, the final
    # request to the end of the program.
    if len(counts) != rounds + 2:
        raise SystemExit(f"{side} {api}: {len(counts)} windows, expected {rounds + 2}")
    return counts[1 : rounds + 1]


def _instructions(dump: Path) -> float:
    with dump.open(encoding="utf-8") as lines:
        for line in lines:
            if line.startswith(("summary:", "totals:")):
                return float(line.split()[1])
    raise SystemExit(f"no totals in {dump}")


MEASURES: dict[str, Callable[[Setup, str, str, int, bool], Sample]] = {
    "run": measure_run,
    "chat": measure_chat,
    "batch": measure_batch,
}


def _cases(
    kinds: list[str], apis: list[str], streams: list[bool], rounds: list[int]
) -> Iterator[tuple[str, str, bool, int]]:
    for kind in kinds:
        for api in apis:
            for stream in streams:
                for size in [BATCH_RUNS] if kind == "batch" else rounds:
                    yield kind, api, stream, size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 samples; 1 and 20 rounds")
    parser.add_argument("--reps", type=int, help="samples of each figure (default 5)")
    parser.add_argument("--only", default="run,chat,batch", help="run, chat, batch")
    parser.add_argument("--apis", default=",".join(APIS))
    parser.add_argument("--streams", default="off,on")
    parser.add_argument("--rounds", help="round counts (default 1,20,300)")
    parser.add_argument("--baseline", metavar="REF", help="also run toolwire from commit REF")
    parser.add_argument(
        "--first-rounds",
        type=int,
        default=0,
        metavar="N",
        help="also print the client CPU of each of the first N rounds of run and chat",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count each round's instructions of run under callgrind instead (valgrind)",
    )
    parser.add_argument("--detail", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--bare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--chat", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--api", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--first", help=argparse.SUPPRESS)
    parser.add_argument("--stream", help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(Path(args.serve), args.detail))
        return 0
    if args.bare:
        args.rounds = int(args.rounds)
        return asyncio.run(bare_main(args))
    reps = args.reps or (3 if args.quick else 5)
    default = "20" if args.instructions else "1,20" if args.quick else "1,20,300"
    rounds = [int(r) for r in (args.rounds or default).split(",")]
    if args.instructions and min(rounds) < 9:
        raise SystemExit(f"--instructions: --rounds {args.rounds} must be 9 or more")
    kinds = args.only.split(",")
    apis = args.apis.split(",")
    streams = [s == "on" for s in args.streams.split(",")]
    samples: dict[tuple[str, str, str, bool, int], list[Sample]] = {}
    with tempfile.TemporaryDirectory(prefix="toolwire-e2e-") as tmp:
        work = Path(tmp)
        firsts = work / "firsts"
        firsts.mkdir()
        baseline = _baseline.tree(work, args.baseline) if args.baseline else None
        server = Server(firsts, args.first_rounds > 0)
        setup = Setup(work, server, firsts, baseline)
        sides = ["toolwire", "bare", *(["before"] if baseline else [])]
        try:
            for api in apis:  # the first bodies the bare client starts from
                for stream in streams:
                    measure_run(setup, "toolwire", api, 1, stream)
            if args.instructions:
                counted = {
                    (side, api, stream, size): count_rounds(setup, side, api, size, stream)
                    for api in apis
                    for stream in streams
                    for size in rounds
                    for side in sides
                }
                _report_instructions(counted)
                return 0
            cases = list(_cases(kinds, apis, streams, rounds))
            for rep in range(reps):
                for kind, api, stream, size in cases:
                    for side in sides if rep % 2 == 0 else sides[::-1]:
                        sample = MEASURES[kind](setup, side, api, size, stream)
                        samples.setdefault((side, kind, api, stream, size), []).append(sample)
                print(f"sample {rep + 1} of {reps} taken", file=sys.stderr, flush=True)
        finally:
            server.close()
    _report(samples, sides, cases, reps, args.baseline)
    if args.first_rounds:
        _report_rounds(samples, sides, cases, args.first_rounds)
    return 0


def _report(
    samples: dict[tuple[str, str, str, bool, int], list[Sample]],
    sides: list[str],
    cases: list[tuple[str, str, bool, int]],
    reps: int,
    baseline: str | None,
) -> None:
    def values(side: str, case: tuple[str, str, bool, int], field: str) -> list[float]:
        return [getattr(s, field) for s in samples[(side, *case)]]

    def median(side: str, case: tuple[str, str, bool, int], field: str) -> float:
        return statistics.median(values(side, case, field)) / (case[3] if field != "cpu" else 1)

    def ratio(side: str, case: tuple[str, str, bool, int], field: str) -> float:
        """The median of the samples' ratios to the bare client's taken in the same turn
        (each turn runs the sides back to back, so a slower spell of the machine weighs on
        both sides of a ratio rather than on one side's median)."""
        pairs = zip(values(side, case, field), values("bare", case, field), strict=True)
        return statistics.median(ours / floor for ours, floor in pairs)

    print(
        f"Median of {reps}. Per round (per run for batch): the window from the client's first "
        "request to its last, as the server saw it: wall time, and the client's CPU time in it. "
        "Process: the client's whole CPU time (start-up and output included). A ratio is the "
        "median of each turn's ratio to the bare client's sample of the same turn."
        + (f" In brackets: commit {baseline}." if baseline else "")
    )
    kind = None
    missed = 0
    for case in cases:
        if case[0] != kind:
            kind = case[0]
            unit = "run" if kind == "batch" else "round"
            print(f"\n{kind}: ms per {unit}, toolwire / bare = ratio")
            print(f"{'':<40}{'wall':>34}{'client CPU':>34}{'process':>18}")
        _, api, stream, size = case
        label = f"{api}, {'streamed' if stream else 'not streamed'}, {size}"
        cells = []
        for field in ("wall_window", "cpu_window", "cpu"):
            ours, floor = (median(side, case, field) for side in ("toolwire", "bare"))
            paired = ratio("toolwire", case, field)
            cell = f"{paired:.2f}x"
            if field != "cpu":
                cell = f"{ours * 1e3:.2f}/{floor * 1e3:.2f} {cell}"
            if baseline:
                cell += f" ({ratio('before', case, field):.2f}x)"
            if field == "wall_window" and kind != "batch" and size >= 20 and paired > TARGET:
                cell += " !"
                missed += 1
            cells.append(f"{cell:>{18 if field == 'cpu' else 34}}")
        print(f"{label:<40}" + "".join(cells))
    print(
        f"\ntarget: toolwire <= {TARGET}x the bare client's wall time per round at 20 and 300 "
        f"rounds: {'met' if not missed else f'missed {missed} times (!)'}"
    )


def _report_rounds(
    samples: dict[tuple[str, str, str, bool, int], list[Sample]],
    sides: list[str],
    cases: list[tuple[str, str, bool, int]],
    first: int,
) -> None:
    """The client's CPU in each of the first rounds against a later round's (``--first-rounds``):
    what a process pays once, round by round."""
    print(
        f"\nclient CPU of rounds 1-{first}, then the median of the later rounds, in ms (median of "
        f"the samples); extra: what rounds 1-{first} cost beyond {first} later rounds"
    )
    for case in cases:
        kind, api, stream, size = case
        if kind == "batch" or size <= first:
            continue
        print(f"{kind} {api}, {'streamed' if stream else 'not streamed'}, {size}")
        for side in sides:
            taken = [s.rounds for s in samples[(side, *case)] if len(s.rounds) == size]
            if not taken:
                continue
            each = [statistics.median(r[i] for r in taken) * 1e3 for i in range(first)]
            later = statistics.median(statistics.median(r[first:]) for r in taken) * 1e3
            extra = sum(each) - first * later
            cells = " ".join(f"{ms:6.2f}" for ms in each)
            print(f"  {side:<9}{cells} | {later:5.2f}  extra {extra:6.2f}")


def _report_instructions(counted: dict[tuple[str, str, bool, int], list[float]]) -> None:
    """``--instructions``: each side's instructions in round 1 (what a process does once), in
    rounds 2-8 (while CPython 3.11 specialises code that runs once a round, from its ninth call)
    and in the later rounds, and over the whole window, against the bare client's."""
    print(
        "instructions per round, in millions (callgrind; a round runs from one request to the "
        "next); window: rounds 1 to R, the span the wall-time figures measure"
    )
    print(f"{'':<44}{'round 1':>9}{'2-8':>7}{'9-R':>7}{'window':>9}{'/ bare':>8}")
    for (side, api, stream, size), each in counted.items():
        floor = sum(counted[("bare", api, stream, size)])
        cells = (
            f"{each[0] / 1e6:9.2f}{statistics.mean(each[1:8]) / 1e6:7.2f}"
            f"{statistics.mean(each[8:]) / 1e6:7.2f}{sum(each) / 1e6:9.2f}{sum(each) / floor:7.2f}x"
        )
        label = f"{api}, {'streamed' if stream else 'not streamed'}, {size}: {side}"
        print(f"{label:<44}{cells}")


if __name__ == "__main__":
    sys.exit(main())
