"""Discovery, enabling and isolation of plugins installed for real into a fresh environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration


def _write_config(path: Path, enable: list[str]) -> Path:
    names = ", ".join(f'"{n}"' for n in enable)
    path.write_text(f"[plugins]\nenable = [{names}]\n", encoding="utf-8")
    return path


def _by_name(rows: Any) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in rows}


@pytest.fixture
def workdir(tmp_path: Path, sample_env: Any) -> Path:
    sample_env.import_log.unlink(missing_ok=True)
    return tmp_path


def test_installed_plugins_are_discovered_without_being_imported(sample_env: Any, workdir: Path):
    plugins = _by_name(sample_env.toolwire_json("plugins", cwd=workdir))

    assert set(plugins) == {"echo", "broken", "raiser", "clash"}
    echo = plugins["echo"]
    assert echo["distribution"] == "toolwire-sample-echo"
    assert echo["version"] == "1.0.0"
    assert echo["enabled"] is False
    assert echo["loaded"] is False
    assert sample_env.imported() == []


def test_help_imports_no_plugin(sample_env: Any, workdir: Path):
    _write_config(workdir / "toolwire.toml", ["echo"])
    proc = sample_env.toolwire("--help", cwd=workdir, check=True)
    assert "plugins" in proc.stdout
    assert sample_env.imported() == []


def test_enabled_by_config(sample_env: Any, workdir: Path):
    _write_config(workdir / "toolwire.toml", ["echo"])

    plugins = _by_name(sample_env.toolwire_json("plugins", cwd=workdir))
    tools = _by_name(sample_env.toolwire_json("tools", "list", cwd=workdir))

    assert plugins["echo"]["enabled"]
    assert plugins["echo"]["loaded"]
    assert plugins["echo"]["hooks"] == ["toolwire_tools"]
    assert plugins["clash"]["enabled"] is False
    assert set(tools) == {"echo", "shout"}
    assert tools["echo"]["plugin"] == "echo"
    assert tools["echo"]["parameters"]["properties"]["text"]["description"] == (
        "The text to give back."
    )
    assert "toolwire_sample_echo" in sample_env.imported()
    assert "toolwire_sample_broken" not in sample_env.imported()


def test_enabled_by_environment_overrides_config(sample_env: Any, workdir: Path):
    _write_config(workdir / "toolwire.toml", ["echo"])
    env = {"TOOLWIRE_PLUGINS": "clash"}

    tools = _by_name(sample_env.toolwire_json("tools", "list", cwd=workdir, env=env))

    assert set(tools) == {"echo", "whisper"}
    assert tools["echo"]["plugin"] == "clash"
    assert sample_env.imported() == []  # the echo sample was not imported


def test_disabled_again(sample_env: Any, workdir: Path):
    _write_config(workdir / "toolwire.toml", ["echo"])
    sample_env.toolwire_json("tools", "list", cwd=workdir)
    sample_env.import_log.unlink()
    _write_config(workdir / "toolwire.toml", [])

    plugins = _by_name(sample_env.toolwire_json("plugins", cwd=workdir))
    tools = sample_env.toolwire_json("tools", "list", cwd=workdir)

    assert plugins["echo"]["enabled"] is False
    assert tools == []
    assert sample_env.imported() == []


def test_failing_plugins_are_isolated_and_reported(sample_env: Any, workdir: Path):
    _write_config(workdir / "toolwire.toml", ["broken", "raiser", "echo"])

    proc = sample_env.toolwire("plugins", cwd=workdir)
    plugins = _by_name(sample_env.toolwire_json("plugins", cwd=workdir))
    tools_proc = sample_env.toolwire("tools", "list", cwd=workdir)
    tools = _by_name(sample_env.toolwire_json("tools", "list", cwd=workdir))

    assert proc.returncode == 0
    assert "sample plugin cannot find its native library" in proc.stdout
    broken = plugins["broken"]
    assert broken["loaded"] is False
    assert "ImportError" in broken["error"]
    assert broken["distribution"] == "toolwire-sample-broken"
    assert tools_proc.returncode == 0
    assert "raiser" in tools_proc.stderr
    assert "sample plugin cannot build its tools" in tools_proc.stderr
    assert "toolwire-sample-raiser 1.0.0" in tools_proc.stderr
    assert set(tools) == {"echo", "shout"}


def test_tool_name_clash_names_both_plugins(sample_env: Any, workdir: Path):
    _write_config(workdir / "toolwire.toml", ["echo", "clash"])

    proc = sample_env.toolwire("tools", "list", cwd=workdir)
    tools = _by_name(sample_env.toolwire_json("tools", "list", cwd=workdir))

    assert proc.returncode == 0
    assert "'echo' is registered by two plugins" in proc.stderr
    assert "toolwire-sample-echo" in proc.stderr
    assert "toolwire-sample-clash" in proc.stderr
    assert tools["echo"]["plugin"] == "echo"
    assert "whisper" in tools


def test_enabling_a_plugin_that_is_not_installed(sample_env: Any, workdir: Path):
    _write_config(workdir / "toolwire.toml", ["echo", "ech0"])

    proc = sample_env.toolwire("plugins", cwd=workdir)

    assert proc.returncode == 2
    assert "$.plugins.enable[1] = 'ech0'" in proc.stderr
    assert "installed plugins: broken, clash, echo, raiser" in proc.stderr


def test_tools_call_runs_the_installed_tool(sample_env: Any, workdir: Path):
    _write_config(workdir / "toolwire.toml", ["echo"])

    ok = sample_env.toolwire("tools", "call", "shout", "--args", '{"text": "hé"}', cwd=workdir)
    bad = sample_env.toolwire(
        "tools", "call", "shout", "--args", '{"text": 5}', "--json", cwd=workdir
    )

    assert ok.returncode == 0
    assert ok.stdout.strip() == "HÉ"
    assert bad.returncode == 1
    assert '"status": "error"' in bad.stdout
