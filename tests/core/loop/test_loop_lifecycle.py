"""The call lifecycle's table: what docs/ledger.md shows is what the loop allows, every state is
reachable, every call can end, and a move the table lacks is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolwire.loop._lifecycle import (
    TRANSITIONS,
    CallEvent,
    CallState,
    LifecycleError,
    step,
    transition_table,
)
from toolwire.loop._state import CallSlot
from toolwire.messages import ToolCall

ROOT = Path(__file__).resolve().parents[3]
TERMINAL = {CallState.REFUSED, CallState.ANSWERED, CallState.SETTLED, CallState.RECOVERED}


def test_the_ledger_page_shows_the_lifecycle_table_as_the_loop_has_it() -> None:
    assert transition_table() in (ROOT / "docs" / "ledger.md").read_text(encoding="utf-8")


def _reachable(start: str, edges: dict[str, set[str]]) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for target in edges.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_every_state_is_reached_and_every_call_can_end() -> None:
    forward: dict[str, set[str]] = {}
    for t in TRANSITIONS:
        forward.setdefault(t.source, set()).add(t.target)
    states = {v for k, v in vars(CallState).items() if k.isupper()}
    assert _reachable(CallState.PROPOSED, forward) == states
    for state in states - TERMINAL:
        assert _reachable(state, forward) & TERMINAL, state
    for state in TERMINAL:
        assert state not in forward, f"{state} is terminal"


def test_a_move_the_table_lacks_is_refused() -> None:
    slot = CallSlot(ToolCall(id="c1", name="charge", arguments={}))
    with pytest.raises(
        LifecycleError, match=r"call c1: 'settle' is not allowed while it is proposed"
    ):
        step(slot, CallEvent.SETTLE)
    step(slot, CallEvent.ADMIT)
    step(slot, CallEvent.START)
    step(slot, CallEvent.SETTLE)
    assert slot.state == CallState.SETTLED
    with pytest.raises(LifecycleError):
        step(slot, CallEvent.START)  # a settled call never starts again
