"""Every test runs with its own user data dir, so no test writes to the real ledger; fixtures
every tier shares.

Property tests are repeatable: the ``repeatable`` Hypothesis profile (the default here) draws
the same examples on every run, so a run fails for a change, not for a new draw.
``pytest --hypothesis-profile=explore`` draws new ones, to look for what the fixed draw misses.
Neither profile times an example or its generation (no deadline, no ``too_slow`` health check):
on a loaded machine those fail for the machine's speed, not for the code.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from toolwire.config import _layers

settings.register_profile("explore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "repeatable", settings.get_profile("explore"), derandomize=True, database=None
)
settings.load_profile("repeatable")


@pytest.fixture(autouse=True)
def _private_user_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path_factory.mktemp("xdg-data")
    monkeypatch.setenv("XDG_DATA_HOME", str(Path(data)))
    monkeypatch.delenv("TOOLWIRE_PLUGINS", raising=False)
    monkeypatch.delenv("TOOLWIRE_CONFIG", raising=False)
    # No administrator's or user's file of this machine reaches a test run in this process (the
    # machine's /etc/toolwire file applies to every toolwire process: keep test machines free of
    # one, or its locks bind the commands the tests start).
    monkeypatch.setattr(_layers, "SYSTEM_CONFIG_FILE", Path(data) / "no-system-toolwire.toml")
    monkeypatch.setenv("TOOLWIRE_SYSTEM_CONFIG", "")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))


@pytest.fixture
def hold_new_sqlite_file() -> Iterator[Callable[[Path], None]]:
    """``hold(path)`` creates the SQLite file at ``path`` and holds its write lock from another
    connection (``BEGIN IMMEDIATE``, as another process opening the same new file has) for half a
    second, released on a timer: what a second opener of the file meets."""
    holders: list[tuple[sqlite3.Connection, threading.Timer]] = []

    def hold(path: Path) -> None:
        holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        holder.execute("CREATE TABLE held (x)")
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("INSERT INTO held VALUES (1)")
        release = threading.Timer(0.5, holder.execute, ("COMMIT",))
        release.start()
        holders.append((holder, release))

    yield hold
    for holder, release in holders:
        release.join()
        holder.close()


def descriptors_on(path: Path) -> int:
    """How many of this process's open file descriptors name ``path`` (Linux ``/proc``)."""
    target = str(path.resolve())
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == target
        except OSError:  # the descriptor of the listing itself, closed meanwhile
            continue
    return count


@pytest.fixture
def open_descriptors() -> Callable[[Path], int]:
    """``count(path)``: this process's open file descriptors on ``path``, to show that an object
    that failed to open a file closed it again."""
    return descriptors_on


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close the two files llama-cpp-python opens on ``os.devnull`` when it is imported and keeps
    for the life of the process (``llama_cpp._utils``): the session is that life here, and left
    to the interpreter's exit they are reported as unclosed files."""
    utils = sys.modules.get("llama_cpp._utils")
    if utils is None:
        return
    gc.collect()  # models the tests left to the collector are freed while the files are open
    for name in ("outnull_file", "errnull_file"):
        kept = getattr(utils, name, None)
        if kept is not None:
            kept.close()
