"""A fresh virtual environment with toolwire and the sample plugins installed for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = Path(__file__).resolve().parent / "samples"


@attrs.frozen
class Env:
    """A virtual environment and a way to run its ``toolwire``."""

    path: Path
    import_log: Path

    @property
    def bin(self) -> Path:
        return self.path / ("Scripts" if os.name == "nt" else "bin")

    def toolwire(
        self,
        *args: str,
        cwd: Path,
        env: dict[str, str] | None = None,
        check: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLWIRE_")}
        full_env["TOOLWIRE_SAMPLE_IMPORT_LOG"] = str(self.import_log)
        full_env.update(env or {})
        proc = subprocess.run(
            [str(self.bin / "toolwire"), *args],
            cwd=cwd,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"toolwire {args} failed:\n{proc.stdout}\n{proc.stderr}")
        return proc

    def toolwire_json(self, *args: str, cwd: Path, env: dict[str, str] | None = None) -> object:
        proc = self.toolwire(*args, "--json", cwd=cwd, env=env)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    def imported(self) -> list[str]:
        if not self.import_log.exists():
            return []
        return self.import_log.read_text(encoding="utf-8").split()


def pip_environment(pip_cache: Path) -> dict[str, str]:
    """The environment of the pip runs: pip keeps the wheels it builds in its cache, and the
    samples' wheels must not pile up in the user's. A user's ``PIP_NO_CACHE_DIR`` is dropped:
    the cache here is the test's own, and with it set ``pip cache`` refuses to run."""
    kept = {k: v for k, v in os.environ.items() if k != "PIP_NO_CACHE_DIR"}
    return {**kept, "PIP_CACHE_DIR": str(pip_cache)}


def _run(cmd: Sequence[str | Path], *, pip_cache: Path) -> None:
    env = pip_environment(pip_cache)
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, timeout=900, env=env
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout}\n{proc.stderr}")


def build_wheels(sources: Sequence[Path], dest: Path) -> list[Path]:
    """Build one wheel per source tree with the running interpreter (no dependencies), with a
    pip cache of their own beside ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            dest,
            *sources,
        ],
        pip_cache=dest.parent / "pip-cache",
    )
    return sorted(dest.glob("*.whl"))


@pytest.fixture
def wheel_builder() -> Callable[[Sequence[Path], Path], list[Path]]:
    """:func:`build_wheels`, for tests of the build itself."""
    return build_wheels


@pytest.fixture
def pip_env() -> Callable[[Path], dict[str, str]]:
    """:func:`pip_environment`, for tests of the build itself."""
    return pip_environment


@pytest.fixture(scope="session")
def sample_env(tmp_path_factory: pytest.TempPathFactory) -> Env:
    """A fresh venv (no system site-packages) with toolwire and the four sample plugins."""
    base = tmp_path_factory.mktemp("venv")
    wheels = build_wheels(
        [ROOT, *sorted(p for p in SAMPLES.iterdir() if p.is_dir())], base / "dist"
    )
    env_path = base / "env"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_path)
    python = env_path / ("Scripts" if os.name == "nt" else "bin") / "python"
    _run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *wheels],
        pip_cache=base / "pip-cache",
    )
    return Env(path=env_path, import_log=base / "imports.log")
