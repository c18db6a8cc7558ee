"""Another commit of this repository, run from its own sources beside the current tree.

``tree(work, REF)`` extracts the commit ``REF`` (``git archive``) under ``work``;
``environ(tree, env)`` is ``env`` with that tree's ``core``, ``plugins/*`` and
``contrib-tools/*`` first on ``PYTHONPATH``, so ``python -m toolwire`` runs the commit's code
with this venv's packages and entry points (the same plugins, by name). Benches use it to
measure before and after in one run, under the same load.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tree(work: Path, ref: str) -> Path:
    """The sources of commit ``ref``, extracted under ``work``."""
    found = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", f"{ref}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        raise SystemExit(f"--baseline {ref!r}: not a commit of {ROOT}: {found.stderr.strip()}")
    commit = found.stdout.strip()
    target = work / f"baseline-{commit}"
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return target


def environ(source: Path, env: dict[str, str]) -> dict[str, str]:
    """``env`` running the packages of the extracted ``source`` tree."""
    paths = [
        source / "core",
        *sorted(source.glob("plugins/*")),
        *sorted(source.glob("contrib-tools/*")),
    ]
    return {**env, "PYTHONPATH": os.pathsep.join(str(p) for p in paths)}
