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
    (site / "fake_plugin-1.0.dist-info").mkdir(parents=True)
    monkeypatch.setattr("sys.path", [str(site)])
    monkeypatch.setenv("TOOLWIRE_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[str] = []

    def from_metadata(group: str) -> list[PluginEntryPoint]:
        calls.append(group)
        return [PluginEntryPoint(name=f"p{len(calls)}", value="json")]

    monkeypatch.setattr(entrypoints, "_from_metadata", from_metadata)
    # Too recent to trust: read every time, nothing kept.
    assert [e.name for e in entry_points_of(GROUP)] == ["p1"]
    assert not (tmp_path / "cache").exists()
    _age(site / "fake_plugin-1.0.dist-info")
    _age(site)
    assert [e.name for e in entry_points_of(GROUP)] == ["p2"]
    assert [e.name for e in entry_points_of(GROUP)] == ["p2"]  # kept
    assert calls == [GROUP, GROUP]
    # A distribution's entry points edited in place change the stamp.
    (site / "fake_plugin-1.0.dist-info" / "entry_points.txt").write_text("[toolwire.plugins]\n")
    assert [e.name for e in entry_points_of(GROUP)] == ["p3"]
    # A kept list for another stamp is not used, whatever it says.
    (kept,) = (tmp_path / "cache").glob("*.json")
    data = json.loads(kept.read_text())
    data["stamp"][0] = "another interpreter"
    kept.write_text(json.dumps(data))
    assert [e.name for e in entry_points_of(GROUP)] == ["p4"]


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
