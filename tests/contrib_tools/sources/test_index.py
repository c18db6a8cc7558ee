"""The index: lexical and semantic hits, incremental re-indexing, deletion, document kinds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

import pytest
from sqlite_files import sqlite_file

from toolwire_sources import SourceIndex, SourcesSettings, index_sources

Settings = Callable[..., SourcesSettings]


def _paths(
    settings: SourcesSettings,
    source: str,
    query: str,
    mode: Literal["lexical", "semantic", "hybrid"],
) -> list[str]:
    with SourceIndex(settings.index_file) as index:
        return [h.path for h in index.search(source, query, limit=3, mode=mode)]


def test_lexical_hits(corpus: Path, settings_for: Settings) -> None:
    settings = settings_for(corpus)
    report = index_sources(settings)
    assert [(r.source, r.added) for r in report.sources] == [
        ("notes", 3),
        ("recipes", 2),
        ("work", 1),
    ]
    assert _paths(settings, "notes", "sourdough starter", "lexical") == ["bread.txt"]
    # HTML went through the web extractor: the navigation is not part of the passage.
    with SourceIndex(settings.index_file) as index:
        (hit,) = index.search("notes", "gravitational", limit=3, mode="lexical")
    assert hit.title == "Tides"
    assert "Home | About" not in hit.text
    assert "gravitational pull of the moon" in hit.text


def test_semantic_hits_share_no_word_with_the_query(corpus: Path, settings_for: Settings) -> None:
    settings = settings_for(corpus)
    index_sources(settings)
    text = (corpus / "notes" / "garage.md").read_text().lower()
    for word in ("fixing", "fix", "my", "car"):
        assert word not in text.split()
    assert _paths(settings, "notes", "fixing my car", "lexical") == []
    assert _paths(settings, "notes", "fixing my car", "semantic")[0] == "garage.md"
    assert _paths(settings, "notes", "fixing my car", "hybrid")[0] == "garage.md"


def test_reindex_reads_only_what_changed_and_removes_deleted_files(
    corpus: Path, settings_for: Settings
) -> None:
    settings = settings_for(corpus)
    index_sources(settings)
    (corpus / "notes" / "bread.txt").write_text("Rye bread needs caraway seeds.\n")
    (corpus / "notes" / "tides.html").unlink()
    (corpus / "notes" / "new.md").write_text("# Bicycles\n\nOil the chain every month.\n")
    report = index_sources(settings)
    notes = report.sources[0]
    assert (notes.added, notes.updated, notes.unchanged, notes.removed) == (1, 1, 1, 1)
    assert [(r.unchanged, r.added) for r in report.sources[1:]] == [(2, 0), (1, 0)]
    assert _paths(settings, "notes", "sourdough", "lexical") == []
    assert _paths(settings, "notes", "caraway", "lexical") == ["bread.txt"]
    assert _paths(settings, "notes", "gravitational", "lexical") == []
    assert _paths(settings, "notes", "chain", "lexical") == ["new.md"]
    again = index_sources(settings).sources[0]
    assert (again.added, again.updated, again.unchanged, again.removed) == (0, 0, 3, 0)


def test_a_source_no_longer_configured_is_dropped(corpus: Path, settings_for: Settings) -> None:
    settings = settings_for(corpus)
    index_sources(settings)
    fewer = SourcesSettings.coerce(
        {
            "index_path": str(settings.index_file),
            "sources": {"notes": {"path": str(corpus / "notes")}},
        }
    )
    report = index_sources(fewer)
    assert report.dropped_sources == ("recipes", "work")
    with SourceIndex(settings.index_file) as index:
        assert sorted(index.sources()) == ["notes"]


def test_a_missing_folder_is_reported_and_keeps_its_passages(
    corpus: Path, settings_for: Settings
) -> None:
    settings = settings_for(corpus)
    index_sources(settings)
    (corpus / "work" / "budget.txt").unlink()
    (corpus / "work").rmdir()
    report = index_sources(settings)
    work = report.sources[2]
    assert work.error == f"the folder {corpus / 'work'} does not exist"
    assert work.summary().startswith("work: not indexed: the folder")
    assert _paths(settings, "work", "harbour budget", "lexical") == ["budget.txt"]


def test_only_names_configured_sources(corpus: Path, settings_for: Settings) -> None:
    with pytest.raises(ValueError, match=r"source\(s\) nope are not configured.*notes, recipes"):
        index_sources(settings_for(corpus), only=("nope",))


def _pdf(text: str) -> bytes:
    """A one-page PDF showing ``text`` in Helvetica, with a correct cross-reference table."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    start = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        start,
    )
    return bytes(out)


