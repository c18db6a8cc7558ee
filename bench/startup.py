"""Startup of the CLI as users run it, as ratios against the floor.

The venv holds toolwire, its real plugins openai, anthropic, web and basics (all four enabled in
``toolwire.toml``), the mcp plugin with the MCP SDK installed but not enabled, and 10 sample
plugins that are installed but not enabled, so discovery reads a realistic number of entry points.

The floor is the honest minimum: the interpreter plus the libraries every toolwire command that
reads a config imports (``argparse`` for the command line, ``tomllib`` for ``toolwire.toml``,
attrs and cattrs for its records, pluggy for the plugin manager). ``--old-floor`` also times the
floor this bench used before, which imported ``fastjsonschema`` (loaded only when a tool is
called) and the ``importlib_metadata`` backport (which toolwire never imports); it is shown for
comparison only.

Each command is timed by its CPU time (user + system, from the child's resource usage) and by
its wall time; the ratios use CPU time, which a busy machine disturbs less. Target: every
command at most 1.5x the floor.

``--instructions`` also counts the instructions each command executes, once, under valgrind's
cachegrind (``apt-get install valgrind``): a figure no other process on the machine moves, for
comparing two trees when the CPU times of one machine drift between runs.

``--baseline REF`` also builds a venv from the git commit ``REF`` of this repository (the same
plugins and samples) and times its commands in the same run, taking turns with the current
tree's, so a change is measured before and after under the same machine load. Its rows are
marked ``(REF)``; the target applies to the current tree only.

``--installed FOLDER`` (repeatable) also installs a distribution of the tree, with its
dependencies, without enabling it (in a baseline too when its tree has that folder): with
``--baseline``, what installing a plugin costs the commands of a host that does not use it.

    python bench/startup.py [--runs N] [--keep DIR] [--old-floor] [--baseline REF] [--instructions]
                            [--installed FOLDER ...]
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = 10
ENABLED = ("openai", "anthropic", "web", "basics")
REAL = ("plugins/openai", "plugins/anthropic", "contrib-tools/web", "contrib-tools/basics")
# Installed with their dependencies but not enabled: they must cost nothing at startup.
INSTALLED_ONLY = ("plugins/mcp",)
TARGET = 1.5
FLOOR = "import argparse, tomllib, attrs, cattrs, pluggy"
OLD_FLOOR = "import attrs, cattrs, pluggy, fastjsonschema, importlib_metadata"

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


@toolwire.hookimpl
def toolwire_tools(settings):
    return [sample{i}_echo]
'''


def build_env(
    base: Path, *, old_floor: bool, root: Path = ROOT, installed: tuple[str, ...] = ()
) -> Path:
    """A venv with toolwire (from the tree at ``root``), the real plugins, the samples and the
    folders of ``installed`` that the tree has; reused when it already exists."""
    env = base / "env"
    python = env / "bin" / "python"
    if python.exists():
        return env
    src = base / "src"
    for i in range(SAMPLES):
        pkg = src / f"sample{i}"
        (pkg / f"toolwire_sample{i}").mkdir(parents=True, exist_ok=True)
        (pkg / "pyproject.toml").write_text(TEMPLATE_PYPROJECT.format(i=i))
        (pkg / f"toolwire_sample{i}" / "__init__.py").write_text(TEMPLATE_MODULE.format(i=i))
    wheels = base / "wheels"
    real = [p for p in (*REAL, *INSTALLED_ONLY) if (root / p / "pyproject.toml").exists()]
    more = [str(root / p) for p in installed if (root / p / "pyproject.toml").exists()]
    sources = [
        str(root),
        *(str(root / p) for p in real),
        *more,
        *(str(p) for p in sorted(src.iterdir())),
    ]
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
    subprocess.run([*pip_wheel, "--no-build-isolation", "-w", str(wheels), *sources], check=True)
    venv.EnvBuilder(with_pip=True).create(env)
    extra = ["importlib_metadata"] if old_floor else []
    pip_install = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip_install, *extra, *map(str, wheels.glob("*.whl"))], check=True)
    return env


def baseline_env(
    base: Path, ref: str, *, old_floor: bool, installed: tuple[str, ...] = ()
) -> tuple[str, Path]:
    """The short commit id of ``ref`` and a venv built from that commit's tree (kept under
    ``base`` by commit, so a later run with the same ``--keep`` reuses it)."""
    found = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", f"{ref}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        raise SystemExit(f"--baseline {ref!r}: not a commit of {ROOT}: {found.stderr.strip()}")
    commit = found.stdout.strip()
    home = base / f"baseline-{commit}"
    tree = home / "tree"
    if not tree.exists():
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", commit],
            capture_output=True,
            check=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
    return commit, build_env(home, old_floor=old_floor, root=tree, installed=installed)


def _run_once(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of ``cmd``, which must succeed."""
    start = time.perf_counter()
    child = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert child.stderr is not None
    error = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    child.stderr.close()
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({child.returncode}): {error.decode()[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def timed(
    commands: list[list[str]], cwd: Path, runs: int, env: dict[str, str]
) -> list[tuple[float, float]]:
    """Median (CPU, wall) seconds of each command, after one warm-up run of each.

    The commands take turns, run by run, so a change in the machine's speed during the bench
    (another process, the CPU clock) touches all of them alike instead of skewing the ratios.
    """
    for cmd in commands:
        _run_once(cmd, cwd, env)
    samples: list[list[tuple[float, float]]] = [[] for _ in commands]
    for _ in range(runs):
        for index, cmd in enumerate(commands):
            samples[index].append(_run_once(cmd, cwd, env))
    return [
        (statistics.median(c for c, _ in s), statistics.median(w for _, w in s)) for s in samples
    ]


def instructions(cmd: list[str], cwd: Path, env: dict[str, str]) -> int:
    """The instructions one run of ``cmd`` executes, counted by valgrind's cachegrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    tool = [valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    done = subprocess.run(
        [*tool, *cmd], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr.decode(errors="replace"))
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{' '.join(cmd)} under cachegrind failed: {done.stderr.decode()[-2000:]}")
    return int(found[1].replace(",", ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--keep", type=Path, help="build the venv here and keep it")
    parser.add_argument("--old-floor", action="store_true", help="also time the old floor")
    parser.add_argument("--baseline", metavar="REF", help="also time the commands of commit REF")
    parser.add_argument(
        "--instructions", action="store_true", help="also count instructions (valgrind)"
    )
    parser.add_argument(
        "--installed",
        action="append",
        default=[],
        metavar="FOLDER",
        help="also install this distribution of the tree, not enabled (repeatable)",
    )
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="toolwire-startup-"))
    base.mkdir(parents=True, exist_ok=True)
    installed = tuple(args.installed)
    env_dir = build_env(base, old_floor=args.old_floor, installed=installed)
    python = str(env_dir / "bin" / "python")
    toolwire = str(env_dir / "bin" / "toolwire")
    work = base / "work"
    work.mkdir(exist_ok=True)
    (work / "toolwire.toml").write_text(
        "[plugins]\nenable = [" + ", ".join(f'"{n}"' for n in ENABLED) + "]\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLWIRE_")}
    rows: list[tuple[str, list[str]]] = [
        ("python -c pass", [python, "-c", "pass"]),
        ("floor", [python, "-c", FLOOR]),
    ]
    if args.old_floor:
        rows.append(("old floor", [python, "-c", OLD_FLOOR]))
    commands = [("toolwire --help", ["--help"]), ("toolwire plugins", ["plugins"])]
    commands.append(("toolwire tools list", ["tools", "list"]))
    rows += [(name, [toolwire, *argv]) for name, argv in commands]
    if args.baseline:
        commit, baseline = baseline_env(
            base, args.baseline, old_floor=args.old_floor, installed=installed
        )
        before = str(baseline / "bin" / "toolwire")
        rows += [(f"{name} ({commit})", [before, *argv]) for name, argv in commands]
    times = timed([c for _, c in rows], work, args.runs, env)
    figures = dict(zip((n for n, _ in rows), times, strict=True))
    floor = figures["floor"][0]
    counted: dict[str, int] = {}
    if args.instructions:
        counted = {name: instructions(cmd, work, env) for name, cmd in rows}
    width = max(len(name) for name in figures)
    head = f"{'command':<{width}} {'CPU ms':>8} {'wall ms':>8} {'x floor':>8}"
    print(head + (f" {'M instr':>8} {'x floor':>8}" if counted else ""))
    for name, (cpu, wall) in figures.items():
        line = f"{name:<{width}} {cpu * 1e3:8.1f} {wall * 1e3:8.1f} {cpu / floor:8.2f}"
        if counted:
            line += f" {counted[name] / 1e6:8.1f} {counted[name] / counted['floor']:8.2f}"
        print(line)
    worst = max(figures[name][0] / floor for name, _ in commands)
    met = worst <= TARGET
    print(
        f"\nEnabled: {', '.join(ENABLED)}; {SAMPLES} more plugins installed, not enabled"
        + (f" (and {', '.join(installed)})" if installed else "")
        + "; "
        f"median of {args.runs} runs.\nfloor: python -c {FLOOR!r}\n"
        f"Target: every command <= {TARGET}x the floor (CPU): worst {worst:.2f}x, "
        f"{'met' if met else 'MISSED'}."
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
