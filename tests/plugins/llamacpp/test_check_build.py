"""plugins/llamacpp/check_build.py: a missing compiler is named, with the install command, before a
long build starts."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "plugins" / "llamacpp" / "check_build.py"


def _run(path: str) -> subprocess.CompletedProcess[str]:
    # -S: no site-packages, so llama-cpp-python counts as not installed.
    return subprocess.run(
        [sys.executable, "-S", str(SCRIPT)],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path},
        check=False,
    )


def test_without_a_compiler_it_says_what_to_install(tmp_path: Path) -> None:
    result = _run(str(tmp_path))
    assert result.returncode == 1
    assert "no C++ compiler was found" in result.stderr
    assert "build-essential" in result.stderr


def test_with_a_compiler_it_names_it(tmp_path: Path) -> None:
    compiler = tmp_path / "c++"
    compiler.write_text("#!/bin/sh\n")
    compiler.chmod(compiler.stat().st_mode | stat.S_IEXEC)
    result = _run(str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert str(compiler) in result.stdout
