"""Benchmark: lenient parsing of streamed tool arguments, one character per delta.

Times are CPU time of this process, so other load on the machine does not skew the ratios.

Prints the total time for 10 KB and 100 KB of arguments (reading the lenient value after every
delta, as a UI does) and their ratio against the linear floor, then the speed-up over re-parsing
the whole buffer after every delta with jiter's partial mode.

Then a grid: arguments of 100 characters to 100 KB, streamed in deltas of 1 to 256 characters
(models send a token or a few at a time: a handful of characters; some hosts batch more). For
each, the incremental parser against jiter re-parsing the buffer after every delta, and which of
the two is faster there. Re-parsing costs the square of the size over the delta length, so the
cells where it would take more than about a gigabyte of re-reading are left out (``-``).

Run: ``python bench/streaming_args.py`` (add ``--check`` to exit with status 1 when a floor is
missed; ``--quick`` measures the grid's row of 100 characters only, each cell once instead of
the best of three windows, in seconds instead of a minute: the figures above the grid are the
same).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable

from toolwire._json.partial import PartialJSONParser

MAX_SIZE_RATIO = 12.0  # 10x the text may take at most 12x the time: linear
MIN_SPEEDUP_VS_REPARSE = 20.0

_WORDS = (
    "config",
    "résumé",
    "naïve",
    "東京",
    "données",
    "emoji 😀",
    "path/to/file.py",
    'quote "inside"',
    "tab\there",
    "line\nbreak",
    "back\\slash",
    "return value",
    "ünïcödé",
)


def realistic_arguments(size: int, *, seed: int = 7) -> str:
    """Tool-call arguments of at least ``size`` characters, as a model streams them.

    :param size: the minimum length of the JSON text.
    :param seed: the seed of the generator, so runs are comparable.
    :returns: compact JSON text (non-ASCII kept as is) of an object with strings, numbers,
        booleans, nulls, nested objects and nested lists.
    """
    rng = random.Random(seed)
    edits: list[dict[str, object]] = []
    arguments: dict[str, object] = {
        "path": "src/toolwire/example_module.py",
        "dry_run": False,
        "options": {"encoding": "utf-8", "max_line_length": 100, "ratio": 0.75, "owner": None},
        "edits": edits,
    }
    text = ""
    while len(text) < size:
        count = rng.randint(3, 14)
        edits.append(
            {
                "line": rng.randint(1, 20_000),
                "old": " ".join(rng.choice(_WORDS) for _ in range(count)),
                "new": " ".join(rng.choice(_WORDS) for _ in range(count + 2)),
                "weights": [round(rng.uniform(-1000, 1000), rng.randint(0, 6)) for _ in range(4)],
                "ranges": [[rng.randint(0, 99), rng.randint(100, 999)] for _ in range(2)],
                "confirmed": rng.random() < 0.5,
                "note": None if rng.random() < 0.7 else f"checked {rng.random():.3e}",
            }
        )
        text = json.dumps(arguments, ensure_ascii=False)
    return text


def _deltas(text: str, delta: int) -> list[str]:
    return [text[i : i + delta] for i in range(0, len(text), delta)]


def time_incremental(text: str, *, repeat: int = 1, delta: int = 1) -> float:
    """CPU seconds to feed ``text`` ``delta`` characters at a time, reading the value after each
    delta.

    :param repeat: parse the text this many times in a row (a fresh parser each time) and return
        the average, so that short texts are timed over as long a window as long ones.
    """
    pieces = _deltas(text, delta)
    started = time.process_time()
    for _ in range(repeat):
        parser = PartialJSONParser()
        feed = parser.feed
        for piece in pieces:
            feed(piece)
            parser.value  # noqa: B018 - the read is what is being measured
        result = parser.finish()
    elapsed = (time.process_time() - started) / repeat
    if result != json.loads(text):
        raise AssertionError("the incremental parser disagrees with json.loads")
    return elapsed


def time_jiter_reparse(text: str, *, repeat: int = 1, delta: int = 1) -> float:
    """CPU seconds to re-parse the whole buffer with jiter after each ``delta``-character delta."""
    import jiter

    pieces = _deltas(text, delta)
    started = time.process_time()
    for _ in range(repeat):
        buffer = ""
        for piece in pieces:
            buffer += piece
            jiter.from_json(buffer.encode(), partial_mode="trailing-strings")
    return (time.process_time() - started) / repeat


GRID_SIZES = (100, 1_000, 10_000, 100_000)
GRID_DELTAS = (1, 4, 16, 64, 256)
_REPARSE_BUDGET = 1e9  # characters re-read by one re-parse run at most


def _best(measure: Callable[[int], float], size: int, windows: int = 3) -> float:
    """The best of ``windows`` windows, each repeated to about 100 000 characters of input."""
    repeat = max(1, 100_000 // size)
    return min(measure(repeat) for _ in range(windows))


QUICK_GRID_SIZES = GRID_SIZES[:1]


def grid(
    sizes: tuple[int, ...] = GRID_SIZES, windows: int = 3
) -> list[tuple[int, int, float, float | None]]:
    """``(size, delta, incremental seconds, jiter re-parse seconds or None)`` for each cell of
    the rows ``sizes``, the best of ``windows`` timings each."""
    try:
        import jiter  # noqa: F401
    except ImportError:
        have_jiter = False
    else:
        have_jiter = True
    cells: list[tuple[int, int, float, float | None]] = []
    for size in sizes:
        text = realistic_arguments(size)
        for delta in GRID_DELTAS:
            ours = _best(
                lambda r, t=text, d=delta: time_incremental(t, repeat=r, delta=d), size, windows
            )
            theirs: float | None = None
            if have_jiter and len(text) ** 2 / (2 * delta) <= _REPARSE_BUDGET:
                theirs = _best(
                    lambda r, t=text, d=delta: time_jiter_reparse(t, repeat=r, delta=d),
                    size,
                    windows,
                )
            cells.append((len(text), delta, ours, theirs))
    return cells


def print_grid(cells: list[tuple[int, int, float, float | None]]) -> None:
    """The grid as a table, with where jiter re-parsing is faster."""
    print("\nsize x delta length: incremental / jiter re-parse per delta (CPU ms), faster one")
    print(f"{'chars':>7} {'delta':>6} {'incremental':>12} {'jiter':>10} {'ratio':>7}  faster")
    faster_jiter: list[str] = []
    for size, delta, ours, theirs in cells:
        if theirs is None:
            print(f"{size:>7} {delta:>6} {ours * 1e3:12.3f} {'-':>10} {'-':>7}  -")
            continue
        winner = "incremental" if ours <= theirs else "jiter"
        if winner == "jiter":
            faster_jiter.append(f"{size} chars in {delta}-char deltas")
        print(
            f"{size:>7} {delta:>6} {ours * 1e3:12.3f} {theirs * 1e3:10.3f} "
            f"{theirs / ours:6.1f}x  {winner}"
        )
    if faster_jiter:
        print("jiter re-parsing is faster for: " + "; ".join(faster_jiter))
    else:
        print("jiter re-parsing is faster in no cell measured")


def run() -> dict[str, float]:
    """Measure everything and return the figures (seconds, ratios and sizes in characters)."""
    small = realistic_arguments(10_000)
    large = realistic_arguments(100_000)
    medium = realistic_arguments(20_000)
    # Alternate the sizes over windows of equal length (the small text parsed 10 times per
    # window) and keep the best window of each, so background load favours neither side.
    small_runs: list[float] = []
    large_runs: list[float] = []
    for _ in range(5):
        small_runs.append(time_incremental(small, repeat=10))
        large_runs.append(time_incremental(large))
    small_seconds = min(small_runs)
    large_seconds = min(large_runs)
    medium_seconds = min(time_incremental(medium, repeat=5) for _ in range(3))
    figures = {
        "chars_10kb": float(len(small)),
        "chars_100kb": float(len(large)),
        "chars_20kb": float(len(medium)),
        "incremental_10kb_s": small_seconds,
        "incremental_100kb_s": large_seconds,
        "ratio_100kb_to_10kb": large_seconds / small_seconds,
        "incremental_20kb_s": medium_seconds,
    }
    try:
        reparse_seconds = time_jiter_reparse(medium)
    except ImportError:
        return figures
    figures["jiter_reparse_20kb_s"] = reparse_seconds
    figures["speedup_vs_jiter_reparse"] = reparse_seconds / medium_seconds
    return figures


def main(argv: list[str] | None = None) -> int:
    """Print the figures against their floors; with ``--check``, return 1 when one is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 when a floor is missed")
    parser.add_argument(
        "--quick", action="store_true", help="the grid's row of 100 characters, once"
    )
    args = parser.parse_args(argv)
    figures = run()
    ok = True
    ratio = figures["ratio_100kb_to_10kb"]
    print(
        f"incremental, 1-char deltas, value read after each: "
        f"{figures['chars_10kb']:.0f} chars {figures['incremental_10kb_s'] * 1e3:.1f} ms, "
        f"{figures['chars_100kb']:.0f} chars {figures['incremental_100kb_s'] * 1e3:.1f} ms"
    )
    verdict = "ok" if ratio <= MAX_SIZE_RATIO else "FAIL"
    ok = ok and ratio <= MAX_SIZE_RATIO
    print(f"time ratio 100 KB / 10 KB: {ratio:.2f} (floor <= {MAX_SIZE_RATIO:g}) {verdict}")
    if "speedup_vs_jiter_reparse" in figures:
        speedup = figures["speedup_vs_jiter_reparse"]
        verdict = "ok" if speedup >= MIN_SPEEDUP_VS_REPARSE else "FAIL"
        ok = ok and speedup >= MIN_SPEEDUP_VS_REPARSE
        print(
            f"{figures['chars_20kb']:.0f} chars: incremental "
            f"{figures['incremental_20kb_s'] * 1e3:.1f} ms, jiter re-parse per delta "
            f"{figures['jiter_reparse_20kb_s'] * 1e3:.0f} ms, speed-up {speedup:.1f}x "
            f"(floor >= {MIN_SPEEDUP_VS_REPARSE:g}x) {verdict}"
        )
    else:
        print("jiter is not installed: the re-parse comparison was skipped")
    print_grid(grid(QUICK_GRID_SIZES, windows=1) if args.quick else grid())
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
