"""Every test runs with its own user data dir, so no test writes to the real ledger; fixtures
every tier shares.

Property tests are repeatable: the ``repeatable`` Hypothesis profile (the default here) draws
the same examples on every run, so a run fails for a change, not for a new draw.
``pytest --hypothesis-profile=explore`` draws new ones, to look for what the fixed draw misses.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile("repeatable")


@pytest.fixture(autouse=True)
def _private_user_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path_factory.mktemp("xdg-data")
    monkeypatch.setenv("XDG_DATA_HOME", str(Path(data)))
    monkeypatch.delenv("TOOLWIRE_PLUGINS", raising=False)
    monkeypatch.delenv("TOOLWIRE_CONFIG", raising=False)
    # No administrator's or user's file of this machine reaches a test.
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
