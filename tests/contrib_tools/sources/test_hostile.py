"""Hostile documents: each one is bounded, costs only itself, and is reported."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolwire_sources import SourceIndex, SourcesSettings, index_sources
from toolwire_sources._documents import MAX_HTML_DEPTH, html_depth, split_passages

Settings = Callable[..., SourcesSettings]


def _hostile_folder(root: Path) -> Path:
    folder = root / "inbox"
    folder.mkdir(parents=True)
    (folder / "fine.md").write_text("# Harbour\n\nThe harbour opens at six.\n")
    (folder / "huge.txt").write_bytes(b"harbour " * 300_000)  # 2.4 MB
    (folder / "long.md").write_text("lighthouse " * 20_000)  # 220,000 characters, one line
    (folder / "binary.txt").write_bytes(b"\x7fELF\x02\x01\x01\x00" + os.urandom(4096))
    (folder / "deep.html").write_text(
        "<html><body>" + "<div>" * 50_000 + "<p>deep</p>" + "</div>" * 50_000 + "</body></html>"
    )
    (folder / "notes.docx").write_text("not a supported type")
    (folder / ".hidden.md").write_text("secret harbour")
    return folder


def test_each_hostile_file_is_bounded_and_reported(tmp_path: Path, settings_for: Settings) -> None:
    _hostile_folder(tmp_path / "data")
    settings: Any = settings_for(
        tmp_path / "data", max_file_bytes=1_000_000, max_document_chars=100_000
    )
    (report,) = index_sources(settings).sources
    skipped = dict(report.skipped)
    assert sorted(skipped) == ["binary.txt", "deep.html", "huge.txt"]
    assert skipped["huge.txt"] == "2400000 bytes is over max_file_bytes (1000000)"
    assert skipped["binary.txt"].startswith("binary content under a text file name")
    assert skipped["deep.html"] == (
        f"HTML nested more than {MAX_HTML_DEPTH} elements deep: not extracted"
    )
    assert report.cut == ("long.md",)
    assert report.added == 2  # fine.md and the cut long.md; .docx and hidden files are not read
    with SourceIndex(settings.index_file) as index:
        hits = index.search("inbox", "lighthouse", limit=500, mode="lexical")
        assert sum(len(h.text) for h in hits) <= 100_000
        assert index.search("inbox", "secret", limit=5, mode="lexical") == []
    # A file that turns bad loses what it had in the index.
    (tmp_path / "data" / "inbox" / "fine.md").write_bytes(b"\x00\x01\x02" * 100)
    (again,) = index_sources(settings).sources
    assert "fine.md" in dict(again.skipped)
    with SourceIndex(settings.index_file) as index:
        assert index.search("inbox", "harbour opens", limit=5, mode="lexical") == []


def test_a_link_out_of_the_folder_is_not_followed(tmp_path: Path, settings_for: Settings) -> None:
    outside = tmp_path / "private.md"
    outside.write_text("payroll figures")
    folder = tmp_path / "data" / "shared"
    folder.mkdir(parents=True)
    (folder / "link.md").symlink_to(outside)
    settings = settings_for(tmp_path / "data")
    (report,) = index_sources(settings).sources
    assert report.added == 0


def test_html_depth_counts_only_nesting_elements() -> None:
    assert html_depth(b"<p>a<p>b<p>c<br><img src=x>") == 0
    assert html_depth(b"<div><section><span>x</span></section></div>") == 3
    assert html_depth(b"<div>" * 5000, limit=10) == 11


def test_passages_are_cut_at_paragraphs_then_sentences() -> None:
    text = "First paragraph.\n\nSecond one. " + "Word " * 100 + "\n\nThird."
    passages = split_passages(text, 200)
    assert passages[0] == "First paragraph."
    assert all(len(p) <= 200 for p in passages)
    assert passages[-1].endswith("Third.")
    assert "".join(passages).count("Word") == 100
