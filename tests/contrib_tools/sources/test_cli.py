"""``python -m toolwire_sources index``: the command the host CLI hooks up as ``sources index``."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from toolwire_sources import index_command


def _config(tmp_path: Path, corpus: Path, extra: str = "") -> Path:
    file = tmp_path / "toolwire.toml"
    file.write_text(
        f"""
[plugins]
enable = ["sources"]

[tools.sources]
index_path = "{tmp_path / "index.sqlite3"}"
{extra}
[tools.sources.sources.notes]
path = "{corpus / "notes"}"
description = "My notes"
page_size = 5
min_trust = "medium"

[tools.sources.sources.work]
path = "{corpus / "work"}"
"""
    )
    return file


def _index(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = index_command(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_index_reports_each_source_and_then_nothing_new(tmp_path: Path, corpus: Path) -> None:
    config = _config(tmp_path, corpus)
    status, out, err = _index("index", "--config", str(config))
    assert status == 0, err
    assert "notes: 3 added, 0 updated, 0 unchanged, 0 removed" in out
    assert "work: 1 added" in out
    assert "indexing notes: 3 file(s)" in err
    status, out, _ = _index("index", "--config", str(config), "--source", "work")
    assert status == 0
    assert "work: 0 added, 0 updated, 1 unchanged, 0 removed" in out
    assert "notes:" not in out


def test_bad_config_and_unknown_sources_exit_2(tmp_path: Path, corpus: Path) -> None:
    config = _config(tmp_path, corpus, extra='retrieval = "sometimes"\n')
    status, _, err = _index("index", "--config", str(config))
    assert status == 2
    assert "retrieval" in err
    status, _, err = _index("index", "--config", str(_config(tmp_path, corpus)), "--source", "x")
    assert status == 2
    assert "source(s) x are not configured" in err
    empty = tmp_path / "empty.toml"
    empty.write_text("[plugins]\nenable = []\n")
    status, _, err = _index("index", "--config", str(empty))
    assert status == 2
    assert "no data source is configured" in err


def test_a_missing_folder_exits_1(tmp_path: Path, corpus: Path) -> None:
    config = _config(tmp_path, corpus)
    (corpus / "work" / "budget.txt").unlink()
    (corpus / "work").rmdir()
    status, out, _ = _index("index", "--config", str(config))
    assert status == 1
    assert f"work: not indexed: the folder {corpus / 'work'} does not exist" in out


def test_python_dash_m_runs_the_command(tmp_path: Path, corpus: Path) -> None:
    config = _config(tmp_path, corpus)
    done = subprocess.run(
        [sys.executable, "-m", "toolwire_sources", "index", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "notes: 3 added" in done.stdout


def test_toolwire_sources_index_is_a_plugin_command(tmp_path: Path, corpus: Path) -> None:
    config = _config(tmp_path, corpus)
    toolwire = [sys.executable, "-m", "toolwire", "--config", str(config), "sources", "index"]
    done = subprocess.run([*toolwire, "--source", "notes"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "notes: 3 added, 0 updated, 0 unchanged, 0 removed" in done.stdout
    assert "work:" not in done.stdout
    again = subprocess.run(toolwire, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert "notes: 0 added, 0 updated, 3 unchanged, 0 removed" in again.stdout
    assert "work: 1 added" in again.stdout


def test_file_names_with_escapes_are_printed_inert_on_the_progress_bar() -> None:
    from toolwire_sources._cli import _ProgressBar
    from toolwire_sources._index import IndexProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    hostile = "\x1b]0;PWNED\x07\x1b[2J.txt"
    shown = Terminal()
    bar = _ProgressBar(shown)
    bar(IndexProgress(source="work", done=1, total=2, path=hostile))
    bar(IndexProgress(source="work", done=2, total=2, path=f"sub/{hostile}"))
    text = shown.getvalue()
    assert "\ufffd]0;PWNED" in text
    for control in ("\x1b", "\x07"):
        assert control not in text
