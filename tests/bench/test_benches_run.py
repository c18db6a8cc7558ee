"""Every bench of ``bench/`` that can run here cheaply runs in its smallest configuration.

The project's speed and memory figures come from these scripts only, never from timed asserts,
so a bench that a change of the core broke (a renamed function, a flag, a config key) must fail
the suite rather than the next person who needs its measure. Each case runs one script as users
do (``python bench/X.py ARGS`` from the repository root, a private HOME and XDG folders) and
checks its report: exit status 0, every row it was asked for, figures that read as numbers and
ratios that are positive and finite. Nothing here asserts how fast anything is: the figures of
so small a run are noise, and the targets are the benches' own business (``--check``).

Left out, and why:

- ``local_model.py``: loads SmolLM2 in two fresh processes (1 and 2 threads) and runs the
  quickstart through each: tens of seconds on two cores, for a bench of the model's speed.
- ``servers.py``: starts llama-cpp-python's OpenAI server once per model and asks it questions:
  10 to 30 minutes by its own account.
- ``startup.py``: builds a virtual environment with the plugins and ten sample distributions
  (pip installs) before it times anything: minutes, and the package index.
- ``schema_fidelity.py``: reads BFCL's function definitions from the ``bfcl-eval`` wheel, which
  only the ``bench`` nox session installs.
- ``extraction.py`` with its pages: they live in ``../shared/data``, outside the repository and
  CI; its ``--adversarial`` half builds its own pages and runs here.
- ``batch.py``'s Ray half: it starts a local Ray cluster (``--no-ray`` runs the rest).
- ``ledger.py --postgres``: needs a PostgreSQL server, which only ``tests/core/ledger``'s
  conftest starts (a few seconds, per session); the SQLite half runs here.
- ``end_to_end.py --instructions`` and ``startup.py --instructions``: valgrind, minutes.
- ``_baseline.py`` and ``_marked.py`` are helpers, ``local_model_questions.py`` and
  ``untrusted_corpus.py`` data: the benches that use them run them (``--baseline`` once, in
  ``end_to_end.py``, the cheapest bench that takes it).
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")  # the one bench/ui.py drives; without it, its page half skips
# A figure as Python prints it; ``inf`` and ``nan`` too, so that they fail the checks.
NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d+)?|\binf\b|\bnan\b)")
RATIO = re.compile(r"(\d+(?:\.\d+)?|\binf|\bnan)\s*[x×]")
MICROSECONDS = re.compile(r"(-?\d+(?:\.\d+)?) µs")
# Web chat conversations bench/surfaces.py leaves idle and sends at once: enough that the bare
# relay's CPU time for them is more than a clock tick (it divides by it).
CONVERSATIONS = 20


# -- running a bench -------------------------------------------------------------------------------


@pytest.fixture
def bench_env(tmp_path: Path) -> dict[str, str]:
    """This process's environment (its ``PYTHONPATH`` too, so the child runs the same tree) with
    a private home and XDG folders: a bench writes no file of the user's."""
    home = tmp_path / "home"
    folders = {
        "HOME": home,
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_STATE_HOME": home / ".local" / "state",
    }
    for folder in folders.values():
        folder.mkdir(parents=True)
    env = {**os.environ, **{name: str(folder) for name, folder in folders.items()}}
    env.pop("TOOLWIRE_BENCH_POSTGRES", None)  # ledger.py runs its SQLite half only
    return env


