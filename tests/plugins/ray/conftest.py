"""The Ray tier: one real local Ray cluster for the session, started and stopped here.

The cluster runs on 127.0.0.1 with 2 CPUs, no dashboard and a small object store. Its workers
find the batch test tools through ``PYTHONPATH``. When the cluster cannot start, every test of
the tier fails with the reason: nothing here is skipped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import batch_tools
import pytest

START_TIMEOUT = 120.0
LOCAL_ONLY = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}  # bind the node to 127.0.0.1, not eth0


@pytest.fixture(scope="session")
def ray_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The batch test tools, installed by entry point for the driver and the Ray workers."""
    return batch_tools.install(tmp_path_factory.mktemp("ray-site"))


@pytest.fixture(scope="session")
def ray_cluster(ray_site: Path) -> Iterator[str]:
    """The address of a running local Ray cluster (``ray start --head --block``)."""
    # Ray's socket paths must stay short: a temp dir of its own under /tmp.
    temp = Path(tempfile.mkdtemp(prefix="tw-ray-", dir="/tmp"))
    ray = Path(sys.executable).with_name("ray")
    env = {**os.environ, **LOCAL_ONLY, "PYTHONPATH": _pythonpath(ray_site)}
    log = (temp / "start.log").open("w")
    command = [
        str(ray),
        "start",
        "--head",
        "--block",
        "--num-cpus=2",
        "--node-ip-address=127.0.0.1",
        "--port=0",
        "--include-dashboard=false",
        "--object-store-memory=100000000",
        "--disable-usage-stats",
        f"--temp-dir={temp}",
    ]
    if not ray.exists():
        pytest.fail(f"the Ray tier needs the `ray` command next to {sys.executable}: install ray")
    process = subprocess.Popen(
        command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    address_file = temp / "ray_current_cluster"
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while not address_file.exists() or not address_file.read_text().strip():
            if process.poll() is not None or time.monotonic() > deadline:
                log.flush()
                tail = (temp / "start.log").read_text()[-3000:]
                pytest.fail(
                    f"the local Ray cluster did not start ({' '.join(command)}; exit "
                    f"{process.poll()}):\n{tail}"
                )
            time.sleep(0.2)
        address = address_file.read_text().strip()
        _wait_until_ready(address, process, temp)
        yield address
    finally:
        _stop(process)
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def _wait_until_ready(address: str, process: subprocess.Popen[bytes], temp: Path) -> None:
    """``ray start`` writes the address before the node accepts drivers: wait for the
    ``Ray runtime started`` line."""
    deadline = time.monotonic() + START_TIMEOUT
    while "Ray runtime started" not in (temp / "start.log").read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"the local Ray cluster at {address} never became ready")
        time.sleep(0.2)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to ``ray start --block`` stops the node's processes; then the group is killed
    (only the processes this session started: the group was created for them)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    if process.poll() is None:
        process.wait(timeout=10)


def _pythonpath(site: Path) -> str:
    current = os.environ.get("PYTHONPATH")
    return f"{site}{os.pathsep}{current}" if current else str(site)


@pytest.fixture
def ray_workdir(
    tmp_path: Path, ray_cluster: str, ray_site: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A work directory whose tools the driver (this process) and the cluster both find."""
    monkeypatch.syspath_prepend(str(ray_site))
    monkeypatch.setenv("PYTHONPATH", _pythonpath(ray_site))
    for key, value in LOCAL_ONLY.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    return tmp_path
