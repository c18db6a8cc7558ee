"""A tool, hook or observer that raises SystemExit, KeyboardInterrupt, GeneratorExit or a bare
BaseException costs only itself: the run goes on, and every call of the turn is answered."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from loop_support import (
    assert_no_orphans,
    events_of,
    make_host,
    plugin,
    result_texts,
    run_script,
)
from waiting import HANG, running, until

import toolwire
from toolwire.testing import tool_call


class Odd(BaseException):
    """Neither an Exception nor a signal: what a hostile plugin can still raise."""


@pytest.mark.parametrize(
    "raised",
    [SystemExit(3), KeyboardInterrupt(), GeneratorExit(), Odd("odd")],
    ids=lambda exc: type(exc).__name__,
)
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
async def test_a_tool_raising_a_base_exception_costs_only_its_call(
    tmp_path: Path, raised: BaseException, sync: bool
) -> None:
    if sync:

        @toolwire.tool
        def explode() -> str:
            """Raise."""
            raise raised

    else:

        @toolwire.tool(name="explode")
        async def explode_async() -> str:
            """Raise."""
            raise raised

        explode = explode_async

    @toolwire.tool
    def fine() -> str:
        """Answer."""
        return "fine"

    run = await run_script(
        make_host(tmp_path, [explode, fine]),
        [[tool_call("explode", id="a"), tool_call("fine", id="b")], "done"],
    )
    assert run.stop_reason == "answered"
    assert run.text == "done"
    texts = result_texts(run)
    assert texts[0].startswith(f"Tool execution failed: {type(raised).__name__}")
    assert texts[1] == "fine"
    assert_no_orphans(run)


def _raiser(raised: BaseException, *, coroutine: bool = False) -> Callable[..., Any]:
    """A hook body that raises ``raised`` (from a coroutine when ``coroutine``)."""
    if coroutine:

        async def body(**_: Any) -> Any:
            raise raised

        return body

    def sync_body(**_: Any) -> Any:
        raise raised

    return sync_body


_RAISED = [SystemExit(3), KeyboardInterrupt(), GeneratorExit(), Odd("odd")]


@toolwire.tool(returns_untrusted_content=True)
def page() -> str:
    """Return a page from outside."""
    return "a page"


def _hostile_plugin(hook: str, raised: BaseException, coroutine: bool) -> object:
    body = _raiser(raised, coroutine=coroutine)
    signatures: dict[str, Callable[..., Any]] = {
        "toolwire_resolve_function": lambda tool, request: body(),
        "toolwire_system_prompt_instructions": lambda tool, request: body(),
        "toolwire_request_context": lambda request: body(),
        "toolwire_filter_untrusted": lambda texts, context: body(),
    }
    return plugin("hostile", **{hook: signatures[hook]})


@pytest.mark.parametrize("raised", _RAISED, ids=lambda exc: type(exc).__name__)
@pytest.mark.parametrize("coroutine", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(
    "hook",
    [
        "toolwire_resolve_function",
        "toolwire_system_prompt_instructions",
        "toolwire_request_context",
        "toolwire_filter_untrusted",
    ],
)
async def test_a_hook_raising_a_base_exception_fails_only_itself(
    tmp_path: Path, hook: str, raised: BaseException, coroutine: bool
) -> None:
    host = make_host(tmp_path, [page], plugins=[_hostile_plugin(hook, raised, coroutine)])
    # A tool left out of the offer (its resolution or its instructions failed) is not called.
    expect_call = hook not in ("toolwire_resolve_function", "toolwire_system_prompt_instructions")
    script: list[Any] = [[tool_call("page", id="a")], "done"] if expect_call else ["done"]
    run = await run_script(host, script)
    assert run.stop_reason == "answered"
    assert run.text == "done"
    failures = [e for e in events_of(run, "plugin_failed") if e.hook == hook]
    assert failures
    assert {e.plugin for e in failures} == {"hostile"}
    assert type(raised).__name__ in failures[0].error
    if expect_call:
        assert result_texts(run)[0].endswith("a page")
    assert_no_orphans(run)


@pytest.mark.parametrize("raised", _RAISED, ids=lambda exc: type(exc).__name__)
async def test_an_observer_raising_a_base_exception_fails_only_itself(
    tmp_path: Path, raised: BaseException
) -> None:
    seen: list[Any] = []
    hostile = plugin("hostile", toolwire_event=lambda event: _raiser(raised)())
    watcher = plugin("watcher", toolwire_event=lambda event: seen.append(event))
    host = make_host(tmp_path, [page], plugins=[hostile, watcher])
    run = await run_script(host, [[tool_call("page", id="a")], "done"])
    assert run.stop_reason == "answered"
    failures = [e for e in seen if e.kind == "plugin_failed"]
    assert [(e.plugin, e.hook) for e in failures] == [("hostile", "toolwire_event")]
    assert type(raised).__name__ in failures[0].error
    assert seen[-1].kind == "run_finished"


def test_a_real_ctrl_c_still_cancels_the_run_with_every_call_answered(tmp_path: Path) -> None:
    with running(
        [sys.executable, str(Path(__file__).with_name("loop_interrupt_child.py")), str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as child:
        until((tmp_path / "waiting").exists, child, what="the waiting tool")
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=HANG)
    assert child.returncode == 130, err.decode()
    report = json.loads(out)
    assert report["stop_reason"] == "cancelled"
    assert set(report["results"]) == {"a", "b"}
    assert report["results"]["a"].startswith("Cancelled")


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
async def test_a_tool_raising_stop_iteration_fails_like_any_tool(
    tmp_path: Path, sync: bool
) -> None:
    if sync:

        @toolwire.tool
        def stop() -> str:
            """Raise."""
            raise StopIteration("no more")

    else:

        @toolwire.tool(name="stop")
        async def stop_async() -> str:
            """Raise."""
            raise StopIteration("no more")

        stop = stop_async

    run = await run_script(make_host(tmp_path, [stop]), [[tool_call("stop")], "done"])
    assert run.stop_reason == "answered"
    assert result_texts(run) == [
        "Tool execution failed: RuntimeError: coroutine raised StopIteration"
    ]
