"""Entry points read from the metadata or from the kept list, in-process."""

from __future__ import annotations

import importlib.metadata
import json
import os
from pathlib import Path

import pytest

import toolwire.host._entrypoints as entrypoints
from toolwire.host._entrypoints import PluginEntryPoint, entry_points_of

GROUP = "toolwire.plugins"


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The groups read from the metadata from now on; the n-th read finds one plugin, ``pn``."""
    calls: list[str] = []

    def from_metadata(group: str) -> list[PluginEntryPoint]:
        calls.append(group)
        return [PluginEntryPoint(name=f"p{len(calls)}", value="json")]

    monkeypatch.setattr(entrypoints, "_from_metadata", from_metadata)
    return calls


def _age(path: Path) -> None:
    old = os.stat(path).st_mtime - 10
    os.utime(path, (old, old))


def test_the_same_entry_points_as_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLWIRE_CACHE_DIR", str(tmp_path))
    expected = [
        (ep.name, ep.value, ep.dist.name if ep.dist else None, ep.dist.version if ep.dist else None)
        for ep in importlib.metadata.entry_points(group=GROUP)
    ]
    assert expected, "the test environment has toolwire plugins installed"
    for _ in range(2):  # read from the metadata, then (when not too recent) from the kept list
        found = entry_points_of(GROUP)
        assert [(e.name, e.value, e.distribution, e.version) for e in found] == expected


def test_a_kept_list_is_used_only_for_the_stamp_it_was_made_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    info = site / "fake_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "entry_points.txt").write_text("[toolwire.plugins]\nfake = json\n")
    monkeypatch.setattr("sys.path", [str(site)])
    monkeypatch.setenv("TOOLWIRE_CACHE_DIR", str(tmp_path / "cache"))
    calls = _count_reads(monkeypatch)
    # Entry points written too recently to trust: read every time, nothing kept.
    assert [e.name for e in entry_points_of(GROUP)] == ["p1"]
    assert not (tmp_path / "cache").exists()
    _age(info / "entry_points.txt")
    assert [e.name for e in entry_points_of(GROUP)] == ["p2"]
    assert [e.name for e in entry_points_of(GROUP)] == ["p2"]  # kept
    assert calls == [GROUP, GROUP]
    # Other files coming and going in the folder (a script's busy folder) change nothing.
    (site / "notes.txt").write_text("scratch")
    (site / "scratch").mkdir()
    assert [e.name for e in entry_points_of(GROUP)] == ["p2"]
    # A distribution's entry points edited in place change the stamp.
    (info / "entry_points.txt").write_text("[toolwire.plugins]\n")
    assert [e.name for e in entry_points_of(GROUP)] == ["p3"]
    _age(info / "entry_points.txt")
    assert [e.name for e in entry_points_of(GROUP)] == ["p4"]
    assert [e.name for e in entry_points_of(GROUP)] == ["p4"]  # kept
    # A distribution installed, even one without entry points yet, changes it too.
    (site / "other_plugin-2.0.dist-info").mkdir()
    assert [e.name for e in entry_points_of(GROUP)] == ["p5"]
    # A kept list for another stamp is not used, whatever it says.
    (kept,) = (tmp_path / "cache").glob("*.json")
    data = json.loads(kept.read_text())
    data["stamp"][0] = "another interpreter"
    kept.write_text(json.dumps(data))
    assert [e.name for e in entry_points_of(GROUP)] == ["p6"]


def test_an_entry_that_is_no_folder_is_stamped_by_its_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "plugins.zip"
    archive.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip file
    _age(archive)
    monkeypatch.setattr("sys.path", [str(archive)])
    monkeypatch.setenv("TOOLWIRE_CACHE_DIR", str(tmp_path / "cache"))
    calls = _count_reads(monkeypatch)
    assert [e.name for e in entry_points_of(GROUP)] == ["p1"]
    assert [e.name for e in entry_points_of(GROUP)] == ["p1"]  # kept
    assert len(calls) == 1
    archive.write_bytes(b"PK\x05\x06" + bytes(18))  # rewritten: a new time
    assert [e.name for e in entry_points_of(GROUP)] == ["p2"]


def test_an_empty_cache_dir_setting_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLWIRE_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert entry_points_of(GROUP)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("json", json),
        ("json:dumps", json.dumps),
        ("json.decoder:JSONDecoder.decode", json.decoder.JSONDecoder.decode),
        ("json : loads [extra]", json.loads),
    ],
)
def test_load_resolves_module_and_attributes(value: str, expected: object) -> None:
    assert PluginEntryPoint(name="x", value=value).load() is expected


def test_load_of_a_missing_module_raises_import_error() -> None:
    with pytest.raises(ImportError):
        PluginEntryPoint(name="x", value="no_such_module_here:thing").load()
