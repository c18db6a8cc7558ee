"""Extraction quality on real pages of the article-extraction benchmark, when they are present.

The pages live outside the repository (``../shared/data/article-extraction``, or the folder named
by ``TOOLWIRE_SHARED_DATA``); without them these tests skip.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import statistics
from collections import Counter
from pathlib import Path

import pytest

from toolwire_web.extraction import extract_page

pytestmark = pytest.mark.shared_data

_ROOT = Path(__file__).resolve().parents[3]
_DATA = Path(os.environ.get("TOOLWIRE_SHARED_DATA", _ROOT.parent / "shared" / "data"))
_ARTICLES = _DATA / "article-extraction"
_SAMPLE_SIZE = 24
_TOKEN = re.compile(r"\w+")


def _shingles(text: str) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text)
    if len(tokens) < 4:
        return Counter([tuple(tokens)]) if tokens else Counter()
    return Counter(tuple(tokens[i : i + 4]) for i in range(len(tokens) - 3))


def _precision_recall(truth: str, extracted: str) -> tuple[float, float]:
    expected = _shingles(truth)
    found = _shingles(extracted)
    hits = sum((expected & found).values())
    precision = hits / sum(found.values()) if found else 0.0
    recall = hits / sum(expected.values()) if expected else 1.0
    return precision, recall


@pytest.fixture(scope="module")
def sample() -> list[tuple[str, str, str]]:
    """(html, url, expected article body) for a fixed sample of the benchmark's pages."""
    truth_file = _ARTICLES / "ground-truth.json"
    if not truth_file.is_file():
        pytest.skip(f"no article-extraction data at {_ARTICLES}")
    truth = json.loads(truth_file.read_text(encoding="utf-8"))
    chosen = sorted(truth)[:: max(1, len(truth) // _SAMPLE_SIZE)][:_SAMPLE_SIZE]
    pages = []
    for key in chosen:
        with gzip.open(_ARTICLES / "html" / f"{key}.html.gz", "rt", encoding="utf-8") as file:
            pages.append((file.read(), truth[key]["url"], truth[key]["articleBody"]))
    return pages


def test_sample_f1_floor(sample: list[tuple[str, str, str]]) -> None:
    scores = [
        _precision_recall(body, extract_page(html, url=url).text) for html, url, body in sample
    ]
    precision = statistics.mean(score[0] for score in scores)
    recall = statistics.mean(score[1] for score in scores)
    f1 = 2 * precision * recall / (precision + recall)
    assert f1 >= 0.92, f"F1 {f1:.3f} (precision {precision:.3f}, recall {recall:.3f})"


def test_every_sampled_page_yields_content(sample: list[tuple[str, str, str]]) -> None:
    for html, url, body in sample:
        result = extract_page(html.encode("utf-8"), url=url)
        _, recall = _precision_recall(body, result.text)
        assert recall > 0.5, f"{url}: recall {recall:.2f}"
        assert result.markdown.strip(), url
