"""Hostile documents: each one is bounded, costs only itself, and is reported."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolwire_sources import IndexProgress, SourceIndex, SourcesSettings, index_sources
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


def test_a_linked_folder_out_of_the_source_is_not_followed(
    tmp_path: Path, settings_for: Settings
) -> None:
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "payroll.md").write_text("payroll figures")
    folder = tmp_path / "data" / "shared"
    folder.mkdir(parents=True)
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    (report,) = index_sources(settings_for(tmp_path / "data")).sources
    assert (report.added, report.skipped) == (0, ())


def _swapped_while_indexing(
    tmp_path: Path, settings_for: Settings, swap: Callable[[Path, Path], None]
) -> Any:
    """Index a folder whose later file (or folder) ``swap`` replaces by a link out of the
    folder while the first file is read; returns the source's report."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "z-later.md").write_text("payroll figures from outside")
    folder = tmp_path / "data" / "shared"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# First\n\nThe harbour opens at six.\n")
    (folder / "z-later.md").write_text("# Later\n\nThe lighthouse is white.\n")
    (folder / "sub" / "z-later.md").write_text("# Deeper\n\nThe pier is long.\n")
    settings = settings_for(tmp_path / "data")

    def progress(step: IndexProgress) -> None:
        if step.path == "a.md":
            swap(folder, outside)

    (report,) = index_sources(settings, progress=progress).sources
    with SourceIndex(settings.index_file) as index:
        assert index.search("shared", "payroll figures", limit=5, mode="lexical") == []
    return report


def test_a_file_swapped_for_a_link_after_the_listing_is_not_read(
    tmp_path: Path, settings_for: Settings
) -> None:
    def swap(folder: Path, outside: Path) -> None:
        (folder / "z-later.md").unlink()
        (folder / "z-later.md").symlink_to(outside / "z-later.md")

    report = _swapped_while_indexing(tmp_path, settings_for, swap)
    skipped = dict(report.skipped)
    assert list(skipped) == ["z-later.md"]
    assert "was replaced" in skipped["z-later.md"]


def test_a_folder_swapped_for_a_link_after_the_listing_is_not_read(
    tmp_path: Path, settings_for: Settings
) -> None:
    def swap(folder: Path, outside: Path) -> None:
        shutil.rmtree(folder / "sub")
        (folder / "sub").symlink_to(outside, target_is_directory=True)

    report = _swapped_while_indexing(tmp_path, settings_for, swap)
    skipped = dict(report.skipped)
    assert list(skipped) == ["sub/z-later.md"]
    assert "was replaced" in skipped["sub/z-later.md"]


def test_a_fifo_swapped_in_is_skipped_without_blocking(
    tmp_path: Path, settings_for: Settings
) -> None:
    def swap(folder: Path, outside: Path) -> None:
        (folder / "z-later.md").unlink()
        os.mkfifo(folder / "z-later.md")

    report = _swapped_while_indexing(tmp_path, settings_for, swap)
    assert dict(report.skipped)["z-later.md"].startswith("not a regular file")


def test_a_file_name_that_is_not_utf8_costs_nothing(tmp_path: Path, settings_for: Settings) -> None:
    folder = tmp_path / "data" / "inbox"
    folder.mkdir(parents=True)
    (folder / os.fsdecode(b"report-\xff.md")).write_text("# Report\n\nThe harbour opens at six.\n")
    (folder / "fine.md").write_text("# Fine\n\nThe lighthouse is white.\n")
    settings = settings_for(tmp_path / "data")
    (report,) = index_sources(settings).sources
    assert (report.error, report.added, report.skipped) == (None, 2, ())
    with SourceIndex(settings.index_file) as index:
        (hit,) = index.search("inbox", "harbour", limit=5, mode="lexical")
    assert hit.path == "report-\\xff.md"
    (again,) = index_sources(settings).sources
    assert (again.unchanged, again.added, again.removed) == (2, 0, 0)


def test_deeply_nested_html_of_every_shape_is_indexed(
    tmp_path: Path, settings_for: Settings
) -> None:
    folder = tmp_path / "data" / "pages"
    folder.mkdir(parents=True)
    shapes = {
        "ul": ("<ul><li>", "</li></ul>"),
        "blockquote": ("<blockquote>", "</blockquote>"),
        "table": ("<table><tr><td>", "</td></tr></table>"),
        "span": ("<span>", "</span>"),
    }
    for name, (opening, closing) in shapes.items():
        body = opening * 1000 + f"<p>The {name} lighthouse.</p>" + closing * 1000
        (folder / f"{name}.html").write_text(f"<html><body>{body}</body></html>")
    settings = settings_for(tmp_path / "data")
    (report,) = index_sources(settings).sources
    assert (report.added, report.skipped) == (4, ())
    with SourceIndex(settings.index_file) as index:
        found = {hit.path for hit in index.search("pages", "lighthouse", limit=10, mode="lexical")}
    assert found == {f"{name}.html" for name in shapes}
