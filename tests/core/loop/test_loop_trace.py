"""The [trace] JSONL file: one Trace object per host, registered under its plugin name."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

from loop_support import kinds, make_host, run_script, scripted_loop

import toolwire
from toolwire._defaults.trace import Trace
from toolwire.testing import tool_call

TRACE = "toolwire._defaults.trace"


@toolwire.tool
def add(a: Annotated[int, "First."], b: Annotated[int, "Second."]) -> int:
    """Add two integers."""
    return a + b


@toolwire.tool
async def wait(seconds: Annotated[float, "How long."]) -> str:
    """Sleep, so that two runs overlap."""
    await asyncio.sleep(seconds)
    return "waited"


def _traces(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.jsonl"))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_host_registers_its_own_trace_under_the_plugin_name(tmp_path: Path) -> None:
    first = make_host(tmp_path, trace=str(tmp_path / "a.jsonl"))
    second = make_host(tmp_path, trace=str(tmp_path / "b.jsonl"))
    a = first.plugin_manager.get_plugin(TRACE)
    b = second.plugin_manager.get_plugin(TRACE)
    assert isinstance(a, Trace)
    assert isinstance(b, Trace)
    assert a is not b
    assert (a.path, b.path) == (str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"))


async def test_blocking_the_trace_plugin_turns_tracing_off(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    host = make_host(tmp_path, [add], trace=str(path))
    host.plugin_manager.set_blocked(TRACE)
    run = await run_script(host, [tool_call("add", {"a": 1, "b": 2}), "3"])
    assert run.stop_reason == "answered"
    assert not path.exists()


async def test_no_path_writes_nothing_and_keeps_no_run_open(tmp_path: Path) -> None:
    host = make_host(tmp_path, [add])
    trace = host.plugin_manager.get_plugin(TRACE)
    assert isinstance(trace, Trace)
    assert trace.begin("run_x") is None
    await run_script(host, [tool_call("add", {"a": 1, "b": 2}), "3"])
    assert _traces(tmp_path) == []


async def test_concurrent_runs_of_two_hosts_each_write_their_own_file(tmp_path: Path) -> None:
    paths = [tmp_path / "a" / "trace.jsonl", tmp_path / "b" / "trace.jsonl"]
    hosts = [make_host(tmp_path, [wait], trace=str(p)) for p in paths]
    script = [tool_call("wait", {"seconds": 0.05}), "done"]
    runs = await asyncio.gather(*(run_script(h, script) for h in hosts))
    for path, run in zip(paths, runs, strict=True):
        lines = _lines(path)
        assert [line["kind"] for line in lines] == kinds(run)
        assert {line["run_id"] for line in lines} == {run.id}


async def test_concurrent_runs_of_one_host_each_trace_all_their_events(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    host = make_host(tmp_path, [wait], trace=str(path))
    loops = [scripted_loop(host, [tool_call("wait", {"seconds": 0.05}), "done"])[0] for _ in "ab"]
    runs = await asyncio.gather(*(loop.run("go") for loop in loops))
    lines = _lines(path)
    for run in runs:
        assert [line["kind"] for line in lines if line["run_id"] == run.id] == kinds(run)
    assert len(lines) == sum(len(run.events) for run in runs)