def test_pdf_text_is_indexed(tmp_path: Path, settings_for: Settings) -> None:
    folder = tmp_path / "data" / "papers"
    folder.mkdir(parents=True)
    (folder / "lighthouse.pdf").write_bytes(_pdf("The lighthouse keeper logs every storm."))
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a pdf body")
    settings = settings_for(tmp_path / "data")
    (report,) = index_sources(settings).sources
    assert report.added == 1
    assert [name for name, _ in report.skipped] == ["broken.pdf"]
    assert "the PDF could not be read" in report.skipped[0][1]
    assert _paths(settings, "papers", "lighthouse keeper", "lexical") == ["lighthouse.pdf"]


def test_a_large_source_searches_only_the_nearest_cells(
    tmp_path: Path, settings_for: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolwire_sources._index as index_module

    monkeypatch.setattr(index_module, "_CELL_THRESHOLD", 40)
    folder = tmp_path / "data" / "many"
    folder.mkdir(parents=True)
    topics = ["harbour tides", "bread baking", "garden tomatoes", "chess openings", "tax forms"]
    for number in range(100):
        topic = topics[number % len(topics)]
        (folder / f"n{number:03d}.txt").write_text(f"Note {number} about {topic}.")
    (folder / "car.txt").write_text("Automobile repair: replacing worn brake pads and engine oil.")
    settings = settings_for(tmp_path / "data")
    index_sources(settings)
    with SourceIndex(settings.index_file) as index:
        cells = index._db.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
        assert cells == 10  # the square root of 101 passages
        assert index.search("many", "fixing my car", limit=1, mode="semantic")[0].path == "car.txt"
        lexical = index.search("many", "chess", limit=50, mode="lexical")
        assert len(lexical) == 20
    # Removing most of the files drops the cells again; search still works without them.
    for number in range(90):
        (folder / f"n{number:03d}.txt").unlink()
    index_sources(settings)
    with SourceIndex(settings.index_file) as index:
        assert index._db.execute("SELECT COUNT(*) FROM cells").fetchone()[0] == 0
        assert index.search("many", "fixing my car", limit=1, mode="semantic")[0].path == "car.txt"


def test_a_new_index_opened_while_another_worker_holds_the_file_waits(
    corpus: Path,
    settings_for: Settings,
    tmp_path: Path,
    hold_new_sqlite_file: Callable[[Path], None],
) -> None:
    """Workers sharing one new index file: the second waits for the file instead of failing
    with "database is locked" at the switch to WAL."""
    path = tmp_path / "shared-index.sqlite3"
    settings = settings_for(corpus, index_path=str(path))
    hold_new_sqlite_file(path)
    report = index_sources(settings)
    assert sum(r.added for r in report.sources) == 6
    assert _paths(settings, "notes", "sourdough starter", "lexical") == ["bread.txt"]
    with SourceIndex(path) as index:
        assert index._db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_an_index_that_cannot_be_opened_leaves_its_file_closed(
    tmp_path: Path, open_descriptors: Callable[[Path], int]
) -> None:
    import sqlite3

    path = tmp_path / "index.sqlite"
    path.write_bytes(b"not a database, only text\n" * 40)
    with pytest.raises(sqlite3.DatabaseError):
        SourceIndex(path)
    assert open_descriptors(path) == 0


def test_an_index_of_another_model_is_refused_and_left_closed(
    tmp_path: Path, open_descriptors: Callable[[Path], int]
) -> None:
    path = tmp_path / "index.sqlite"
    SourceIndex(path).close()
    with sqlite_file(path) as other:
        other.execute("UPDATE meta SET value = 'another-model' WHERE key = 'model'")
    with pytest.raises(ValueError, match="another-model"):
        SourceIndex(path)
    assert open_descriptors(path) == 0
