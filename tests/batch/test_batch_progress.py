"""``toolwire batch`` progress: a line redrawn in place on a real terminal, plain otherwise."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pexpect
from batch_tools import write_config
from waiting import HANG


def _jobs(workdir: Path, count: int) -> Path:
    path = workdir / "in.jsonl"
    rows = [{"id": str(i), "prompt": "sleep=0.15", "tools": ["wait"]} for i in range(count)]
    rows.append({"id": "broken", "prompt": "p", "tools": ["no_such_tool"]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_progress_on_a_pseudo_terminal(workdir: Path) -> None:
    config = write_config(workdir, extra="[batch]\nconcurrency = 2\n")
    jobs = _jobs(workdir, 6)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "toolwire", "--config", str(config), "batch", str(jobs), "--out", "out.jsonl"],
        cwd=str(workdir),
        encoding="utf-8",
        timeout=HANG,
        dimensions=(24, 120),
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    screen = child.before
    # Redrawn in place: carriage return and erase-line before every state of the bar.
    states = re.findall(r"\r\x1b\[2K(\[[#-]{20}\] [^\r\n]*)", screen)
    assert len(states) >= 7, screen
    assert states[0].startswith("[--------------------] 0/7 done 0 failed 0 deferred 0")
    assert "ETA --:--" in states[0]
    finished = [s for s in states if " 7/7 " in s]
    assert finished
    assert finished[-1].startswith("[####################] 7/7 done 6 failed 1")
    assert re.search(r"ETA \d+:\d\d", states[3]), states[3]
    assert re.search(r"\d+\.\d/s", states[-1])
    assert "7 run(s) in" in screen
    assert "6 done, 1 failed, 0 deferred" in screen


def test_progress_is_plain_lines_when_not_a_terminal(workdir: Path) -> None:
    config = write_config(workdir)
    jobs = _jobs(workdir, 2)
    command = [sys.executable, "-m", "toolwire", "--config", str(config), "batch"]
    done = subprocess.run(
        [*command, str(jobs), "--out", "out.jsonl"],
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert done.returncode == 1
    assert "\r" not in done.stderr
    assert "\x1b" not in done.stderr
    notice, *lines = done.stderr.splitlines()
    assert notice.startswith("toolwire: the batch surface is hosted and the config names no tools")
    assert lines[0].startswith("batch: 0/3 done 0 failed 0 deferred 0")
    assert lines[-1].startswith("batch: 3/3 done 2 failed 1 deferred 0")
