"""How the admitted calls of a turn run: in one order, with sequential tools as barriers.

A pure function: calls in, groups out, no I/O. The execution stage runs the groups in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import attrs

T = TypeVar("T")


@attrs.define
class Group(Generic[T]):
    """Calls that may run together (``concurrent``), or one call that runs alone."""

    items: tuple[T, ...]
    concurrent: bool


def schedule(items: Sequence[T], *, limit: int, sequential: Callable[[T], bool]) -> list[Group[T]]:
    """Split ``items`` into groups run one after the other, keeping their order.

    With ``limit`` 1 or a single item everything runs alone, in order. Otherwise each item for
    which ``sequential`` is true is a barrier: it waits for everything before it and runs alone;
    the items between barriers form one concurrent group (at most ``limit`` running at once).
    """
    if limit == 1 or len(items) <= 1:
        return [Group((item,), concurrent=False) for item in items]
    groups: list[Group[T]] = []
    pending: list[T] = []
    for item in items:
        if not sequential(item):
            pending.append(item)
            continue
        if pending:
            groups.append(Group(tuple(pending), concurrent=True))
            pending = []
        groups.append(Group((item,), concurrent=False))
    if pending:
        groups.append(Group(tuple(pending), concurrent=True))
    return groups
