"""Building the sample wheels leaves nothing in the user's pip cache."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent / "samples"


def _pip(*args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "pip", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**(env or os.environ), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _user_cache_wheels() -> set[str]:
    if os.environ.get("PIP_NO_CACHE_DIR"):
        return set()  # the user's pip keeps no cache: `pip cache` refuses to run
    listed = _pip("cache", "list", "--format", "abspath")
    return {line for line in listed.splitlines() if "toolwire_sample" in line}


def test_sample_wheels_are_built_with_a_pip_cache_of_their_own(
    tmp_path: Path,
    wheel_builder: Callable[..., list[Path]],
    pip_env: Callable[[Path], dict[str, str]],
) -> None:
    # Every pip run of the build sees its own cache, whatever pip's version caches.
    own = tmp_path / "pip-cache"
    assert _pip("cache", "dir", env=pip_env(own)).strip() == str(own)
    before = _user_cache_wheels()
    (wheel,) = wheel_builder([SAMPLES / "toolwire-sample-echo"], tmp_path / "dist")
    assert wheel.name.startswith("toolwire_sample_echo-")
    assert _user_cache_wheels() == before
