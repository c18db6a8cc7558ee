"""``toolwire … | head``: a command whose output is closed early ends quietly, with 141."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CONFIG = """\
[plugins]
enable = ["basics"]

[provider]
adapter = "scripted"

[tools]
enable = ["calculator"]
"""

COMMANDS = [
    ["plugins"],
    ["plugins", "--json"],
    ["tools", "list"],
    ["tools", "why", "calculator"],
    ["tools", "show", "calculator", "--wire", "prompted"],
    ["tools", "call", "calculator", "--args", '{"expression": "6 * 7"}'],
    ["run", "what is 6 * 7?"],
    ["run", "--json", "what is 6 * 7?"],
    ["config", "show"],
    ["doctor"],
    ["chat", "--list"],
    ["batch", "jobs.jsonl", "--out", "done.jsonl", "--json"],
]


def _with_closed_stdout(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``toolwire ARGS`` with stdout a pipe nobody reads any more (its reader closed before
    the command writes, as ``head`` closes it after its lines)."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run(
            [sys.executable, "-m", "toolwire", *args],
            cwd=cwd,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(writer)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "toolwire.toml").write_text(CONFIG)
    job = {"id": "a", "prompt": "what is 6 * 7?", "tools": ["calculator"]}
    (tmp_path / "jobs.jsonl").write_text(json.dumps(job) + "\n")
    monkeypatch.delenv("TOOLWIRE_CONFIG", raising=False)
    return tmp_path


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_command_whose_output_is_closed_ends_quietly(workdir: Path, args: list[str]) -> None:
    done = _with_closed_stdout(args, workdir)
    assert "Traceback" not in done.stderr
    assert "BrokenPipeError" not in done.stderr
    assert done.returncode == 141, done.stderr
    if args[0] == "batch":  # its summary comes last, after the runs: their records are all there
        lines = (workdir / "done.jsonl").read_text().splitlines()
        assert [json.loads(line)["id"] for line in lines] == ["a"]


def test_help_to_a_closed_output_ends_quietly(workdir: Path) -> None:
    """argparse itself drops what it cannot write: no traceback, and a successful exit."""
    for args in (["--help"], ["tools", "--help"]):
        done = _with_closed_stdout(args, workdir)
        assert (done.returncode, done.stderr) == (0, ""), args


def test_output_that_is_read_still_arrives_whole(workdir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolwire", "tools", "list", "--json"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "calculator" in [t["name"] for t in json.loads(done.stdout)]
