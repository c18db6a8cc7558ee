"""No MCP server process is left behind, checked by PID: after a normal close, a host that
leaves without closing, a host killed outright, a cancelled run and Ctrl-C."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from waiting import HANG, eventually, running, until

from toolwire import Host, ToolCallingLoop
from toolwire.testing import ScriptedModel, tool_call

HOST_CHILD = Path(__file__).with_name("host_child.py")


def _pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def _servers(notes_stdio, pid_file: Path, count: int = 2) -> dict[str, dict[str, object]]:
    env = {"NOTES_PID_FILE": str(pid_file)}
    return {f"s{i}": notes_stdio(env=env) for i in range(count)}


async def test_closing_the_host_ends_every_server(
    write_config, notes_stdio, tmp_path, processes_gone
):
    pid_file = tmp_path / "pids"
    host = Host.load(write_config(_servers(notes_stdio, pid_file)))
    async with host:
        result = await ToolCallingLoop(host).call("s0_whoami", {})
        assert result.is_ok
    pids = _pids(pid_file)
    assert len(pids) == 2
    assert int(result.content or "0") in pids
    assert processes_gone(pids) == []


async def test_a_cancelled_run_leaves_no_server(
    write_config, notes_stdio, tmp_path, processes_gone
):
    pid_file = tmp_path / "pids"
    hang = tmp_path / "hang"
    servers = {
        "notes": notes_stdio(env={"NOTES_PID_FILE": str(pid_file), "NOTES_HANG_FILE": str(hang)})
    }
    host = Host.load(write_config(servers))
    model = ScriptedModel(script=[tool_call("notes_hang", {}), "never"])
    async with host:
        assert "notes_hang" in host.tools
        task = asyncio.ensure_future(ToolCallingLoop(host, adapter=model).run("wait"))
        await eventually(hang.exists, what="the hanging call")
        task.cancel()
        try:
            run = await task
        except asyncio.CancelledError:
            run = None
        if run is not None:
            assert run.stop_reason == "cancelled"
    assert processes_gone(_pids(pid_file)) == []


def _child(config: Path, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HOST_CHILD), str(config), mode],
        capture_output=True,
        text=True,
        timeout=HANG,
        stdin=subprocess.DEVNULL,
    )


def test_a_host_that_leaves_without_closing(write_config, notes_stdio, tmp_path, processes_gone):
    pid_file = tmp_path / "pids"
    done = _child(write_config(_servers(notes_stdio, pid_file)), "exit")
    assert done.stdout.startswith("ready"), done.stderr
    pids = _pids(pid_file)
    assert len(pids) == 2
    assert processes_gone(pids) == []


def test_a_killed_host_leaves_no_server(write_config, notes_stdio, tmp_path, processes_gone):
    pid_file = tmp_path / "pids"
    done = _child(write_config(_servers(notes_stdio, pid_file)), "kill")
    assert done.returncode == -signal.SIGKILL
    assert done.stdout.startswith("ready"), done.stderr
    pids = _pids(pid_file)
    assert len(pids) == 2
    # The servers see their stdin close with the host's death and end.
    assert processes_gone(pids) == []


def test_ctrl_c_during_a_run_leaves_no_server(write_config, notes_stdio, tmp_path, processes_gone):
    pid_file = tmp_path / "pids"
    hang = tmp_path / "hang"
    servers = {
        "notes": notes_stdio(env={"NOTES_PID_FILE": str(pid_file), "NOTES_HANG_FILE": str(hang)})
    }
    script = (
        '\n[provider]\nadapter = "scripted"\n[provider.options]\n'
        'script = [{ tool_calls = [{ name = "notes_hang", arguments = {} }] }, "never"]\n'
        # The tool says nothing of its effects, so it counts as destructive: the piped run,
        # with nobody to ask, may run it only when the policy says so.
        '[policy]\nunattended_allow = ["destructive"]\n'
    )
    config = write_config(servers, extra=script)
    with running(
        [sys.executable, "-m", "toolwire", "--config", str(config), "run", "wait"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        until(hang.exists, process, what="the hanging call")
        os.kill(process.pid, signal.SIGINT)
        process.communicate(timeout=HANG)
    pids = _pids(pid_file)
    assert len(pids) == 1
    assert processes_gone(pids) == []
