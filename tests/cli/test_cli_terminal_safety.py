"""What the CLI prints from outside stays inert, and a raising tool's traceback goes to the log.

Escape sequences from a tool's description, a tool's result, an MCP server's stderr or a file
name would retitle the terminal, clear it or write the clipboard: every command shows them as
U+FFFD. A tool that raises prints no Python traceback on stderr: people read the error result;
the traceback waits in the log file, or on stderr with ``--verbose``.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toolwire
from toolwire import Host
from toolwire.cli import _commands, inert, main

HOSTILE = "\x1b]0;PWNED\x07\x1b[2J\x1b]52;c;ZXZpbA==\x07\x9b31m"
CONTROLS = ("\x1b", "\x07", "\x9b")


def assert_inert(text: str) -> None:
    for control in CONTROLS:
        assert control not in text, repr(text)


hostile_echo = toolwire.Tool.from_schema(
    "hostile_echo",
    f"Echo a text back. {HOSTILE}",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    lambda arguments: f"{arguments['text']} {HOSTILE}",
    title=f"Echo {HOSTILE}",
    side_effects=["read_only"],
)


@toolwire.tool(side_effects=["read_only"])
def explode(reason: str) -> str:
    """Raise, always.

    Args:
        reason: Why.
    """
    raise RuntimeError(f"could not finish: {reason}")


@pytest.fixture(autouse=True)
def logging_restored() -> Any:
    """The handlers and level of the ``toolwire`` logger as they were before the test."""
    import logging

    logger = logging.getLogger("toolwire")
    handlers, level = list(logger.handlers), logger.level
    yield
    for handler in list(logger.handlers):
        if handler not in handlers:
            logger.removeHandler(handler)
            handler.close()
    logger.setLevel(level)


def run_cli(monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str, str]:
    def load(args: Any, surface: Any = None) -> Host:
        host = Host.load(None)
        host.add_tool(hostile_echo)
        host.add_tool(explode)
        return host

    monkeypatch.setattr(_commands, "_load", load)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_the_one_sanitizer_keeps_text_and_replaces_controls() -> None:
    assert (
        inert(f"a{HOSTILE}\tb\nc")
        == "a\ufffd]0;PWNED\ufffd\ufffd[2J\ufffd]52;c;ZXZpbA==\ufffd\ufffd31m\tb\nc"
    )
    assert inert("one\ntwo", one_line=True) == "one\ufffdtwo"


def test_tools_list_doctor_and_tools_call_print_outside_text_inert(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    code, out, err = run_cli(monkeypatch, "tools", "list")
    assert code == 0
    assert "hostile_echo" in out
    assert_inert(out + err)
    code, out, err = run_cli(monkeypatch, "doctor")
    assert_inert(out + err)
    code, out, err = run_cli(
        monkeypatch, "tools", "call", "hostile_echo", "--args", '{"text": "hi"}'
    )
    assert code == 0
    assert out.startswith("hi \ufffd]0;PWNED")
    assert_inert(out + err)


def test_a_raising_tool_prints_no_traceback_but_logs_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log = tmp_path / "state" / "toolwire" / "toolwire.log"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    code, _out, err = run_cli(monkeypatch, "tools", "call", "explode", "--args", '{"reason": "x"}')
    assert code == 1
    assert "could not finish: x" in err
    assert "Traceback" not in err
    logged = log.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in logged
    assert "RuntimeError: could not finish: x" in logged
    # --verbose shows it on stderr as well.
    code, _, err = run_cli(
        monkeypatch, "--verbose", "tools", "call", "explode", "--args", '{"reason": "y"}'
    )
    assert code == 1
    assert "Traceback (most recent call last)" in err


def test_the_log_is_the_owners_alone_wherever_it_is_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Tracebacks show arguments and paths: a log file the command makes is mode 0600, also in
    a folder others may read, and a folder it makes is 0700."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    monkeypatch.setenv("TOOLWIRE_LOG_FILE", str(shared / "toolwire.log"))
    old = os.umask(0o022)
    try:
        code, _out, _err = run_cli(
            monkeypatch, "tools", "call", "explode", "--args", '{"reason": "x"}'
        )
    finally:
        os.umask(old)
    assert code == 1
    assert stat.S_IMODE((shared / "toolwire.log").stat().st_mode) == 0o600
    monkeypatch.delenv("TOOLWIRE_LOG_FILE")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    run_cli(monkeypatch, "tools", "call", "explode", "--args", '{"reason": "y"}')
    made = tmp_path / "state" / "toolwire"
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    assert stat.S_IMODE((made / "toolwire.log").stat().st_mode) == 0o600


def test_mcp_servers_prints_a_servers_stderr_inert(tmp_path: Path) -> None:
    pytest.importorskip("toolwire_mcp")
    script = (
        "import sys; sys.stderr.write('boom "
        + HOSTILE.encode("unicode_escape").decode()
        + "\\n'); sys.stderr.flush(); sys.exit(3)"
    )
    config = tmp_path / "toolwire.toml"
    config.write_text(
        '[plugins]\nenable = ["mcp"]\n'
        "[tools.mcp.servers.broken]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps(['-c', script])}\n"
        f'[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n',
        encoding="utf-8",
    )
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "PATH": "/usr/bin:/bin"}
    for args in (["mcp", "servers"], ["tools", "list"], ["doctor"]):
        done = subprocess.run(
            [sys.executable, "-m", "toolwire", "--config", str(config), *args],
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
            env={**env, "HOME": str(tmp_path)},
        )
        shown = done.stdout + done.stderr
        assert "boom" in shown, (args, shown)
        assert_inert(shown)
