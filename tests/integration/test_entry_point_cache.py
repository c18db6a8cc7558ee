"""The kept list of installed plugins follows real installs, upgrades and removals."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.21"]
build-backend = "hatchling.build"

[project]
name = "toolwire-sample-later"
version = "{version}"
requires-python = ">=3.11"
dependencies = ["toolwire"]

[project.entry-points."toolwire.plugins"]
later = "toolwire_sample_later"

[tool.hatch.build.targets.wheel]
packages = ["toolwire_sample_later"]
"""

PROBE = (
    "import sys\n"
    "from toolwire.host._discovery import discover\n"
    "found = discover()\n"
    "print(' '.join(sorted(found)))\n"
    "print('importlib.metadata' in sys.modules)\n"
)


def _wheel(tmp: Path, version: str) -> Path:
    source = tmp / f"later-{version}"
    (source / "toolwire_sample_later").mkdir(parents=True)
    (source / "pyproject.toml").write_text(PYPROJECT.format(version=version), encoding="utf-8")
    (source / "toolwire_sample_later" / "__init__.py").write_text('"""Later."""\n')
    dist = tmp / f"dist-{version}"
    wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*wheel, "--quiet", "-w", str(dist), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = dist.glob("*.whl")
    return built


def _pip(env: Any, *args: str) -> None:
    subprocess.run(
        [str(env.bin / "python"), "-m", "pip", "--disable-pip-version-check", "--quiet", *args],
        check=True,
        capture_output=True,
        timeout=300,
    )


def _plugins(env: Any, cwd: Path, cache: Path) -> dict[str, str | None]:
    rows = env.toolwire_json("plugins", cwd=cwd, env={"TOOLWIRE_CACHE_DIR": str(cache)})
    return {row["name"]: row["version"] for row in rows}


def _probe(env: Any, cwd: Path, cache: Path) -> tuple[list[str], bool]:
    """The plugin names a second discovery in a fresh interpreter finds, and whether it read the
    metadata (the first one, with this interpreter's search path, may have had to)."""
    first = _probe_once(env, cwd, cache)
    second = _probe_once(env, cwd, cache)
    assert first[0] == second[0]
    return second


def _probe_once(env: Any, cwd: Path, cache: Path) -> tuple[list[str], bool]:
    proc = subprocess.run(
        [str(env.bin / "python"), "-c", PROBE],
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "TOOLWIRE_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    names, read_metadata = proc.stdout.splitlines()
    return names.split(), read_metadata == "True"


def _settle() -> None:
    # The cache trusts no modification time younger than two seconds.
    time.sleep(2.2)


def test_the_kept_plugin_list_follows_install_upgrade_and_removal(
    sample_env: Any, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    work = tmp_path / "work"
    work.mkdir()
    first, second = _wheel(tmp_path, "1.0.0"), _wheel(tmp_path, "2.0.0")
    try:
        _settle()
        before = _plugins(sample_env, work, cache)
        assert "later" not in before
        assert list(cache.glob("entry-points-*.json")), "the plugin list was not kept"
        names, read_metadata = _probe(sample_env, work, cache)
        assert names == sorted(before)
        assert not read_metadata, "the kept list was not used"

        _pip(sample_env, "install", "--no-deps", str(first))
        assert _plugins(sample_env, work, cache)["later"] == "1.0.0"
        _settle()
        assert _plugins(sample_env, work, cache)["later"] == "1.0.0"
        names, read_metadata = _probe(sample_env, work, cache)
        assert "later" in names
        assert not read_metadata

        _pip(sample_env, "install", "--no-deps", str(second))
        assert _plugins(sample_env, work, cache)["later"] == "2.0.0"

        _pip(sample_env, "uninstall", "--yes", "toolwire-sample-later")
        assert "later" not in _plugins(sample_env, work, cache)
    finally:
        _pip(sample_env, "uninstall", "--yes", "toolwire-sample-later")


def test_an_unreadable_kept_list_is_read_again_from_the_metadata(
    sample_env: Any, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    work = tmp_path / "work"
    work.mkdir()
    _settle()
    expected = _plugins(sample_env, work, cache)
    (kept,) = cache.glob("entry-points-*.json")
    data = json.loads(kept.read_text(encoding="utf-8"))
    for broken in (
        "{not json",
        json.dumps({**data, "entry_points": [{"name": 3, "value": "x"}]}),
        json.dumps({**data, "entry_points": "echo"}),
        json.dumps([data]),
    ):
        kept.write_text(broken, encoding="utf-8")
        assert _plugins(sample_env, work, cache) == expected
    forged = {**data, "stamp": [*data["stamp"][:-1], ["elsewhere", 0, []]]}
    forged["entry_points"] = [{"name": "ghost", "value": "nowhere", "distribution": None}]
    kept.write_text(json.dumps(forged), encoding="utf-8")
    assert "ghost" not in _plugins(sample_env, work, cache)
