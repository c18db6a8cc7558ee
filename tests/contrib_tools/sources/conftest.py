"""Fixtures of the sources tests: a generated corpus on disk, settings, and hosts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolwire import Host
from toolwire.config import (
    Config,
    LedgerConfig,
    PluginsConfig,
    ProviderConfig,
    ToolsConfig,
)
from toolwire_sources import SourcesSettings

CORPUS: dict[str, dict[str, str]] = {
    "notes": {
        "garage.md": "# Automobile repair\n\nReplacing worn brake pads, changing the engine oil "
        "and patching a punctured tyre on a vehicle.\n",
        "bread.txt": "Sourdough needs a starter, flour, water and salt. Bake the loaf at 240 "
        "degrees until the crust is dark.\n",
        "tides.html": "<html><head><title>Tides</title></head><body><nav>Home | About</nav>"
        "<article><h1>Tides</h1><p>Tides are caused by the gravitational pull of the moon on "
        "the oceans of the earth; spring tides follow the new and the full moon.</p>"
        "</article></body></html>",
    },
    "recipes": {
        "soup.md": "# Tomato soup\n\nRoast tomatoes with garlic, blend with stock and basil.\n",
        "pasta.md": "# Pasta\n\nBoil the pasta in salted water; toss with butter and sage.\n",
    },
    "work": {
        "budget.txt": "The quarterly budget for the harbour project is 40,000 euros; the tide "
        "gauge costs 3,000 euros.\n",
    },
}


def _write_corpus(root: Path, corpus: dict[str, dict[str, str]] = CORPUS) -> None:
    """Write ``corpus`` (source id -> file name -> text) under ``root``."""
    for source, files in corpus.items():
        folder = root / source
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")


def _source_table(root: Path, **overrides: dict[str, Any]) -> dict[str, Any]:
    """``[tools.sources]`` for the sources under ``root``; ``overrides`` per source id."""
    sources = {
        path.name: {"path": str(path), "description": f"The {path.name} folder"}
        for path in sorted(root.iterdir())
        if path.is_dir()
    }
    for source, extra in overrides.items():
        sources.setdefault(source, {}).update(extra)
    return {"index_path": str(root.parent / "index.sqlite3"), "sources": sources}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The generated corpus, one folder per source, under ``tmp_path / "data"``."""
    root = tmp_path / "data"
    _write_corpus(root)
    return root


@pytest.fixture
def write_corpus() -> Callable[..., None]:
    """``write_corpus(root, {source: {file: text}})`` (default: the generated corpus)."""
    return _write_corpus


@pytest.fixture
def source_table() -> Callable[..., dict[str, Any]]:
    """``source_table(root, source_id={key: value})``: ``[tools.sources]`` for the folders of
    ``root``, each source described, with per-source overrides; the index beside ``root``."""
    return _source_table


@pytest.fixture
def settings_for() -> Callable[..., SourcesSettings]:
    """Build settings for a corpus folder: ``settings_for(root, **table_keys)``."""

    def build(root: Path, sources: dict[str, dict[str, Any]] | None = None, **keys: Any) -> Any:
        table = _source_table(root, **(sources or {}))
        table.update(keys)
        return SourcesSettings.coerce(table)

    return build


@pytest.fixture
def make_host(tmp_path: Path) -> Iterator[Callable[..., Host]]:
    """``make_host(table, trust=..., **provider)``: a host with the ``sources`` plugin enabled
    through its entry point and ``[tools.sources] = table``; closed after the test."""
    hosts: list[Host] = []

    def build(
        table: dict[str, Any],
        *,
        trust: str = "medium",
        plugins: tuple[object, ...] = (),
        deny: tuple[str, ...] = (),
        **provider: Any,
    ) -> Host:
        config = Config(
            plugins=PluginsConfig(enable=("sources",)),
            provider=ProviderConfig(trust=trust, **provider),
            tools=ToolsConfig(plugin_settings={"sources": table}, deny=deny),
            ledger=LedgerConfig(enabled=False, path=str(tmp_path / "ledger.sqlite3")),
        )
        host = Host.load(config, plugins=list(plugins))
        hosts.append(host)
        return host

    yield build
    for host in hosts:
        host.stash.clear()
