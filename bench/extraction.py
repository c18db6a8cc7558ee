"""Main-content extraction: quality and speed of toolwire-web against trafilatura and readability.

Runs every extractor over the pages of the article-extraction benchmark (181 news and blog pages
with hand-checked article bodies) and prints, for each, F1, precision and recall of the text
against the ground truth, the pages per second (of CPU time: the extractors take turns, a
whole pass each, and the best of ``--rounds`` passes counts), and our speed as a multiple of
trafilatura's, in its default mode and in its fast mode (``fast=True``: no fallback
extractors). Floors: F1 >= 0.95 and at least 5x the pages per second of trafilatura's fast
mode.

The metric is the benchmark's: tokens are ``\\w+`` runs, each text becomes the multiset of its
4-token shingles (a text of fewer than 4 tokens is one shingle of all of them), precision and
recall are computed per page and averaged over pages (pages where the measure is undefined are
left out of that average, as the benchmark does), and F1 = 2PR / (P + R) of the averages.
``--sets`` counts distinct shingles instead.

Usage::

    python bench/extraction.py [DATA] [--rounds N] [--limit N] [--only NAME,...] [--sets] [--check]
    python bench/extraction.py --adversarial [--sizes KIB,...] [--check]

``--adversarial`` times our extraction on pages built to be slow (nested lists and tables,
deep ``<div>``s, misnested formatting, runs of ``<``), each at 256 KiB to 2 MiB, and prints the
growth of the time when the page doubles: linear work doubles it. Floor: at most 3x per doubling
(CPU time, best of ``--rounds``), and the 2 MiB page within ``ADVERSARIAL_SECONDS``.
``--sizes 32,64`` builds the pages at those sizes instead (KiB, each double the one before; the
growth is the largest over the one before it): small pages run in a second but show little of
the growth, so the floor's figures are the default sizes'.

DATA is the folder holding ``article-extraction/`` (default: ``$TOOLWIRE_SHARED_DATA``, else
``../shared/data`` beside the repository). Peers that are not installed are skipped:
``pip install trafilatura readability-lxml`` brings them (``html-text`` too, optionally: the
benchmark's own way to turn readability's HTML into text).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import gzip
import importlib
import itertools
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import cast

REPOSITORY = Path(__file__).resolve().parents[1]
F1_FLOOR = 0.95
GROWTH_FLOOR = 3.0  # the most a doubled adversarial page may multiply the time by
ADVERSARIAL_SECONDS = 5.0  # the longest a 2 MiB adversarial page may take
SPEED_FLOOR = 5.0  # times trafilatura's pages per second

try:
    from toolwire_web.extraction import extract_page
except ImportError:  # running from a checkout where toolwire-web is not installed
    sys.path.insert(0, str(REPOSITORY / "contrib-tools" / "web"))
    from toolwire_web.extraction import extract_page

Extractor = Callable[[str, str], str]
_TOKEN = re.compile(r"\w+")


# -- extractors


def _ours() -> Extractor:
    def run(html: str, url: str) -> str:
        return extract_page(html, url=url).text

    return run


def _trafilatura(*, fast: bool = False) -> Extractor | None:
    try:
        import trafilatura
    except ImportError:
        return None

    def run(html: str, url: str) -> str:
        return trafilatura.extract(html, include_comments=False, fast=fast) or ""

    return run


def _trafilatura_fast() -> Extractor | None:
    # `fast=True` skips trafilatura's fallback extractors (its `no_fallback` before 2.0).
    return _trafilatura(fast=True)


def _readability() -> Extractor | None:
    try:
        import lxml.html  # type: ignore[import-untyped]
        from readability import Document  # type: ignore[import-untyped]
    except ImportError:
        return None
    to_text: Callable[[str], str] | None = None
    # html-text is what the article-extraction benchmark itself reads readability's HTML with.
    with contextlib.suppress(ImportError):
        to_text = cast(Callable[[str], str], importlib.import_module("html_text").extract_text)

    def run(html: str, url: str) -> str:
        summary = Document(html).summary(html_partial=True)
        if to_text is not None:
            return to_text(summary)
        return " ".join(lxml.html.fromstring(summary).itertext())

    return run


PEERS: dict[str, Callable[[], Extractor | None]] = {
    "toolwire-web": _ours,
    "trafilatura": _trafilatura,
    "trafilatura (fast)": _trafilatura_fast,
    "readability-lxml": _readability,
}


# -- metric


def shingles(text: str, distinct: bool) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text or "")
    if len(tokens) < 4:
        grams = [tuple(tokens)] if tokens else []
    else:
        grams = [tuple(tokens[i : i + 4]) for i in range(len(tokens) - 3)]
    return Counter(set(grams)) if distinct else Counter(grams)


def score(pairs: Iterable[tuple[str, str]], distinct: bool = False) -> tuple[float, float, float]:
    """F1, precision and recall of extracted texts against true texts, ``(truth, extracted)``."""
    precisions: list[float] = []
    recalls: list[float] = []
    for truth, extracted in pairs:
        expected = shingles(truth, distinct)
        found = shingles(extracted, distinct)
        hits = sum((expected & found).values())
        wrong = sum(found.values()) - hits
        missed = sum(expected.values()) - hits
        perfect = wrong == missed == 0
        if hits + wrong:
            precisions.append(1.0 if perfect else hits / (hits + wrong))
        if hits + missed:
            recalls.append(1.0 if perfect else hits / (hits + missed))
    precision = statistics.mean(precisions) if precisions else 0.0
    recall = statistics.mean(recalls) if recalls else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return f1, precision, recall


# -- adversarial pages


def _filled(unit: str, size: int) -> str:
    return "<html><body>" + unit * max(1, size // len(unit)) + "</body></html>"


def _nested(opening: str, closing: str, depth: int) -> str:
    return opening * depth + closing * depth


ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "lists 300 deep": lambda size: _filled(
        _nested("<ul><li>item text, with words, here", "</li></ul>", 300), size
    ),
    "lists 150 deep": lambda size: _filled(
        _nested("<ul><li>item text, with words, here", "</li></ul>", 150), size
    ),
    "tables 150 deep": lambda size: _filled(
        _nested("<table><tr><td>cell text, with commas, ", "</td></tr></table>", 150), size
    ),
    "divs 390 deep": lambda size: _filled(_nested("<div>some words, here", "</div>", 390), size),
    "divs endless": lambda size: _filled("<div>x", size),
    "lists endless": lambda size: _filled("<ul><li>x", size),
    "formatting": lambda size: _filled("<b><i>x", size),
    "runs of <": lambda size: _filled("<a", size),
    "paragraphs": lambda size: _filled("<p>A paragraph of words, with commas, and more.</p>", size),
}


ADVERSARIAL_SIZES_KIB = (256, 512, 1024, 2048)


def adversarial(rounds: int, check: bool, sizes_kib: Sequence[int] = ADVERSARIAL_SIZES_KIB) -> int:
    """Time extraction of the adversarial pages at growing sizes; 1 when a floor is missed.

    :param sizes_kib: the page sizes in KiB, each double the one before; the growth is the time
        at the largest over the time at the one before it.
    """
    sizes = [kib * 1024 for kib in sizes_kib]
    print(
        f"adversarial pages, CPU seconds (best of {rounds}); growth = "
        f"time({_kib(sizes[-1])}) / time({_kib(sizes[-2])})"
    )
    print(f"{'page':<18}" + "".join(f"{size // 1024:>9} KiB" for size in sizes) + "   growth")
    failed = False
    for name, build in ADVERSARIAL.items():
        times = []
        for size in sizes:
            html = build(size)
            best = float("inf")
            for _ in range(rounds):
                gc.collect()
                started = time.process_time()
                extract_page(html)
                best = min(best, time.process_time() - started)
            times.append(best)
        growth = times[-1] / max(times[-2], 1e-3)
        bad = growth > GROWTH_FLOOR or times[-1] > ADVERSARIAL_SECONDS
        failed |= bad
        row = "".join(f"{seconds:13.3f}" for seconds in times)
        print(f"{name:<18}{row}   {growth:5.2f}x{'  ABOVE FLOOR' if bad else ''}")
    print(
        f"floors: growth <= {GROWTH_FLOOR}x per doubling, {_kib(sizes[-1])} <= "
        f"{ADVERSARIAL_SECONDS} s: " + ("BELOW FLOOR" if failed else "ok")
    )
    return 1 if failed and check else 0


def _kib(size: int) -> str:
    """``size`` bytes as the table's headers write it: ``512 KiB``, ``2 MiB``."""
    return f"{size // 2**20} MiB" if size % 2**20 == 0 else f"{size // 1024} KiB"


