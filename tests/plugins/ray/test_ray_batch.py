"""``toolwire batch --executor ray`` on a real local Ray cluster: workers, a killed worker, remote
tools. Every run goes through the ``toolwire`` command in a subprocess, as users run it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from batch_tools import KILL_SCRIPT, write_config


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _toolwire(config: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "toolwire", "--config", str(config), *args]


def _ray_config(workdir: Path, address: str, *, script: Any = None, extra: str = "") -> Path:
    return write_config(
        workdir,
        script=script,
        extra=f'[tools.ray]\naddress = "{address}"\n{extra}',
        plugins=("ray",),
    )


def test_a_batch_over_two_workers(ray_workdir: Path, ray_cluster: str) -> None:
    config = _ray_config(ray_workdir, ray_cluster)
    rows = [{"id": str(i), "prompt": f"job {i} sleep=0.3", "tools": ["wait"]} for i in range(6)]
    jobs = _jsonl(ray_workdir / "in.jsonl", rows)
    out = ray_workdir / "out.jsonl"
    args = ["batch", str(jobs), "--out", str(out), "--executor", "ray", "--workers", "2"]
    done = subprocess.run(
        [*_toolwire(config, *args), "--concurrency", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (done.stderr, out.read_text() if out.exists() else "")
    summary = json.loads(done.stdout)
    assert (summary["executor"], summary["done"], summary["total"]) == ("ray", 6, 6)
    records = _records(out)
    assert sorted(r["id"] for r in records) == [str(i) for i in range(6)]
    assert all(r["status"] == "done" for r in records)
    assert all(f"job {r['id']} sleep=0.3" in r["text"] for r in records)
    workers = {r["worker"]["pid"] for r in records}
    assert len(workers) == 2
    assert os.getpid() not in workers


def test_a_worker_killed_mid_run_hands_its_run_on(ray_workdir: Path, ray_cluster: str) -> None:
    config = _ray_config(ray_workdir, ray_cluster, script=KILL_SCRIPT)
    rows = [{"id": f"j{i}", "prompt": f"job {i}", "tools": ["charge", "wait"]} for i in range(4)]
    jobs = _jsonl(ray_workdir / "in.jsonl", rows)
    out = ray_workdir / "out.jsonl"
    block = ray_workdir / "block"
    block.write_text("3")  # the runs that charge third and fourth wait in `wait`
    args = ["batch", str(jobs), "--out", str(out), "--executor", "ray", "--workers", "2"]
    driver = subprocess.Popen(
        [*_toolwire(config, *args), "--concurrency", "2", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180
        while len(markers := sorted(ray_workdir.glob("waiting-*"))) < 2:
            assert driver.poll() is None, driver.communicate()
            assert time.monotonic() < deadline, "the runs never reached the blocking call"
            time.sleep(0.05)
        pid_text, prompt = markers[0].read_text().split(" ", 1)
        victim = int(pid_text)
        assert victim != driver.pid
        os.kill(victim, signal.SIGKILL)
        block.unlink()
        stdout, stderr = driver.communicate(timeout=240)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.communicate()
    assert driver.returncode == 0, stderr
    summary = json.loads(stdout)
    assert (summary["done"], summary["failed"], summary["deferred"]) == (4, 0, 0)
    records = {r["id"]: r for r in _records(out)}
    assert sorted(records) == ["j0", "j1", "j2", "j3"]
    # Every side effect ran exactly once, the killed worker's included.
    charged = (ray_workdir / "effects.log").read_text().splitlines()
    assert sorted(charged) == ["job 0", "job 1", "job 2", "job 3"]
    handed_on = records["j" + prompt.split()[-1]]
    assert handed_on["attempts"] == 2
    assert handed_on["resumed"] is True
    assert handed_on["worker"]["pid"] != victim
    assert [c["outcome"] for c in handed_on["tool_calls"]] == ["recovered", "executed"]
    assert handed_on["tool_calls"][0]["result"]["content"] == "charged 5"


def test_a_remote_tool_runs_as_a_ray_task_with_its_resources(
    ray_workdir: Path, ray_cluster: str
) -> None:
    script = [
        {
            "tool_calls": [
                {"name": "heavy", "arguments": {"label": "first", "seconds": 0.8}},
                {"name": "heavy", "arguments": {"label": "second", "seconds": 0}},
            ]
        },
        {"text": "done"},
    ]
    config = _ray_config(
        ray_workdir,
        ray_cluster,
        script=script,
        extra="remote = { heavy = { num_cpus = 1 } }\n[loop]\nconcurrency = 2\n",
    )
    done = subprocess.run(
        _toolwire(config, "run", "work hard", "--json"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert run["stop_reason"] == "answered"
    results = [c["result"]["data"] for c in run["tool_calls"]]
    # Results in call order, though the second task ended first.
    assert [r["label"] for r in results] == ["first", "second"]
    assert all(r["cpus"] == 1.0 for r in results)
    assert len({r["pid"] for r in results}) == 2  # two tasks at once, in two Ray workers
