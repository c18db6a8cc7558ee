"""The waiting helpers: a child started for a Ctrl-C test can be interrupted, whatever this
test run inherited."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest
from waiting import HANG, running

REPORT = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"


@pytest.fixture
def sigint_ignored() -> Iterator[None]:
    """This process ignores SIGINT, as a test run started in the background of a script does."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.mark.usefixtures("sigint_ignored")
def test_a_child_gets_sigint_even_when_the_test_run_ignores_it() -> None:
    with running([sys.executable, "-c", REPORT], stdout=subprocess.PIPE, text=True) as child:
        out, _ = child.communicate(timeout=HANG)
    assert out == "True\n"
