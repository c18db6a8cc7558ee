"""Startup time of the CLI with 10 installed sample plugins (2 enabled), as ratios against floors.

Floors: `python -c pass`, and `python -c "import attrs, cattrs, pluggy, fastjsonschema,
importlib_metadata"` (the libraries a plugin host of this kind cannot avoid). Target:
`toolwire plugins` at most 1.5x the second floor.

    python bench/startup.py [--runs N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = 10
ENABLED = ("sample0", "sample1")

TEMPLATE_PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.21"]
build-backend = "hatchling.build"

[project]
name = "toolwire-sample{i}"
version = "1.0.0"
requires-python = ">=3.11"
dependencies = ["toolwire"]

[project.entry-points."toolwire.plugins"]
sample{i} = "toolwire_sample{i}"

[tool.hatch.build.targets.wheel]
packages = ["toolwire_sample{i}"]
"""

TEMPLATE_MODULE = '''\
"""Sample plugin {i} for the startup benchmark."""

from typing import Annotated

import toolwire


@toolwire.tool
def sample{i}_echo(text: Annotated[str, "The text to give back."]) -> str:
    """Give the text back."""
    return text


@toolwire.tool
def sample{i}_add(a: Annotated[int, "First number."], b: Annotated[int, "Second number."]) -> int:
    """Add two numbers."""
    return a + b


@toolwire.hookimpl
def toolwire_tools(settings):
    return [sample{i}_echo, sample{i}_add]
'''


def build_env(base: Path) -> Path:
    """A venv with toolwire and the sample plugins; reused when it already exists."""
    env = base / "env"
    python = env / "bin" / "python"
    if python.exists():
        return env
    src = base / "src"
    for i in range(PLUGINS):
        pkg = src / f"sample{i}"
        (pkg / f"toolwire_sample{i}").mkdir(parents=True, exist_ok=True)
        (pkg / "pyproject.toml").write_text(TEMPLATE_PYPROJECT.format(i=i))
        (pkg / f"toolwire_sample{i}" / "__init__.py").write_text(TEMPLATE_MODULE.format(i=i))
    wheels = base / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(ROOT),
            *(str(p) for p in sorted(src.iterdir())),
        ],
        check=True,
    )
    venv.EnvBuilder(with_pip=True).create(env)
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "importlib_metadata",
            *(str(w) for w in wheels.glob("*.whl")),
        ],
        check=True,
    )
    return env


def timed(commands: list[list[str]], cwd: Path, runs: int, env: dict[str, str]) -> list[float]:
    """Median wall time of each command in seconds, after one warm-up run of each.

    The commands take turns, run by run, so a change in the machine's speed during the bench
    (another process, the CPU clock) touches all of them alike instead of skewing the ratios.
    """
    for cmd in commands:
        subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=True)
    samples: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for index, cmd in enumerate(commands):
            start = time.perf_counter()
            subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=True)
            samples[index].append(time.perf_counter() - start)
    return [statistics.median(s) for s in samples]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--keep", type=Path, help="build the venv here and keep it")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="toolwire-startup-"))
    base.mkdir(parents=True, exist_ok=True)
    env_dir = build_env(base)
    python = str(env_dir / "bin" / "python")
    toolwire = str(env_dir / "bin" / "toolwire")
    work = base / "work"
    work.mkdir(exist_ok=True)
    (work / "toolwire.toml").write_text(
        "[plugins]\nenable = [" + ", ".join(f'"{n}"' for n in ENABLED) + "]\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLWIRE_")}
    names = ["toolwire --help", "toolwire plugins", "toolwire tools list"]
    floor_pass, floor_libs, *ours = timed(
        [
            [python, "-c", "pass"],
            [python, "-c", "import attrs, cattrs, pluggy, fastjsonschema, importlib_metadata"],
            [toolwire, "--help"],
            [toolwire, "plugins"],
            [toolwire, "tools", "list"],
        ],
        work,
        args.runs,
        env,
    )
    print(f"{'command':<24} {'ms':>8} {'x pass':>8} {'x floor':>8}")
    print(f"{'python -c pass':<24} {floor_pass * 1e3:8.1f} {1:8.2f} {floor_pass / floor_libs:8.2f}")
    print(f"{'floor imports':<24} {floor_libs * 1e3:8.1f} {floor_libs / floor_pass:8.2f} {1:8.2f}")
    for name, t in zip(names, ours, strict=True):
        print(f"{name:<24} {t * 1e3:8.1f} {t / floor_pass:8.2f} {t / floor_libs:8.2f}")
    print(
        textwrap.dedent(f"""
        {PLUGINS} sample plugins installed, {len(ENABLED)} enabled; median of {args.runs} runs.
        Target: toolwire plugins <= 1.5x floor imports.""")
    )


if __name__ == "__main__":
    main()
