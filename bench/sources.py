"""toolwire-sources: indexing throughput, query latency by corpus size, retrieval quality.

Run: ``python bench/sources.py [--sizes 1000,10000,100000] [--queries N]``. Everything runs on
generated or hand-written text in a temporary folder; nothing leaves the machine.

- **Indexing**: documents/s and MB/s of ``index_sources`` on generated Markdown files, against
  a floor that only reads, hashes and splits the same files (what any indexer must do), as a
  ratio.
- **Query latency** (hybrid, one source) at each corpus size in passages, median of the queries;
  the growth from the smallest to the largest size is printed beside the growth of the corpus:
  lexical search reads FTS5 posting lists and semantic search reads only the nearest k-means
  cells, so latency must grow much less than linearly. A brute-force scan of every vector at the
  same size is printed as the linear floor.
- **Quality**: recall@5 and MRR on a labelled set written for this benchmark (30 documents, 60
  queries: 30 that share words with their document and 30 paraphrases that mostly do not), for
  lexical (FTS5 BM25), semantic (WordLlama), hybrid (reciprocal-rank fusion), and ``bm25s`` as
  the lexical peer.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from toolwire_sources import SourceIndex, SourcesSettings, index_sources
from toolwire_sources._documents import split_passages
from toolwire_sources._embedding import embed

# -- the labelled set: (file name, text, keyword query, paraphrase query) -----------------------
LABELLED: list[tuple[str, str, str, str]] = [
    ("car.md", "Automobile repair at home: replacing brake pads, topping up engine oil and "
     "changing a flat tyre with the jack from the boot.", "brake pads engine oil",
     "fixing my car"),
    ("sourdough.md", "A sourdough starter is flour and water left to ferment for a week; feed "
     "it daily, then bake the loaf in a hot Dutch oven.", "sourdough starter ferment",
     "making bread with wild yeast"),
    ("tides.md", "Tides rise and fall twice a day because the moon's gravity pulls on the "
     "oceans; spring tides come with the new and the full moon.", "spring tides moon gravity",
     "why does the sea level change along the coast"),
    ("taxes.md", "The income tax return is due on the 31st of January; keep receipts for "
     "business expenses and the pension contributions.", "income tax return receipts",
     "paperwork for the revenue office"),
    ("running.md", "Training plan for a first marathon: long runs on Sundays, intervals on "
     "Tuesdays, and a taper in the last two weeks before the race.", "marathon training plan",
     "preparing for a long distance race"),
    ("python.md", "To install a Python package into a virtual environment, create it with venv, "
     "activate it, and run pip install inside it.", "pip install virtual environment",
     "setting up an isolated interpreter for a project"),
    ("garden.md", "Tomato plants need full sun, deep watering twice a week, and a stake to "
     "climb; pinch out the side shoots as they grow.", "tomato plants watering",
     "growing vegetables in the backyard"),
    ("cat.md", "The cat's vaccinations are due in March; the vet also recommended a flea "
     "treatment every month and dental checks.", "cat vaccinations vet",
     "pet health appointments"),
    ("mortgage.md", "Our mortgage has a fixed interest rate of 3.1 percent until 2027; after "
     "that it moves to the variable rate of the bank.", "mortgage fixed interest rate",
     "home loan conditions"),
    ("wedding.md", "The wedding reception is at the old mill at six; the band plays after "
     "dinner and the speeches come before dessert.", "wedding reception band speeches",
     "the marriage celebration schedule"),
    ("passport.md", "Passport renewal: fill in the form online, upload a recent photograph, "
     "and expect the new passport by post within three weeks.", "passport renewal photograph",
     "getting new travel documents"),
    ("coffee.md", "For espresso, grind the beans fine, use eighteen grams in the basket and "
     "pull the shot for about twenty-eight seconds.", "espresso grind beans",
     "brewing a strong morning drink"),
    ("bike.md", "Bicycle maintenance: clean and oil the chain monthly, check tyre pressure "
     "weekly and replace worn brake cables.", "bicycle chain oil",
     "looking after my bike"),
    ("solar.md", "The solar panels on the roof produced 4,200 kilowatt hours last year; the "
     "inverter was replaced under warranty in June.", "solar panels inverter",
     "electricity from sunlight at home"),
    ("piano.md", "Piano practice: scales in every key for ten minutes, then the Chopin nocturne "
     "slowly with the metronome at sixty.", "piano scales nocturne",
     "learning to play music on keys"),
    ("flu.md", "Influenza symptoms include fever, aching muscles and a dry cough; rest, drink "
     "fluids and see a doctor if breathing gets hard.", "influenza fever cough",
     "feeling sick with a high temperature"),
    ("moving.md", "Moving house checklist: book the van, pack the kitchen last, redirect the "
     "post and read the electricity meter on the day.", "moving house checklist van",
     "relocating to a new home"),
    ("budget.md", "The household budget: rent is 1,100 a month, groceries about 450, and we "
     "save 300 into the holiday account.", "household budget groceries rent",
     "how much money we spend each month"),
    ("camping.md", "Camping gear for the mountains: a three-season tent, a down sleeping bag, a "
     "gas stove and a water filter.", "camping tent sleeping bag",
     "equipment for sleeping outdoors"),
    ("server.md", "The web server runs nginx in front of the application; TLS certificates "
     "renew automatically every sixty days.", "nginx TLS certificates",
     "hosting the website securely"),
    ("birds.md", "Birds seen at the feeder this winter: robins, blue tits, a great spotted "
     "woodpecker and a pair of goldfinches.", "robins woodpecker feeder",
     "wildlife visiting the garden"),
    ("knitting.md", "Knitting a scarf: cast on forty stitches with chunky wool, knit in garter "
     "stitch, and cast off loosely.", "knitting scarf stitches wool",
     "making warm clothing by hand"),
    ("insurance.md", "The car insurance renews in May; the no-claims discount is five years and "
     "the excess is 250.", "car insurance no-claims discount",
     "vehicle cover policy"),
    ("recipe.md", "Lentil soup: soften onions and carrots, add red lentils, stock and cumin, "
     "simmer twenty minutes and blend.", "lentil soup cumin",
     "a warming vegetarian dinner"),
    ("meeting.md", "Minutes of the board meeting: the budget was approved, the new office opens "
     "in autumn, and hiring pauses until January.", "board meeting minutes approved",
     "what the directors decided"),
    ("astronomy.md", "Jupiter is visible in the east after sunset this month; through binoculars "
     "its four largest moons look like a line of stars.", "Jupiter binoculars moons",
     "planets in the night sky"),
    ("dentist.md", "Dentist appointment on Thursday at nine for a filling; no eating for two "
     "hours afterwards.", "dentist appointment filling", "teeth treatment booking"),
    ("holiday.md", "Holiday in Lisbon: the flight leaves at seven, the apartment is in Alfama, "
     "and the tram tour is booked for Tuesday.", "Lisbon flight apartment",
     "trip to Portugal"),
    ("backup.md", "Backups run every night to the external disk and weekly to the cloud; test a "
     "restore every quarter.", "backups external disk restore",
     "keeping copies of my files safe"),
    ("chess.md", "Chess openings to study: the Sicilian defence against e4 and the Queen's "
     "gambit with white.", "chess Sicilian defence", "board game strategy"),
]  # fmt: skip

VOCABULARY_SIZE = 8000


def _word(generator: random.Random) -> str:
    syllables = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "fi", "gu")
    return "".join(generator.choice(syllables) for _ in range(generator.randint(2, 4)))


def generated_files(root: Path, documents: int, passages_each: int, seed: int = 1) -> list[str]:
    """Write ``documents`` Markdown files of ``passages_each`` paragraphs of about 200
    characters (one passage each at ``passage_chars = 300``); return the vocabulary (the words
    are drawn Zipf-distributed from it)."""
    generator = random.Random(seed)
    vocabulary = sorted({_word(generator) for _ in range(VOCABULARY_SIZE * 2)})[:VOCABULARY_SIZE]
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    root.mkdir(parents=True, exist_ok=True)
    for number in range(documents):
        paragraphs = [
            " ".join(generator.choices(vocabulary, weights, k=28)) + "."
            for _ in range(passages_each)
        ]
        (root / f"doc-{number:06d}.md").write_text("\n\n".join(paragraphs), encoding="utf-8")
    return vocabulary


def _settings(root: Path, index: Path, passage_chars: int = 300) -> SourcesSettings:
    return SourcesSettings.coerce(
        {
            "index_path": str(index),
            "passage_chars": passage_chars,
            "sources": {"corpus": {"path": str(root)}},
        }
    )


def _floor(root: Path, passage_chars: int) -> float:
    started = time.perf_counter()
    for file in sorted(root.glob("*.md")):
        data = file.read_bytes()
        hashlib.sha256(data).hexdigest()
        split_passages(data.decode("utf-8"), passage_chars)
    return time.perf_counter() - started


def bench_indexing(work: Path, documents: int) -> None:
    root = work / "throughput"
    generated_files(root, documents, passages_each=10)
    size = sum(f.stat().st_size for f in root.glob("*.md"))
    embed(["warm up the model"])
    floor = _floor(root, 300)
    report = index_sources(_settings(root, work / "throughput.sqlite3"))
    seconds = report.seconds
    print(f"indexing: {documents} documents, {size / 1e6:.1f} MB, {report.sources[0].passages} "
          f"passages in {seconds:.2f} s: {documents / seconds:.0f} documents/s, "
          f"{size / 1e6 / seconds:.2f} MB/s; read+hash+split floor {floor:.2f} s "
          f"(ratio {seconds / floor:.1f}x)")  # fmt: skip
    started = time.perf_counter()
    again = index_sources(_settings(root, work / "throughput.sqlite3"))
    print(f"re-index, nothing changed: {time.perf_counter() - started:.2f} s "
          f"({again.sources[0].unchanged} unchanged)")  # fmt: skip


def bench_latency(work: Path, sizes: list[int], queries: int) -> None:
    rows: list[tuple[int, float, float]] = []
    for passages in sizes:
        documents = max(1, passages // 10)
        root = work / f"latency-{passages}"
        vocabulary = generated_files(root, documents, passages_each=10, seed=passages)
        index_file = work / f"latency-{passages}.sqlite3"
        report = index_sources(_settings(root, index_file))
        count = report.sources[0].passages
        generator = random.Random(7)
        texts = [" ".join(generator.sample(vocabulary[:2000], 3)) for _ in range(queries)]
        with SourceIndex(index_file) as index:
            index.search("corpus", texts[0], limit=10)  # warm the page cache
            timings = []
            for text in texts:
                started = time.perf_counter()
                index.search("corpus", text, limit=10)
                timings.append(time.perf_counter() - started)
            vectors = index._all_vectors("corpus")[1]
        query_vectors = embed(texts)
        brute = []
        for vector in query_vectors:
            started = time.perf_counter()
            scores = np.einsum("ij,j->i", vectors, vector)
            np.argpartition(-scores, 10)[:10]
            brute.append(time.perf_counter() - started)
        median = statistics.median(timings)
        rows.append((count, median, statistics.median(brute)))
        print(f"query latency at {count} passages: hybrid {median * 1e3:.2f} ms (median of "
              f"{queries}); brute-force vector scan alone {rows[-1][2] * 1e3:.2f} ms")  # fmt: skip
        shutil.rmtree(root)
    if len(rows) > 1:
        (small, t_small, b_small), (large, t_large, b_large) = rows[0], rows[-1]
        print(f"growth from {small} to {large} passages (x{large / small:.0f}): hybrid query "
              f"x{t_large / t_small:.1f}, brute-force scan x{b_large / b_small:.1f}")  # fmt: skip


def _ranks(order: list[str], wanted: str) -> int | None:
    return order.index(wanted) + 1 if wanted in order else None


def _score(ranks: list[int | None]) -> tuple[float, float]:
    recall = sum(1 for r in ranks if r is not None and r <= 5) / len(ranks)
    mrr = sum(1.0 / r for r in ranks if r is not None) / len(ranks)
    return recall, mrr


def bench_quality(work: Path) -> None:
    root = work / "labelled"
    root.mkdir()
    for name, text, _, _ in LABELLED:
        (root / name).write_text(text, encoding="utf-8")
    settings = _settings(root, work / "labelled.sqlite3", passage_chars=1200)
    index_sources(settings)
    names = [name for name, _, _, _ in LABELLED]
    try:
        import bm25s
    except ImportError:
        bm25s = None
    peer: Any = None
    if bm25s is not None:
        peer = bm25s.BM25()
        peer.index(bm25s.tokenize([text for _, text, _, _ in LABELLED], stopwords="en",
                                  show_progress=False), show_progress=False)  # fmt: skip
    kinds = {"keyword": 2, "paraphrase": 3}
    results: dict[str, dict[str, list[int | None]]] = {}
    with SourceIndex(settings.index_file) as index:
        for kind, column in kinds.items():
            for mode in ("lexical", "semantic", "hybrid"):
                ranks = []
                for row in LABELLED:
                    hits = index.search("corpus", row[column], limit=10, mode=mode)  # type: ignore[arg-type]
                    ranks.append(_ranks([h.path for h in hits], row[0]))
                results.setdefault(mode, {})[kind] = ranks
            if peer is not None:
                ranks = []
                for row in LABELLED:
                    tokens = bm25s.tokenize([row[column]], stopwords="en", show_progress=False)
                    if not tokens.vocab:
                        ranks.append(None)
                        continue
                    found, _ = peer.retrieve(tokens, k=10, show_progress=False)
                    ranks.append(_ranks([names[i] for i in found[0]], row[0]))
                results.setdefault("bm25s (peer)", {})[kind] = ranks
    print(f"retrieval quality on {len(LABELLED)} documents, {len(LABELLED)} keyword and "
          f"{len(LABELLED)} paraphrase queries (recall@5 / MRR):")  # fmt: skip
    for mode, by_kind in results.items():
        cells = []
        for kind in (*kinds, "all"):
            ranks = by_kind[kind] if kind != "all" else [r for k in kinds for r in by_kind[k]]
            recall, mrr = _score(ranks)
            cells.append(f"{kind} {recall:.2f} / {mrr:.2f}")
        print(f"  {mode:<13} " + "   ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--documents", type=int, default=2000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        bench_quality(work)
        bench_indexing(work, options.documents)
        bench_latency(work, [int(s) for s in options.sizes.split(",")], options.queries)


if __name__ == "__main__":
    main()
