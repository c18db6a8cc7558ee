"""Fixtures of the MCP tests: a config writer for servers, and a streamable-HTTP notes server."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from waiting import HANG, until

NOTES_SERVER = Path(__file__).with_name("notes_server.py")

WriteConfig = Callable[..., Path]


@pytest.fixture(autouse=True)
def _private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test keeps its servers' tool lists in a cache folder of its own."""
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("TOOLWIRE_CACHE_DIR", str(folder))
    return folder


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def stdio_server(*extra: str, **settings: Any) -> dict[str, Any]:
    """The settings of a notes server run over stdio."""
    return {"command": sys.executable, "args": [str(NOTES_SERVER), *extra], **settings}


@pytest.fixture
def write_config(tmp_path: Path) -> WriteConfig:
    """Write a toolwire.toml enabling ``mcp`` (and ``plugins``) with the given servers."""

    def write(
        servers: Mapping[str, Mapping[str, Any]],
        *,
        plugins: tuple[str, ...] = ("mcp",),
        extra: str = "",
    ) -> Path:
        lines = ["[plugins]", f"enable = {_toml_value(list(plugins))}", ""]
        for name, settings in servers.items():
            key = name if name.replace("_", "").replace("-", "").isalnum() else json.dumps(name)
            lines.append(f"[tools.mcp.servers.{key}]")
            lines.extend(f"{key} = {_toml_value(value)}" for key, value in settings.items())
            lines.append("")
        lines.append(f'[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n')
        path = tmp_path / "toolwire.toml"
        path.write_text("\n".join(lines) + extra, encoding="utf-8")
        return path

    return write


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[Any]) -> None:
    def listening() -> bool:
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", port)) == 0

    until(listening, process, what=f"listener on 127.0.0.1:{port}")


@contextlib.contextmanager
def _http_process(argv: list[str], port: int) -> Iterator[str]:
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


@pytest.fixture
def http_notes_server() -> Iterator[str]:
    """A notes server on streamable HTTP at 127.0.0.1; yields its URL."""
    port = free_port()
    with _http_process([sys.executable, str(NOTES_SERVER), "http", str(port)], port) as url:
        yield url


@pytest.fixture
def oauth_server() -> Iterator[str]:
    """An MCP server that is its own OAuth authorization server, at 127.0.0.1; its URL."""
    port = free_port()
    script = Path(__file__).with_name("oauth_server.py")
    with _http_process([sys.executable, str(script), str(port)], port) as url:
        yield url


@pytest.fixture
def toolwire_http_server() -> Callable[[Path], contextlib.AbstractContextManager[str]]:
    """``toolwire_http_server(config)``: ``toolwire mcp serve --http`` on a free loopback port,
    as a context manager yielding the URL."""

    def start(config: Path) -> contextlib.AbstractContextManager[str]:
        port = free_port()
        argv = [sys.executable, "-m", "toolwire", "--config", str(config), "mcp", "serve"]
        return _http_process([*argv, "--http", f"127.0.0.1:{port}"], port)

    return start


def pid_alive(pid: int) -> bool:
    """True while a process with this PID exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return True


def wait_gone(pids: list[int], timeout: float = HANG) -> list[int]:
    """The PIDs still alive after ``timeout`` seconds (all gone: as soon as they are)."""
    deadline = time.monotonic() + timeout
    alive = [p for p in pids if pid_alive(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if pid_alive(p)]
    return alive


@pytest.fixture
def notes_stdio() -> Callable[..., dict[str, Any]]:
    """``notes_stdio(*args, **settings)``: the settings of a notes server over stdio."""
    return stdio_server


def run_toolwire(
    config: Path, *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``toolwire --config CONFIG ARGS…`` in a child process, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "toolwire", "--config", str(config), *args],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def toolwire_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """``toolwire_cli(config, *args, cwd=None, env=None)``: the CLI in a child process."""
    return run_toolwire


async def run_json(config: Path, prompt: str) -> dict[str, Any]:
    """``toolwire run --json PROMPT`` in a child process (the fake provider's key set)."""
    from cli_run import toolwire_run

    return await toolwire_run(config, prompt)


@pytest.fixture
def toolwire_run() -> Callable[[Path, str], Any]:
    """``await toolwire_run(config, prompt)``: the JSON of a whole ``toolwire run``."""
    return run_json


@pytest.fixture
def port() -> int:
    """A free TCP port on 127.0.0.1."""
    return free_port()


@pytest.fixture
def processes_gone() -> Callable[..., list[int]]:
    """``processes_gone(pids, timeout)``: the PIDs still alive after waiting."""
    return wait_gone
