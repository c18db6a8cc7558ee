"""The garbage collector while a command's conversations run: start-up frozen, young objects
collected less often, everything put back when the command ends."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator

YOUNG_THRESHOLD = 10_000
"""Allocations between collections of the youngest generation while conversations run."""


@contextlib.contextmanager
def collector_for_runs() -> Iterator[Callable[[], None]]:
    """Within the block, calling the function it gives (once start-up is over: imports done,
    host and adapter made) freezes what exists (``gc.freeze()``: it lives as long as the process,
    and the collector's passes no longer walk it) and collects the youngest generation every
    :data:`YOUNG_THRESHOLD` allocations instead of 700: rounds make and drop containers by the
    thousand. The thresholds and the frozen objects are put back when the block ends, for a
    process that goes on (tests call commands in process)."""
    threshold = gc.get_threshold()

    def settle() -> None:
        gc.freeze()
        gc.set_threshold(YOUNG_THRESHOLD, *threshold[1:])

    try:
        yield settle
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
