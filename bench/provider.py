"""Benchmark: one provider round through toolwire-openai against a bare aiohttp client.

One round is a Chat Completions request with one offered tool and a non-streamed answer holding
one tool call, sent to the loopback fake server of ``toolwire.testing``. toolwire renders the
request, sends it through the host transport (retry loop, timeouts, key handling) and parses the
answer into a canonical turn; the floor is a bare ``aiohttp.ClientSession`` posting the same body
(rendered in advance; serialised per request with ``json.dumps``) to the same server and decoding
the JSON answer. The server runs in a process of its own (``--serve``), so the CPU time measured
in this process is the clients' alone; both clients share one event loop and the same server,
and run in many short alternating blocks; the ratio is the median of the ratios of neighbouring
blocks, so load that comes and goes favours neither side. Target: toolwire ≤ 1.2× the floor.

Then it runs ``bench/streaming_args.py`` for the streaming figures: parse time of 10 KB and
100 KB of arguments in one-character deltas (ratio ≤ 12: linear), and 20 KB against re-parsing
the whole buffer with jiter after every delta (≥ 20× faster).

Run: ``python bench/provider.py`` (``--quick`` for fewer rounds; ``--check`` to exit with status
1 when a target is missed). Needs ``toolwire-openai`` installed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

from toolwire import FunctionSpec
from toolwire.adapters import ModelRequest
from toolwire.config import ProviderConfig
from toolwire.http._transport import Transport
from toolwire.messages import AssistantMessage, UserMessage
from toolwire.testing import FakeOpenAIChatServer, RecordedRequest, tool_call
from toolwire_openai import OpenAIChatAdapter, render_chat_request

TARGET_RATIO = 1.2

WEATHER = FunctionSpec(
    name="get_weather",
    description="The current weather in a city.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city, e.g. Paris."},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
)
ANSWER = tool_call("get_weather", {"city": "Paris", "unit": "celsius"})


def answer_every_request(request: RecordedRequest) -> Any:
    return ANSWER


async def toolwire_rounds(adapter: OpenAIChatAdapter, request: ModelRequest, rounds: int) -> float:
    def emit(event: Any) -> None:
        return None

    started = time.process_time()
    for _ in range(rounds):
        message = await adapter.complete(request, emit)
    elapsed = time.process_time() - started
    assert isinstance(message, AssistantMessage)
    assert message.tool_calls[0].arguments == {"city": "Paris", "unit": "celsius"}
    return elapsed / rounds


async def floor_rounds(
    session: aiohttp.ClientSession, url: str, body: dict[str, Any], rounds: int
) -> float:
    headers = {"Content-Type": "application/json"}
    started = time.process_time()
    for _ in range(rounds):
        data = json.dumps(body).encode()
        async with session.post(url, data=data, headers=headers) as response:
            payload = json.loads(await response.read())
    elapsed = time.process_time() - started
    assert payload["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"
    return elapsed / rounds


async def serve() -> None:
    """``--serve``: the fake server, answering every request, until stdin closes."""
    async with FakeOpenAIChatServer(answer_every_request) as server:
        print(server.base_url, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        print(len(server.requests), flush=True)


def measure_round(rounds: int, blocks: int) -> dict[str, float]:
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None
    assert child.stdout is not None
    try:
        base_url = child.stdout.readline().strip()
        if not base_url.startswith("http://127.0.0.1:"):
            raise SystemExit(f"the fake server did not start (it said {base_url!r})")
        figures = asyncio.run(_measure_against(base_url, rounds, blocks))
    finally:
        child.stdin.close()
        served = child.stdout.readline().strip()
        child.wait(timeout=30)
    figures["requests"] = float(served or 0)
    return figures


async def _measure_against(base_url: str, rounds: int, blocks: int) -> dict[str, float]:
    config = ProviderConfig(adapter="openai-chat", base_url=base_url, model="bench-model")
    url = base_url + "/chat/completions"
    request = ModelRequest(
        run_id="bench",
        round=1,
        messages=(UserMessage("What is the weather in Paris?"),),
        functions=(WEATHER,),
        parallel_tool_calls=False,
    )
    # The floor gets the body already rendered: it serialises it, posts it and decodes the
    # answer, the least any client does.
    body = render_chat_request(request, config)
    transport = Transport(config)
    adapter = OpenAIChatAdapter(config, transport)
    session = aiohttp.ClientSession()
    try:
        # Warm both paths: connections, imports, caches.
        await toolwire_rounds(adapter, request, 20)
        await floor_rounds(session, url, body, 20)
        ours: list[float] = []
        floor: list[float] = []
        gc.disable()
        try:
            for _ in range(blocks):
                floor.append(await floor_rounds(session, url, body, rounds))
                ours.append(await toolwire_rounds(adapter, request, rounds))
        finally:
            gc.enable()
    finally:
        await session.close()
        await transport.aclose()
    ratios = sorted(o / f for o, f in zip(ours, floor, strict=True))
    return {
        "toolwire_round_us": statistics.median(ours) * 1e6,
        "floor_round_us": statistics.median(floor) * 1e6,
        "ratio": statistics.median(ratios),
    }


def streaming_figures() -> dict[str, float] | None:
    path = Path(__file__).with_name("streaming_args.py")
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("streaming_args", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    figures: dict[str, float] = module.run()
    return figures


def main(argv: list[str] | None = None) -> int:
    """Print the figures against their targets; with ``--check``, return 1 when one is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        asyncio.run(serve())
        return 0
    rounds, blocks = (50, 10) if args.quick else (50, 40)
    figures = measure_round(rounds, blocks)
    ok = figures["ratio"] <= TARGET_RATIO
    print(
        f"one round (request + answer with one tool call), loopback, median of {blocks} blocks "
        f"of {rounds} rounds, CPU time of the client (the server runs in its own process; it "
        f"answered {figures['requests']:.0f} requests):"
    )
    print(f"  bare aiohttp client (floor): {figures['floor_round_us']:.0f} µs")
    print(f"  toolwire-openai adapter:     {figures['toolwire_round_us']:.0f} µs")
    verdict = "ok" if ok else "FAIL"
    print(f"  ratio {figures['ratio']:.2f}x (target <= {TARGET_RATIO:g}x) {verdict}")
    streaming = streaming_figures()
    if streaming is None:
        print("bench/streaming_args.py is not there: streaming figures skipped")
    else:
        ratio = streaming["ratio_100kb_to_10kb"]
        print(
            "streaming arguments, 1-char deltas: "
            f"{streaming['chars_10kb']:.0f} chars {streaming['incremental_10kb_s'] * 1e3:.1f} ms, "
            f"{streaming['chars_100kb']:.0f} chars {streaming['incremental_100kb_s'] * 1e3:.1f} ms,"
            f" ratio {ratio:.2f} (target <= 12) {'ok' if ratio <= 12 else 'FAIL'}"
        )
        ok = ok and ratio <= 12
        if "speedup_vs_jiter_reparse" in streaming:
            speedup = streaming["speedup_vs_jiter_reparse"]
            print(
                f"  {streaming['chars_20kb']:.0f} chars: incremental "
                f"{streaming['incremental_20kb_s'] * 1e3:.1f} ms vs jiter re-parse per delta "
                f"{streaming['jiter_reparse_20kb_s'] * 1e3:.0f} ms: {speedup:.1f}x faster "
                f"(target >= 20x) {'ok' if speedup >= 20 else 'FAIL'}"
            )
            ok = ok and speedup >= 20
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
