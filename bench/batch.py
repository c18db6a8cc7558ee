"""Throughput of ``toolwire batch``: in process at concurrency 1 to 64, and on a local Ray cluster.

Every run is a real conversation of the configuration users run (the ``basics`` plugin's
calculator offered, the SQLite ledger on, the default executor settings) against the scripted
model with a simulated latency of 200 ms per answer: the model asks for one calculator call,
then answers, so a run spends 400 ms waiting on its model. The ideal rate at concurrency N is
N / 0.4 runs per second; the bench prints the measured rate and its ratio to that ideal.

Floors: in process, at least 0.8 of the ideal rate at every concurrency; on Ray, 2 workers at
least 1.6x the rate of 1 (the same per-worker concurrency), and a per-run overhead against the
in-process executor (serial runs, one worker, the first run of each left out) of at most
50 ms.

Rates count from the first run's start: the time to join the cluster and start the workers is
printed apart (``startup``). The Ray part starts a 2-CPU cluster on 127.0.0.1 for itself
(``ray start --head --block``) and stops it at the end; ``--no-ray`` leaves it out.

Usage::

    python bench/batch.py [--jobs-per-slot N] [--repeat N] [--no-ray] [--check]

Each figure is the best of ``--repeat`` measurements (default 3): other load on the machine only
ever slows a run down.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

LATENCY = 0.2
MODEL_REQUESTS_PER_RUN = 2
LOCAL_CONCURRENCY = (1, 4, 16, 64)
RAY_PER_WORKER = 8
LOCAL_FLOOR = 0.8  # of the ideal rate
SCALING_FLOOR = 1.6  # 2 workers over 1
OVERHEAD_FLOOR = 0.050  # seconds per run, Ray over in-process


def _config(workdir: Path, ray_address: str | None = None) -> Any:
    from toolwire.config import config_from_dict

    plugins = ["basics", *(["ray"] if ray_address else [])]
    raw: dict[str, Any] = {
        "plugins": {"enable": plugins},
        "provider": {"adapter": "scripted", "options": {"latency": LATENCY}},
        "tools": {"basics": {"offer": "always"}},
        "ledger": {"path": str(workdir / "ledger.sqlite3")},
    }
    if ray_address:
        raw["tools"]["ray"] = {"address": ray_address}
    return config_from_dict(raw)


def _input(workdir: Path, jobs: int, name: str) -> Path:
    path = workdir / f"{name}.jsonl"
    rows = [
        {"id": str(i), "prompt": f"What is {i} * 7?", "tools": ["calculator"]} for i in range(jobs)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


async def _measure(
    *,
    workdir: Path,
    name: str,
    jobs: int,
    concurrency: int,
    executor: str = "local",
    workers: int | None = None,
    ray_address: str | None = None,
) -> dict[str, float]:
    from toolwire import Host
    from toolwire.batch import BatchPlan, run_batch

    host = Host.load(_config(workdir, ray_address))
    stamps: list[tuple[float, float]] = []

    def record(data: dict[str, Any], counts: Any) -> None:
        assert data["status"] == "done", data
        stamps.append((time.perf_counter(), float(data["seconds"])))

    started = time.perf_counter()
    try:
        await run_batch(
            host,
            _input(workdir, jobs, name),
            workdir / f"{name}.out.jsonl",
            plan=BatchPlan(concurrency=concurrency, workers=workers, address=ray_address),
            executor=executor,
            on_record=record,
        )
    finally:
        await host.aclose()
    first_end, first_seconds = stamps[0]
    runs_began = first_end - first_seconds
    span = stamps[-1][0] - runs_began
    return {
        "rate": jobs / span,
        # Serial runs end one after the other: the first (a cold host) left out.
        "serial_rate": (jobs - 1) / (stamps[-1][0] - first_end),
        "startup": runs_began - started,
    }


def _best(repeat: int, *, name: str, **kwargs: Any) -> dict[str, float]:
    """The best of ``repeat`` measurements (the machine's other load only ever slows a run)."""
    results = [asyncio.run(_measure(name=f"{name}-{i}", **kwargs)) for i in range(repeat)]
    best = max(results, key=lambda r: r["rate"])
    best["serial_rate"] = max(r["serial_rate"] for r in results)
    return best


@contextmanager
def _ray_cluster() -> Iterator[str]:
    temp = Path(tempfile.mkdtemp(prefix="tw-ray-bench-", dir="/tmp"))
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    command = [
        str(Path(sys.executable).with_name("ray")),
        *("start", "--head", "--block", "--num-cpus=2", "--node-ip-address=127.0.0.1"),
        *("--port=0", "--include-dashboard=false", "--object-store-memory=100000000"),
        *("--disable-usage-stats", f"--temp-dir={temp}"),
    ]
    log = (temp / "start.log").open("w")
    process = subprocess.Popen(
        command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while "Ray runtime started" not in (temp / "start.log").read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the local Ray cluster did not start; see {temp / 'start.log'}")
            time.sleep(0.2)
        yield (temp / "ray_current_cluster").read_text().strip()
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        finally:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            log.close()
            shutil.rmtree(temp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs-per-slot", type=int, default=8, help="runs per concurrency slot")
    parser.add_argument("--repeat", type=int, default=3, help="measurements, best counts")
    parser.add_argument("--no-ray", action="store_true", help="leave out the Ray executor")
    parser.add_argument("--check", action="store_true", help="exit 1 when a floor is missed")
    args = parser.parse_args()
    per_run_ideal = LATENCY * MODEL_REQUESTS_PER_RUN
    missed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="tw-batch-bench-") as tmp:
        workdir = Path(tmp)
        print(f"batch: scripted model, {LATENCY * 1000:.0f} ms an answer, 2 answers a run")
        print(f"{'executor':<22}{'runs/s':>9}{'ideal':>9}{'ratio':>8}{'startup s':>11}")
        local: dict[int, dict[str, float]] = {}
        for concurrency in LOCAL_CONCURRENCY:
            jobs = max(8, concurrency * args.jobs_per_slot)
            result = _best(
                args.repeat,
                workdir=workdir,
                name=f"local{concurrency}",
                jobs=jobs,
                concurrency=concurrency,
            )
            local[concurrency] = result
            ideal = concurrency / per_run_ideal
            ratio = result["rate"] / ideal
            print(
                f"{'local, ' + str(concurrency) + ' at a time':<22}{result['rate']:>9.2f}"
                f"{ideal:>9.2f}{ratio:>8.2f}{result['startup']:>11.2f}"
            )
            if ratio < LOCAL_FLOOR:
                missed.append(f"local at {concurrency}: {ratio:.2f} of ideal < {LOCAL_FLOOR}")
        if not args.no_ray:
            with _ray_cluster() as address:
                ray: dict[int, dict[str, float]] = {}
                for workers in (1, 2):
                    concurrency = RAY_PER_WORKER * workers
                    result = _best(
                        args.repeat,
                        workdir=workdir,
                        name=f"ray{workers}",
                        jobs=concurrency * args.jobs_per_slot,
                        concurrency=concurrency,
                        executor="ray",
                        workers=workers,
                        ray_address=address,
                    )
                    ray[workers] = result
                    ideal = concurrency / per_run_ideal
                    print(
                        f"{f'ray, {workers} worker(s) x {RAY_PER_WORKER}':<22}"
                        f"{result['rate']:>9.2f}{ideal:>9.2f}{result['rate'] / ideal:>8.2f}"
                        f"{result['startup']:>11.2f}"
                    )
                serial_local = _best(
                    args.repeat, workdir=workdir, name="serial-local", jobs=16, concurrency=1
                )
                serial_ray = _best(
                    args.repeat,
                    workdir=workdir,
                    name="serial-ray",
                    jobs=16,
                    concurrency=1,
                    executor="ray",
                    workers=1,
                    ray_address=address,
                )
            scaling = ray[2]["rate"] / ray[1]["rate"]
            overhead = 1 / serial_ray["serial_rate"] - 1 / serial_local["serial_rate"]
            print(f"ray scaling, 2 workers over 1: {scaling:.2f}x (floor {SCALING_FLOOR}x)")
            print(
                f"ray overhead per run against in-process (serial): {overhead * 1000:.1f} ms "
                f"(floor {OVERHEAD_FLOOR * 1000:.0f} ms)"
            )
            if scaling < SCALING_FLOOR:
                missed.append(f"ray scaling {scaling:.2f}x < {SCALING_FLOOR}x")
            if overhead > OVERHEAD_FLOOR:
                missed.append(f"ray overhead {overhead * 1000:.1f} ms > {OVERHEAD_FLOOR * 1000} ms")
    for line in missed:
        print(f"MISSED: {line}")
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
