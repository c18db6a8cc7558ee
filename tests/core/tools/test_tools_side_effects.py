"""The side-effect classes: declared by tools, accepted by ``[policy]``, linted by ``doctor``."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from loop_support import make_host, result_texts, run_script

import toolwire
from toolwire.config import ConfigError, PolicyConfig, load_config
from toolwire.testing import tool_call
from toolwire.tools import SideEffect, ToolPolicy, lint_tool

NEW = ("reads_files", "shell", "installs_dependencies", "external_service", "payment")


@pytest.mark.parametrize("effect", NEW)
def test_the_new_classes_are_declared_and_accepted_by_policy(tmp_path: Path, effect: str) -> None:
    assert SideEffect(effect).value == effect
    config_file = tmp_path / "toolwire.toml"
    config_file.write_text(f"[policy]\nrequire_approval = [{effect!r}]\ndeny = [{effect!r}]\n")
    config = load_config(config_file)
    assert config.policy.require_approval == (effect,)
    assert config.policy.deny == (effect,)


def test_an_unknown_class_is_refused_listing_all_of_them(tmp_path: Path) -> None:
    config_file = tmp_path / "toolwire.toml"
    config_file.write_text("[policy]\ndeny = ['process']\n")
    with pytest.raises(ConfigError, match=r"\$\.policy\.deny\[0\] = 'process'.*shell.*payment"):
        load_config(config_file)


def test_reading_files_still_counts_as_read_only() -> None:
    assert ToolPolicy(side_effects=["read_only", "reads_files"]).read_only
    assert not ToolPolicy(side_effects=["reads_files"]).read_only  # only read_only says so
    assert not ToolPolicy(side_effects=["read_only", "shell"]).read_only


async def test_policy_denies_and_defers_by_the_new_classes(tmp_path: Path) -> None:
    @toolwire.tool(side_effects=["shell"])
    def run_command(command: str) -> str:
        """Run a command."""
        return "ran"

    @toolwire.tool(side_effects=["payment", "external_service"])
    def pay(amount: int) -> str:
        """Pay."""
        return "paid"

    host = make_host(
        tmp_path,
        [run_command, pay],
        policy=PolicyConfig(deny=("shell",), require_approval=("payment",)),
    )
    run = await run_script(
        host, [[tool_call("run_command", {"command": "ls"}), tool_call("pay", {"amount": 3})]]
    )
    assert run.stop_reason == "deferred"
    assert "side effect(s) 'shell', which [policy] deny refuses" in result_texts(run)[0]
    [deferred] = run.deferred
    assert deferred.tool == "pay"
    assert "'payment'" in deferred.detail


def _undeclared(tool: toolwire.Tool) -> list[str]:
    return [f.message for f in lint_tool(tool) if f.code == "undeclared-side-effect"]


def test_doctor_lint_names_processes_and_files_a_tool_does_not_declare() -> None:
    @toolwire.tool(side_effects=["read_only"])
    def uptime() -> str:
        """How long the machine has run."""
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout

    @toolwire.tool(side_effects=["network"])
    def save(text: str) -> str:
        """Save a note."""
        Path("note.txt").write_text(text)
        return "saved"

    @toolwire.tool(side_effects=["network"])
    def append(text: str) -> str:
        """Append to the log."""
        with open("log.txt", "a") as log:
            log.write(text)
        return "ok"

    @toolwire.tool(side_effects=["read_only"])
    def cat(path: str) -> str:
        """Read a file."""
        with open(path) as f:
            return f.read()

    @toolwire.tool(side_effects=["read_only"])
    def tidy(path: str) -> str:
        """Remove a file."""
        os.remove(path)
        shutil.rmtree(path + ".d")
        return "gone"

    [shell] = _undeclared(uptime)
    assert "subprocess" in shell
    assert "'shell'" in shell
    assert "write_text" in _undeclared(save)[0]
    assert "'writes_files'" in _undeclared(save)[0]
    assert "'writes_files'" in _undeclared(append)[0]
    [reads] = _undeclared(cat)
    assert "open" in reads
    assert "'reads_files'" in reads
    assert "remove" in _undeclared(tidy)[0]
    assert "rmtree" in _undeclared(tidy)[0]


def test_doctor_lint_is_quiet_for_declared_or_lookalike_uses() -> None:
    @toolwire.tool(side_effects=["shell", "writes_files"])
    def build(target: str) -> str:
        """Build a target."""
        subprocess.run(["make", target], check=False)
        Path("built").touch()
        return "built"

    @toolwire.tool(side_effects=["read_only"])
    def clean(text: str) -> str:
        """Tidy a text."""
        import platform

        return text.replace("\\t", " ").strip() + platform.system()

    @toolwire.tool(side_effects=["read_only", "reads_files"])
    def cat(path: str) -> str:
        """Read a file."""
        return Path(path).read_text()

    assert _undeclared(build) == []
    assert _undeclared(clean) == []
    assert _undeclared(cat) == []


def test_doctor_lint_warns_of_an_inline_tool_that_waits() -> None:
    @toolwire.tool(inline=True, side_effects=["read_only"])
    def pause(seconds: float) -> str:
        """Wait."""
        time.sleep(seconds)
        return "waited"

    @toolwire.tool(inline=True, side_effects=["network"])
    def ping(host: str) -> str:
        """Ping a host."""
        return host

    @toolwire.tool(inline=True, side_effects=["read_only"])
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @toolwire.tool(side_effects=["network"])
    def fetch(url: str) -> str:
        """Fetch (in a worker thread)."""
        time.sleep(0)
        return url

    def waits(tool: toolwire.Tool) -> list[str]:
        return [f.message for f in lint_tool(tool) if f.code == "inline-may-wait"]

    [paused] = waits(pause)
    assert "runs inline, on the event loop, but uses sleep:" in paused
    assert "drop inline=True" in paused
    [pinged] = waits(ping)
    assert "but declares network:" in pinged
    assert waits(add) == []
    assert waits(fetch) == []