def _doubling_sizes(text: str) -> list[int]:
    """The ``--sizes`` option: two or more sizes in KiB, each double the one before."""
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of whole numbers: {text!r}") from None
    if len(sizes) < 2 or sizes[0] < 1 or any(b != 2 * a for a, b in itertools.pairwise(sizes)):
        raise argparse.ArgumentTypeError(f"two or more sizes, each double the last: {text!r}")
    return sizes


# -- running


def load_pages(folder: Path, limit: int | None) -> list[tuple[str, str, str]]:
    """(html, url, true article body) of each page, in a fixed order."""
    truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for key in sorted(truth)[:limit]:
        with gzip.open(folder / "html" / f"{key}.html.gz", "rt", encoding="utf-8") as file:
            pages.append((file.read(), truth[key].get("url", ""), truth[key]["articleBody"]))
    return pages


def measure(
    extractors: dict[str, Extractor], pages: list[tuple[str, str, str]], rounds: int
) -> dict[str, tuple[list[str], float]]:
    """Each extractor's texts and its best pages per second over ``rounds`` passes.

    The extractors take turns, one whole pass over the pages at a time. Times are CPU time of
    this process, so other load on the machine does not skew the ratios (the work is all
    in-process computation).
    """
    best = dict.fromkeys(extractors, float("inf"))
    texts: dict[str, list[str]] = {}
    for _ in range(rounds):
        for name, extractor in extractors.items():
            gc.collect()
            started = time.process_time()
            texts[name] = [extractor(html, url) for html, url, _ in pages]
            best[name] = min(best[name], time.process_time() - started)
    return {name: (texts[name], len(pages) / best[name]) for name in extractors}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "data",
        nargs="?",
        type=Path,
        default=Path(os.environ.get("TOOLWIRE_SHARED_DATA", REPOSITORY.parent / "shared" / "data")),
        help="folder holding article-extraction/ (default: %(default)s)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="timed passes; the best counts")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N pages")
    parser.add_argument("--only", default=",".join(PEERS), help="extractors to run, by name")
    parser.add_argument("--sets", action="store_true", help="count distinct shingles only")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when below the F1 or speed floor"
    )
    parser.add_argument(
        "--adversarial", action="store_true", help="time pages built to be slow instead"
    )
    parser.add_argument(
        "--sizes",
        type=_doubling_sizes,
        default=",".join(map(str, ADVERSARIAL_SIZES_KIB)),
        metavar="KIB,...",
        help="--adversarial page sizes in KiB, each double the last (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if args.adversarial:
        return adversarial(args.rounds, args.check, args.sizes)

    folder = args.data / "article-extraction"
    if not (folder / "ground-truth.json").is_file():
        print(f"skipped: no article-extraction data under {args.data}")
        return 0
    unknown = set(args.only.split(",")) - set(PEERS)
    if unknown:
        parser.error(f"unknown extractor(s) {sorted(unknown)}; known: {', '.join(PEERS)}")
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    pages = load_pages(folder, args.limit)
    print(f"{len(pages)} pages from {folder}, best of {args.rounds} round(s)")
    print(f"{'extractor':<18} {'F1':>6} {'P':>6} {'R':>6} {'pages/s':>9}")

    extractors: dict[str, Extractor] = {}
    for name in args.only.split(","):
        extractor = PEERS[name]()
        if extractor is None:
            print(f"{name:<18} skipped: not installed")
        else:
            extractors[name] = extractor
    speeds: dict[str, float] = {}
    f1s: dict[str, float] = {}
    for name, (texts, speed) in measure(extractors, pages, args.rounds).items():
        f1, precision, recall = score(
            ((truth, text) for (_, _, truth), text in zip(pages, texts, strict=True)), args.sets
        )
        speeds[name] = speed
        f1s[name] = f1
        print(f"{name:<18} {f1:6.3f} {precision:6.3f} {recall:6.3f} {speed:9.1f}")

    failed = False
    if "toolwire-web" in f1s:
        f1 = f1s["toolwire-web"]
        verdict = "ok" if f1 >= F1_FLOOR else "BELOW FLOOR"
        failed |= f1 < F1_FLOOR
        print(f"toolwire-web F1 {f1:.3f} against floor {F1_FLOOR}: {verdict}")
        if "trafilatura" in speeds:
            ratio = speeds["toolwire-web"] / speeds["trafilatura"]
            print(f"toolwire-web speed {ratio:.1f}x trafilatura's default mode")
        if "trafilatura (fast)" in speeds:
            # The floor holds against the faster of trafilatura's modes.
            ratio = speeds["toolwire-web"] / speeds["trafilatura (fast)"]
            verdict = "ok" if ratio >= SPEED_FLOOR else "BELOW FLOOR"
            failed |= ratio < SPEED_FLOOR
            print(
                f"toolwire-web speed {ratio:.1f}x trafilatura's fast mode, floor "
                f"{SPEED_FLOOR}x: {verdict}"
            )
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
