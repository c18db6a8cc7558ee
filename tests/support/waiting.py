"""Waiting for what another process does: on the event itself, bounded only against a hang.

A test that waits for a child process to reach a point (a marker file, a port, a line) or to end
waits for that, however long a loaded machine takes; :data:`HANG` only ends a wait that would
never end. A child that ends before the event fails the wait at once, with its output.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

HANG = 900.0
"""Seconds after which a wait is taken for a hang: far beyond what any wait of the suite takes on
a loaded two-core machine, so that a test fails for what it checks, not for the machine's speed."""


def until(
    done: Callable[[], bool], child: subprocess.Popen[Any] | None = None, *, what: str
) -> None:
    """Return once ``done()`` is true.

    :raises AssertionError: when ``child`` ends first (naming its exit status and output), or
        after :data:`HANG` seconds.
    """
    deadline = time.monotonic() + HANG
    while not done():
        if child is not None and child.poll() is not None:
            out, err = child.communicate()
            raise AssertionError(
                f"the child ended (exit status {child.returncode}) before {what}:\n"
                f"{out or ''}\n{err or ''}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} after {HANG:g} s: taken for a hang")
        time.sleep(0.02)


# Execs the command with SIGINT at its default disposition.
_DEFAULT_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


@contextlib.contextmanager
def running(args: list[str], **options: Any) -> Iterator[subprocess.Popen[Any]]:
    """``subprocess.Popen(args, **options)`` for the block: killed if it still runs when the block
    ends, then awaited, its pipes closed.

    The child starts as a terminal starts a program, with SIGINT at its default, so that Ctrl-C
    (SIGINT) reaches it even when this test run inherited SIGINT ignored, as every command a
    shell script starts in the background does; a child started with SIGINT ignored never sees
    it.
    """
    wrapped = [sys.executable, "-S", "-c", _DEFAULT_SIGINT, *map(str, args)]
    with subprocess.Popen(wrapped, **options) as child:
        try:
            yield child
        finally:
            if child.poll() is None:
                child.kill()


async def eventually(done: Callable[[], bool], *, what: str) -> None:
    """:func:`until` for a test on an event loop: the loop runs between looks."""
    deadline = time.monotonic() + HANG
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} after {HANG:g} s: taken for a hang")
        await asyncio.sleep(0.02)
