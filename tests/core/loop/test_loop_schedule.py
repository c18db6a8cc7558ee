"""The scheduling of a turn's calls: groups in call order, sequential tools as barriers."""

from __future__ import annotations

from toolwire.loop._schedule import Group, schedule


def _is_upper(name: str) -> bool:
    return name.isupper()


def test_serial_when_the_limit_is_one():
    assert schedule(["a", "b"], limit=1, sequential=_is_upper) == [
        Group(("a",), concurrent=False),
        Group(("b",), concurrent=False),
    ]


def test_one_call_runs_alone():
    assert schedule(["a"], limit=4, sequential=_is_upper) == [Group(("a",), concurrent=False)]


def test_no_calls_no_groups():
    assert schedule([], limit=4, sequential=_is_upper) == []


def test_sequential_calls_are_barriers_between_concurrent_groups():
    assert schedule(["a", "b", "C", "d", "E", "F", "g"], limit=3, sequential=_is_upper) == [
        Group(("a", "b"), concurrent=True),
        Group(("C",), concurrent=False),
        Group(("d",), concurrent=True),
        Group(("E",), concurrent=False),
        Group(("F",), concurrent=False),
        Group(("g",), concurrent=True),
    ]


def test_order_is_kept_across_groups():
    items = ["a", "B", "c", "d", "E"]
    groups = schedule(items, limit=2, sequential=_is_upper)
    assert [item for group in groups for item in group.items] == items
