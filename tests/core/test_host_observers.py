"""Closing a host ends the threads of observers moved off the loop, after what was queued."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from loop_support import evolve_loop, make_host, plugin, run_script

import toolwire
from toolwire import Host
from toolwire.testing import tool_call


@toolwire.tool
def page() -> str:
    """Return a page."""
    return "a page"


def _observer_threads(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"toolwire-observer-{name}"]


class Gated:
    """An observer slower than the bound over its first event (so it is moved to a thread),
    then waiting at ``gate`` before each event."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.first = threading.Event()
        self.seen: list[Any] = []

    def __call__(self, event: Any) -> None:
        if not self.seen:
            self.first.wait(0.3)
        elif not self.gate.wait(60):
            raise AssertionError("the gate was never opened")
        self.seen.append(event)


def _host(tmp_path: Path, slow: Gated, watched: list[Any], **loop: Any) -> Host:
    def slow_observer(event: Any) -> None:
        slow(event)

    def watching(event: Any) -> None:
        watched.append(event)

    return make_host(
        tmp_path,
        [page],
        plugins=[
            plugin("slow", toolwire_event=slow_observer),
            plugin("watching", toolwire_event=watching),
        ],
        loop=evolve_loop(observer_timeout=0.1, **loop),
    )


async def test_closing_the_host_delivers_what_was_queued_then_ends_the_thread(
    tmp_path: Path,
) -> None:
    slow, watched = Gated(), []
    host = _host(tmp_path, slow, watched)
    run = await run_script(host, [[tool_call("page")], "done"])
    assert run.stop_reason == "answered"
    assert len(slow.seen) == 1  # the rest waits in its queue
    assert _observer_threads("slow")
    opener = threading.Timer(0.3, slow.gate.set)  # the observer catches up while the host closes
    opener.start()
    try:
        await asyncio.wait_for(host.aclose(), 60)  # only a hang guard
        assert slow.seen[-1].kind == "run_finished"
        # Every event of the run reached it (the report of its slowness too, in its own order).
        assert len(slow.seen) == len(watched)
        assert {id(e) for e in slow.seen} == {id(e) for e in watched}
        assert _observer_threads("slow") == []
    finally:
        opener.cancel()
        slow.gate.set()
        opener.join()


async def test_an_observer_that_never_returns_does_not_hold_the_close(tmp_path: Path) -> None:
    slow, watched = Gated(), []
    host = _host(tmp_path, slow, watched, observer_close_timeout=0.2)
    await run_script(host, [[tool_call("page")], "done"])
    try:
        await asyncio.wait_for(host.aclose(), 60)  # returns after its own bound, not the gate's
        busy = [e for e in watched if e.kind == "plugin_failed" and "host began" in e.error]
        assert [e.plugin for e in busy] == ["slow"]
        assert "still busy 0.2 s after the host began to close" in busy[0].error
        assert "([loop] observer_close_timeout)" in busy[0].error
        info = host.plugin_info("slow")
        assert info is not None
        assert info.error == busy[0].error
    finally:
        slow.gate.set()
    # Released, it finishes the event it was on and delivers nothing more.
    for thread in _observer_threads("slow"):
        thread.join(60)
    assert _observer_threads("slow") == []
    assert len(slow.seen) == 2


async def test_a_host_used_after_closing_calls_the_observer_inline_again(
    tmp_path: Path,
) -> None:
    slow, watched = Gated(), []
    slow.gate.set()
    host = _host(tmp_path, slow, watched)
    await run_script(host, [[tool_call("page")], "done"])
    await asyncio.wait_for(host.aclose(), 60)
    delivered = len(slow.seen)
    assert _observer_threads("slow") == []
    # The host is usable again: the observer is called inline, as at the start.
    await run_script(host, [[tool_call("page")], "done"])
    assert len(slow.seen) > delivered
    assert slow.seen[-1].kind == "run_finished"
    await host.aclose()
