"""Servers start only when needed: listing tools reads each server's cached tool list (no
process, no MCP SDK import); a call starts only its own server; the cache follows the server's
command line, its version and its list changes. Paths in a server's entry are the config
file's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from toolwire import Host, ToolCallingLoop

RAW_SERVER = Path(__file__).with_name("raw_server.py")


def _cache_files() -> list[Path]:
    from toolwire_mcp import _cache

    return list(Path(_cache.cache_dir() or "").glob("*.json"))


def _starts(path: Path) -> int:
    return len(path.read_text().split()) if path.exists() else 0


def _raw(starts: Path, **settings: Any) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": [str(RAW_SERVER)],
        "env": {"RAW_STARTS": str(starts)},
        **settings,
    }


def test_tools_list_and_show_start_no_server_once_listed(
    toolwire_cli, write_config, tmp_path: Path
):
    starts = tmp_path / "starts"
    config = write_config({"a": _raw(starts), "b": _raw(starts)})
    first = toolwire_cli(config, "tools", "list", "--json")
    assert first.returncode == 0, first.stderr
    assert _starts(starts) == 2  # nothing cached yet: both listed once
    again = toolwire_cli(config, "tools", "list", "--json")
    shown = toolwire_cli(config, "tools", "show", "a_echo")
    assert again.returncode == 0, again.stderr
    assert shown.returncode == 0, shown.stderr
    assert _starts(starts) == 2
    assert {t["name"] for t in json.loads(again.stdout)} >= {"a_echo", "b_echo"}
    called = toolwire_cli(config, "tools", "call", "a_echo", "--args", "{}")
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "echo ok"
    assert _starts(starts) == 3  # only the called tool's server


def test_listing_does_not_import_the_sdk(toolwire_cli, write_config, tmp_path: Path):
    config = write_config({"a": _raw(tmp_path / "starts")})
    assert toolwire_cli(config, "tools", "list").returncode == 0
    probe = (
        f"import sys; from toolwire.cli import main; main(['--config', {str(config)!r}, "
        "'tools', 'list']); print('SDK' if 'mcp' in sys.modules else 'no SDK', file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.stderr.strip().endswith("no SDK"), done.stderr


async def test_a_new_command_line_or_version_is_listed_anew(write_config, tmp_path: Path):
    starts = tmp_path / "starts"
    config = write_config({"a": _raw(starts)})
    async with Host.load(config) as host:
        assert "a_echo" in host.tools
    assert _starts(starts) == 1
    changed = write_config({"a": _raw(starts, args=[str(RAW_SERVER), "--verbose"])})
    async with Host.load(changed) as host:
        assert "a_echo" in host.tools
    assert _starts(starts) == 2  # another command line: another cache entry
    # A server upgraded in place reports another version when it starts for a call: the
    # cache is written again from what it lists.
    versioned = write_config({"a": _raw(starts, args=[str(RAW_SERVER), "--verbose"])})
    async with Host.load(versioned) as host:
        await ToolCallingLoop(host).call("a_echo", {})

    cached = [json.loads(p.read_text()) for p in _cache_files()]
    assert sorted(c["version"] for c in cached) == ["1.0", "1.0"]


async def test_list_changed_rewrites_the_cache(write_config, notes_stdio):

    config = write_config({"notes": notes_stdio()})
    async with Host.load(config) as host:
        assert "notes_secret_note" not in host.tools
        await ToolCallingLoop(host).call("notes_unlock", {})
    async with Host.load(config) as host:
        # The next host reads the list the server announced, without starting it.
        assert "notes_secret_note" in host.tools
        from toolwire_mcp._plugin import client_for

        client = client_for(host.plugin_settings("mcp"))
        assert client is not None
        assert client.status("notes") == "not started"
    assert _cache_files()


def test_refresh_on_request(toolwire_cli, write_config, tmp_path: Path):
    starts = tmp_path / "starts"
    config = write_config({"a": _raw(starts)})
    assert toolwire_cli(config, "tools", "list").returncode == 0
    refreshed = toolwire_cli(config, "mcp", "servers", "--refresh", "--json")
    assert refreshed.returncode == 0, refreshed.stderr
    (row,) = json.loads(refreshed.stdout)
    assert row["status"] == "running"
    assert _starts(starts) == 2


def test_paths_are_taken_from_the_config_file_s_folder(toolwire_cli, tmp_path: Path):
    """command, args and cwd of a server entry: relative to the config file, not to where
    toolwire runs (the server runs in the config's folder unless cwd says otherwise)."""
    project = tmp_path / "project"
    (project / "bin").mkdir(parents=True)
    (project / "data").mkdir()
    script = project / "bin" / "server.py"
    script.write_text(RAW_SERVER.read_text(), encoding="utf-8")
    launcher = project / "bin" / "serve"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} bin/server.py "$@"\n')
    launcher.chmod(0o755)
    config = project / "toolwire.toml"
    config.write_text(
        '[plugins]\nenable = ["mcp"]\n\n'
        "[tools.mcp.servers.rel]\n"
        'command = "./bin/serve"\n'
        'env = { RAW_STARTS = "data/starts" }\n\n'
        "[tools.mcp.servers.sub]\n"
        'command = "../bin/serve"\n'
        'cwd = "data"\n'
        "args = []\n"
        'env = { RAW_STARTS = "starts-from-sub" }\n',
        encoding="utf-8",
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = toolwire_cli(config, "mcp", "servers", "--json", cwd=elsewhere)
    assert done.returncode == 1, done.stderr  # sub: its cwd has no bin/server.py
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["rel"]["status"] == "running", rows["rel"]
    assert (project / "data" / "starts").exists()
    assert rows["sub"]["status"] == "failed"
    assert str(project / "data") not in str(elsewhere)
    assert not list(elsewhere.iterdir())  # nothing made where toolwire ran


async def test_a_started_server_s_listing_replaces_the_kept_one(write_config, tmp_path: Path):
    """A server upgraded in place (same command line) lists other tools when it starts for a
    call: the kept list and the host's tools follow."""
    config = write_config({"a": _raw(tmp_path / "starts")})
    async with Host.load(config) as host:
        assert "a_big" in host.tools
    (kept,) = _cache_files()
    data = json.loads(kept.read_text())
    data["tools"] = [t for t in data["tools"] if t["name"] == "echo"]
    data["version"] = "0.9"
    kept.write_text(json.dumps(data))
    async with Host.load(config) as host:
        assert sorted(host.tools) == ["a_echo"]  # from the kept list, no server started
        assert (await ToolCallingLoop(host).call("a_echo", {})).is_ok
        assert "a_big" in host.tools
    assert json.loads(kept.read_text())["version"] == "1.0"
