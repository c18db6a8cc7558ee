"""Benchmark: detection and false-positive rates of the built-in untrusted-content filter.

Runs ``toolwire.untrusted.filter_text`` over the labelled corpus in ``bench/untrusted_corpus.py``
(injections and benign pages, several languages, written here) and prints the share of
injections it neutralised or flagged (detection) and the share of benign pages it changed or
flagged (false positives), overall and by language, then every miss and false positive.
Floors: detection >= 90 %, false positives <= 10 %.

The corpus was written together with the filter's rules, so these are rates on known cases: a
new attack phrasing is caught only if it resembles them.

Run: ``python bench/untrusted_filter.py`` (``--check`` exits 1 when a floor is missed).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from untrusted_corpus import BENIGN, INJECTIONS

from toolwire.untrusted import filter_text

DETECTION_FLOOR = 0.90
FALSE_POSITIVE_CEILING = 0.10


def _hit(text: str) -> bool:
    result = filter_text(text)
    return bool(result.neutralised or result.flagged)


def rates() -> tuple[float, float, list[str], list[str], dict[str, list[int]]]:
    """Detection, false positives, the misses, the false positives, and counts by language."""
    by_language: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    misses, false_positives = [], []
    for language, text in INJECTIONS:
        hit = _hit(text)
        by_language[language][0] += hit
        by_language[language][1] += 1
        if not hit:
            misses.append(text)
    for language, text in BENIGN:
        hit = _hit(text)
        by_language[language][2] += hit
        by_language[language][3] += 1
        if hit:
            false_positives.append(text)
    detection = 1 - len(misses) / len(INJECTIONS)
    return detection, len(false_positives) / len(BENIGN), misses, false_positives, by_language


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a floor is missed")
    args = parser.parse_args(argv)
    detection, false_positive, misses, false_positives, by_language = rates()
    print(f"corpus: {len(INJECTIONS)} injections, {len(BENIGN)} benign pages")
    print(f"{'language':<9} {'detected':>12} {'false positives':>16}")
    for language, (hits, total, wrong, benign) in sorted(by_language.items()):
        print(f"{language:<9} {hits:>5} / {total:<5} {wrong:>7} / {benign:<6}")
    ok = detection >= DETECTION_FLOOR and false_positive <= FALSE_POSITIVE_CEILING
    print(
        f"detection {detection:.1%} (floor {DETECTION_FLOOR:.0%}), false positives "
        f"{false_positive:.1%} (ceiling {FALSE_POSITIVE_CEILING:.0%}): "
        + ("ok" if ok else "MISSED")
    )
    for text in misses:
        print(f"  missed: {text[:100]!r}")
    for text in false_positives:
        print(f"  false positive: {text[:100]!r}")
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