def run_bench(script: str, args: tuple[str, ...], env: dict[str, str]) -> str:
    """Run ``bench/SCRIPT ARGS`` from the repository root; return its report once it exits 0."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return done.stdout


# -- reading a report ------------------------------------------------------------------------------


def row(report: str, label: str) -> str:
    """The rest of the one line of ``report`` that starts with ``label`` (leading blanks aside)."""
    found = [line.strip()[len(label) :] for line in report.splitlines() if _starts(line, label)]
    assert len(found) == 1, f"{len(found)} lines start with {label!r} in:\n{report}"
    return found[0]


def _starts(line: str, label: str) -> bool:
    """Whether ``line`` starts with ``label`` as a whole word: ``ptype`` is not ``ptype+xml``."""
    text = line.strip()
    if not text.startswith(label) or len(text) == len(label):
        return text == label
    return text[len(label)].isspace() or not label[-1].isalnum()


def numbers(text: str) -> list[float]:
    """Every number written in ``text``, each one finite."""
    found = [float(n) for n in NUMBER.findall(text)]
    assert all(math.isfinite(n) for n in found), text
    return found


def assert_ratios(text: str, count: int) -> None:
    """``text`` writes at least ``count`` ratios (``1.29x``, ``3.95×``), each positive and
    finite."""
    found = [float(r) for r in RATIO.findall(text)]
    assert len(found) >= count, f"{count} ratios expected in {text!r}"
    assert all(math.isfinite(r) and r > 0 for r in found), text


def assert_positive(values: list[float], count: int, text: str) -> None:
    """``values`` holds at least ``count`` figures, each positive."""
    assert len(values) >= count, f"{count} figures expected in {text!r}"
    assert all(v > 0 for v in values), text


def measured_row(report: str, label: str, figures: int, ratios: int = 0) -> list[float]:
    """The figures of ``label``'s row: at least ``figures`` positive ones, ``ratios`` of them
    ratios."""
    rest = row(report, label)
    values = numbers(rest)
    assert_positive(values, figures, rest)
    assert_ratios(rest, ratios)
    return values


# -- what each report must hold --------------------------------------------------------------------


def check_untrusted_filter(report: str) -> None:
    injections, benign = map(int, numbers(row(report, "corpus:")))
    languages = re.findall(r"^([a-z]{2})\s+(\d+) / (\d+)\s+(\d+) / (\d+)\s*$", report, re.M)
    assert sum(int(lang[2]) for lang in languages) == injections, report
    assert sum(int(lang[4]) for lang in languages) == benign, report
    detection, _, false_positives, _ = numbers(row(report, "detection"))
    assert 0 <= detection <= 100, report
    assert 0 <= false_positives <= 100, report


def check_validation(report: str) -> None:
    for label in (
        "floor: fastjsonschema, valid",
        "Tool.validate only, valid",
        "Tool.validate + cattrs, valid",
        "floor: fastjsonschema, invalid",
        "Tool.validate + refusals, invalid",
        "floor: copy the schema through JSON",
        "definition check alone",
        "Tool.from_function",
        "Tool.from_schema",
        "Tool.from_schema, normalize=True",
        "strict projection",
        "chat wire tool, strict",
        "chat wire tool, aliased name",
    ):
        measured_row(report, label, 2, ratios=1)
    assert_ratios(row(report, "valid path:"), 1)
    assert numbers(row(report, "the invalid call gets")) == [4], report


def check_prompted(report: str) -> None:
    for dialect in ("json", "xml", "ptype", "python", "typescript"):
        sizes, speeds = [numbers(line) for line in _rows(report, dialect)]
        assert_positive(sizes, 5, dialect)
        assert_positive(speeds, 6, dialect)
        prompted = row(report, f"prompted {dialect}")
        assert numbers(prompted)[0] > 0, prompted
    measured_row(report, "ptype+xml", 5, ratios=2)
    measured_row(report, "native tools array", 1)


def _rows(report: str, label: str) -> list[str]:
    """Every line that starts with ``label``: a dialect has one in each table."""
    return [line for line in report.splitlines() if _starts(line, label)]


def check_end_to_end(report: str) -> None:
    # wall ms toolwire/bare, its ratio, the client's CPU the same, the processes' ratio; each
    # ratio also against the baseline commit, in brackets
    rest = row(report, "openai-chat, not streamed, 2")
    assert_positive(numbers(rest), 7, rest)
    assert_ratios(rest, 6)
    assert "In brackets: commit HEAD" in report, report
    assert "target: toolwire <= 1.3x" in report, report


def check_retrieval(report: str) -> None:
    for label in (
        "plain aiohttp GET, 127.0.0.1",
        "toolwire.net.fetch, 127.0.0.1",
        "plain aiohttp GET, localhost (cached)",
        "toolwire.net.fetch, localhost",
    ):
        measured_row(report, label, 4, ratios=2)
    assert_ratios(row(report, "safe path wall-clock ratio"), 1)


def check_mcp(report: str) -> None:
    measured_row(report, "SDK ClientSession.call_tool (floor)", 1)
    measured_row(report, "toolwire, MCP tool over stdio", 2, ratios=1)
    measured_row(report, "toolwire, same tool in process", 2, ratios=1)
    measured_row(report, "toolwire tools list, no server", 1)
    measured_row(report, "SDK client, 1 server, list tools", 1)
    measured_row(report, "toolwire tools list, 3 servers", 2, ratios=2)


def check_otel(report: str) -> None:
    for label in ("otel off", "otel on (batch processor)", "otel on, collector down"):
        assert len(MICROSECONDS.findall(row(report, label))) == 4, report
    numbers(row(report, "added by the plugin:"))
    assert_ratios(row(report, "collector down against up:"), 1)
    assert_ratios(row(report, "floor: the SDK alone needs"), 1)


def check_ledger(report: str) -> None:
    for rounds in (1, 10, 50, 100, 200):
        on, off, own = (float(f) for f in MICROSECONDS.findall(row(report, str(rounds))))
        assert min(on, off) > 0, report
        assert math.isfinite(own), report
    numbers(row(report, "slope:"))
    assert_ratios(row(report, "whole run:"), 1)
    measured_row(report, "SQLite", 1)


def check_loop(report: str) -> None:
    for label in (
        "toolwire (defaults: ledger on)",
        "toolwire (ledger on, idempotent tool)",
        "toolwire (defaults, grown ledger)",
        "toolwire (ledger off)",
    ):
        assert len(MICROSECONDS.findall(row(report, label))) == 4, report
    for offered in ("10", "100", "1000"):
        measured_row(report, offered, 3, ratios=1)
    budgets = re.findall(
        r"^\s*(all offered|max_direct)\s+(\d+\.\d+) µs.*\s(\d+\.\d+) µs$", report, re.M
    )
    assert [b[0] for b in budgets] == ["all offered", "max_direct"], report
    assert_ratios(row(report, "all offered / max_direct per round:"), 2)


def check_provider(report: str) -> None:
    measured_row(report, "bare aiohttp client (floor):", 1)
    measured_row(report, "toolwire-openai adapter:", 1)
    measured_row(report, "ratio", 1, ratios=1)
    measured_row(report, "streaming arguments, 1-char deltas:", 6)


def check_provider_bombs(report: str) -> None:
    for case, setting in (
        ("gzip bomb", "provider.max_response_bytes"),
        ("endless SSE line", "provider.max_sse_line_chars"),
        ("endless SSE event", "provider.max_sse_event_chars"),
    ):
        measured_row(report, case, 3, ratios=1)
        assert setting in report, report
    assert_ratios(row(report, "floor: peak growth"), 1)


def check_batch(report: str) -> None:
    for concurrency in (1, 4, 16, 64):
        *rate_ideal_ratio, startup = numbers(row(report, f"local, {concurrency} at a time"))
        assert_positive(rate_ideal_ratio, 3, report)
        assert startup >= 0, report


def check_surfaces(report: str) -> None:
    assert_ratios(row(report, "server CPU per delta:"), 1)
    numbers(row(report, "memory per idle conversation"))
    for server in ("toolwire serve", "bare relay"):
        # the bare relay's CPU time for so few conversations may print as 0.0 s
        at_once = numbers(row(report, f"{CONVERSATIONS} conversations at once, {server}:"))
        assert len(at_once) == 4, report
        assert min(at_once) >= 0, report
    assert_ratios(row(report, "at once, wall time toolwire / bare:"), 2)
    batch = row(report, "toolwire batch:")
    assert_positive(numbers(batch)[:2], 2, batch)  # runs per second, their share of the ideal
    assert "64 runs; ideal 160 runs/s" in report, report


def check_sources(report: str) -> None:
    for mode in ("lexical", "semantic", "hybrid"):
        scores = numbers(row(report, mode))
        assert len(scores) == 6, report
        assert all(0 <= s <= 1 for s in scores), report
    assert_ratios(row(report, "indexing:"), 1)
    for size in (100, 200):
        numbers(row(report, f"query latency at {size} passages:"))
    numbers(row(report, "growth from 100 to 200 passages"))


def check_extraction(report: str) -> None:
    for page in (
        "lists 300 deep",
        "lists 150 deep",
        "tables 150 deep",
        "divs 390 deep",
        "divs endless",
        "lists endless",
        "formatting",
        "runs of <",
        "paragraphs",
    ):
        rest = row(report, page)
        assert len(numbers(rest)) == 3, rest
        assert_ratios(rest, 1)
    assert "growth = time(64 KiB) / time(32 KiB)" in report, report


def check_streaming_args(report: str) -> None:
    measured_row(report, "time ratio 100 KB / 10 KB:", 2)
    cells = re.findall(r"^\s*(\d+)\s+(\d+)\s+(\d+\.\d+)\s+(\S+)\s+(\S+)\s+(incremental|jiter|-)$",
                       report, re.M)  # fmt: skip
    assert [int(c[1]) for c in cells] == [1, 4, 16, 64, 256], report
    assert all(float(c[2]) > 0 for c in cells), report


def check_ui(report: str) -> None:
    for size in ("10 KB", "100 KB"):
        measured_row(report, f"{size} in", 2)
    labels = ["terminal", "expanded"] + (["page", "page exp"] if CHROMIUM.exists() else [])
    for label in labels:
        # one row of each size: the label, its time, then its ratio to receiving the call
        rows = re.findall(
            rf"^\s+{label}\s+(\d+\.\d+) ms\s+{label} / receive\s+(\d+\.\d+)", report, re.M
        )
        assert len(rows) == 2, report
        assert_positive([float(figure) for pair in rows for figure in pair], 4, report)
    growths = ["terminal render", "expanded terminal render"]
    if CHROMIUM.exists():
        growths += ["page (collapsed card)", "page (expanded card)"]
    for growth in growths:
        assert_ratios(row(report, growth), 2)


def check_question_set(report: str) -> None:
    halves = dict(re.findall(r"^(dev|test) (\d+) ", report, re.M))
    assert halves == {"dev": "188", "test": "188"}, report


# -- the cases -------------------------------------------------------------------------------------

CASES: list[tuple[str, str, Callable[[str], None]]] = [
    ("untrusted_filter.py", "", check_untrusted_filter),
    ("validation.py", "--repeat 1 --number 100", check_validation),
    ("prompted.py", "--repeat 1", check_prompted),
    # --baseline HEAD: the benches' before-and-after path (bench/_baseline.py), once, here
    (
        "end_to_end.py",
        "--only run --apis openai-chat --streams off --rounds 2 --reps 1 --baseline HEAD",
        check_end_to_end,
    ),
    ("retrieval.py", "--rounds 1 --fetches 10", check_retrieval),
    ("mcp.py", "--calls 5 --runs 1", check_mcp),
    ("otel.py", "--quick", check_otel),
    ("ledger.py", "--quick", check_ledger),
    ("loop.py", "--quick --rounds 2", check_loop),
    ("provider.py", "--quick", check_provider),
    ("provider_bombs.py", "", check_provider_bombs),
    ("batch.py", "--jobs-per-slot 1 --repeat 1 --no-ray", check_batch),
    (
        "surfaces.py",
        f"--reps 1 --conversations {CONVERSATIONS} --batch-runs 64",
        check_surfaces,
    ),
    ("sources.py", "--sizes 100,200 --queries 2 --documents 20", check_sources),
    ("extraction.py", "--adversarial --rounds 1 --sizes 32,64", check_extraction),
    ("streaming_args.py", "--quick", check_streaming_args),
    ("ui.py", "--runs 1", check_ui),
    ("question_set.py", "--count", check_question_set),
]


@pytest.mark.parametrize(
    ("script", "args", "check"), [pytest.param(*case, id=case[0]) for case in CASES]
)
def test_bench_runs_and_reports_every_row(
    script: str, args: str, check: Callable[[str], None], bench_env: dict[str, str]
) -> None:
    check(run_bench(script, tuple(args.split()), bench_env))
