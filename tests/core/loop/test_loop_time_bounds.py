"""Default time bounds: tools, the awaitable answers of hooks, and observers that block."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from loop_support import events_of, evolve_loop, make_host, plugin, result_texts, run_script

import toolwire
from toolwire.testing import tool_call


@toolwire.tool
async def hang() -> str:
    """Never answer in time."""
    await asyncio.sleep(30)
    return "late"


@toolwire.tool(timeout=5.0)
async def patient() -> str:
    """Take a little longer than the default bound, within its own timeout."""
    await asyncio.sleep(0.2)
    return "in time"


@toolwire.tool(returns_untrusted_content=True)
def page() -> str:
    """Return a page from outside."""
    return "a page"


async def test_a_tool_without_a_timeout_gets_the_default_bound(tmp_path: Path) -> None:
    host = make_host(tmp_path, [hang], loop=evolve_loop(tool_timeout=0.05))
    run = await run_script(host, [[tool_call("hang")], "done"])
    assert run.stop_reason == "answered"
    assert result_texts(run) == [
        "Tool hang timed out after 0.05 s, the default bound for tools that set no timeout of "
        "their own ([loop] tool_timeout)."
    ]


async def test_a_tools_own_timeout_wins_over_the_default(tmp_path: Path) -> None:
    host = make_host(tmp_path, [patient], loop=evolve_loop(tool_timeout=0.01))
    run = await run_script(host, [[tool_call("patient")], "done"])
    assert result_texts(run) == ["in time"]


async def _resolve(tool: Any, request: Any) -> Any:
    await asyncio.sleep(30)


async def _instruct(tool: Any, request: Any) -> Any:
    await asyncio.sleep(30)


async def _context(request: Any) -> Any:
    await asyncio.sleep(30)


async def _filter(texts: Any, context: Any) -> Any:
    await asyncio.sleep(30)


_HOOKS: dict[str, Callable[..., Any]] = {
    "toolwire_resolve_function": _resolve,
    "toolwire_system_prompt_instructions": _instruct,
    "toolwire_request_context": _context,
    "toolwire_filter_untrusted": _filter,
}


@pytest.mark.parametrize("hook", sorted(_HOOKS))
async def test_a_hook_answering_too_slowly_fails_alone_naming_the_bound(
    tmp_path: Path, hook: str
) -> None:
    slow = plugin("slow", **{hook: _HOOKS[hook]})
    host = make_host(tmp_path, [page], plugins=[slow], loop=evolve_loop(hook_timeout=0.05))
    offered = hook not in ("toolwire_resolve_function", "toolwire_system_prompt_instructions")
    run = await run_script(host, [[tool_call("page")], "done"] if offered else ["done"])
    assert run.stop_reason == "answered"
    failures = [e for e in events_of(run, "plugin_failed") if e.hook == hook]
    assert failures
    assert {e.plugin for e in failures} == {"slow"}
    assert f"{hook} took longer than 0.05 s ([loop] hook_timeout)" in failures[0].error
    if offered:
        assert result_texts(run)[0].endswith("a page")


async def test_a_blocking_observer_is_moved_off_the_loop(tmp_path: Path) -> None:
    gate = threading.Event()
    loop_thread = threading.get_ident()
    delivered: list[tuple[str, bool]] = []
    reports: list[Any] = []

    def blocking(event: Any) -> None:
        on_loop = threading.get_ident() == loop_thread
        delivered.append((event.kind, on_loop))
        if len(delivered) == 1:
            gate.wait(0.3)  # slower than the bound, once, inline
        elif not gate.wait(30):
            raise AssertionError("never released")

    def watching(event: Any) -> None:
        if event.kind == "plugin_failed":
            reports.append(event)

    host = make_host(
        tmp_path,
        [page],
        plugins=[
            plugin("blocking", toolwire_event=blocking),
            plugin("watching", toolwire_event=watching),
        ],
        loop=evolve_loop(observer_timeout=0.1),
    )
    run = await run_script(host, [[tool_call("page")], "done"])
    # The run ended while the observer still waits on its second event.
    assert run.stop_reason == "answered"
    assert len(delivered) == 2
    gate.set()
    for _ in range(500):
        if len(delivered) > len(run.events):
            break
        await asyncio.sleep(0.01)
    kinds = [kind for kind, _ in delivered]
    assert kinds[0] == "run_started"
    assert kinds[-1] == "run_finished"
    assert [on_loop for _, on_loop in delivered[1:]] == [False] * (len(delivered) - 1)
    (report,) = reports
    assert report.plugin == "blocking"
    assert "longer than 0.1 s ([loop] observer_timeout)" in report.error
