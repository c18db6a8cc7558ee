"""Plugin CLI commands: ``toolwire_cli_commands`` and ``toolwire.CliCommand``."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

import toolwire
from toolwire import CliCommand, Config, Host
from toolwire.cli._plugin_commands import _run, plugin_commands


def _hello(args: argparse.Namespace, host: Host) -> int:
    print(f"hello {args.who}")
    return 3


async def _async_hello(args: argparse.Namespace, host: Host) -> int:
    print("async hello")
    return 0


class Greeter:
    @toolwire.hookimpl
    def toolwire_cli_commands(self) -> list[CliCommand]:
        return [
            CliCommand(
                name="hello",
                help="greet",
                run=_hello,
                configure=lambda parser: parser.add_argument("who"),
            ),
            CliCommand(name="ahello", help="greet asynchronously", run=_async_hello),
        ]


class Clash:
    @toolwire.hookimpl
    def toolwire_cli_commands(self) -> list[object]:
        return [CliCommand(name="hello", help="again", run=_hello), "not a command"]


def test_commands_are_collected_and_clashes_reported(capsys: pytest.CaptureFixture[str]):
    host = Host.load(Config(), plugins=[Greeter(), Clash()])
    commands = plugin_commands(host)
    assert sorted(commands) == ["ahello", "hello"]
    assert commands["hello"].help == "greet"
    err = capsys.readouterr().err
    assert "'hello' is already added" in err
    assert "'not a command', which is not a toolwire.CliCommand" in err


def test_sync_and_async_commands_run_and_close_the_host(capsys: pytest.CaptureFixture[str]):
    closed: list[str] = []

    async def note() -> None:
        closed.append("closed")

    host = Host.load(Config(), plugins=[Greeter()])
    host.on_close(note)
    commands = plugin_commands(host)
    parser = argparse.ArgumentParser()
    assert commands["hello"].configure is not None
    commands["hello"].configure(parser)
    assert _run(commands["hello"], parser.parse_args(["world"]), host) == 3
    assert capsys.readouterr().out == "hello world\n"
    assert closed == ["closed"]
    host = Host.load(Config(), plugins=[Greeter()])
    assert _run(plugin_commands(host)["ahello"], argparse.Namespace(), host) == 0
    assert capsys.readouterr().out == "async hello\n"


def test_a_command_name_must_be_a_word():
    with pytest.raises(ValueError, match="'two words'"):
        CliCommand(name="two words", help="", run=_hello)


def test_builtin_commands_never_load_plugins(monkeypatch: pytest.MonkeyPatch):
    from toolwire.cli import _commands as _cli

    def refuse(*args: object, **kwargs: object) -> Host:
        raise AssertionError("a built-in command loaded the host for plugin commands")

    monkeypatch.setattr(Host, "load", classmethod(lambda cls, *a, **k: refuse()))
    from toolwire.cli._plugin_commands import run_plugin_command

    parser = _cli._parser()
    assert run_plugin_command(parser, ["plugins"]) is None
    assert run_plugin_command(parser, ["--config", "x.toml", "tools", "list"]) is None
    assert run_plugin_command(parser, ["--help"]) is None


def _site_with_a_command_plugin(site: Path) -> Path:
    """A distribution whose plugin ``greeter`` declares the command ``greet``; importing its
    module fails loudly, so a test sees whether anything imported it."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "greeter_plugin.py").write_text(
        'raise RuntimeError("the greeter plugin was imported")\n', encoding="utf-8"
    )
    info = site / "toolwire_greeter-0.3.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toolwire-greeter\nVersion: 0.3\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[toolwire.plugins]\ngreeter = greeter_plugin\n\n"
        "[toolwire.commands]\ngreet = greeter_plugin\n",
        encoding="utf-8",
    )
    return site


def _toolwire_without_plugins(
    tmp_path: Path, args: list[str], env: dict[str, str]
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """``toolwire ARGS`` with a config that enables no plugin, ``env`` added to the environment."""
    config = tmp_path / "toolwire.toml"
    config.write_text("[plugins]\nenable = []\n", encoding="utf-8")
    base = {k: v for k, v in os.environ.items() if k != "TOOLWIRE_PLUGINS"}
    done = subprocess.run(
        [sys.executable, "-m", "toolwire", "--config", str(config), *args],
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=120,
    )
    return config, done


@pytest.mark.parametrize("enabled_by", ["file", "environment"])
def test_a_command_of_a_plugin_not_enabled_names_the_plugin_and_how_to_enable_it(
    tmp_path: Path, enabled_by: str
) -> None:
    site = _site_with_a_command_plugin(tmp_path / "site")
    env = {"PYTHONPATH": str(site), "TOOLWIRE_CACHE_DIR": ""}
    if enabled_by == "environment":
        env["TOOLWIRE_PLUGINS"] = ""
    config, done = _toolwire_without_plugins(tmp_path, ["greet", "--loudly"], env)
    assert done.returncode == 2
    assert "invalid choice" not in done.stderr
    assert "was imported" not in done.stderr
    assert (
        "toolwire: the command 'greet' comes from the plugin greeter (toolwire-greeter 0.3), "
        "which is installed but not enabled; to enable it, "
    ) in done.stderr
    if enabled_by == "file":
        assert f'add "greeter" to [plugins] enable in {config}' in done.stderr
    else:
        assert "add greeter to $TOOLWIRE_PLUGINS" in done.stderr


def test_toolwire_mcp_serve_without_the_plugin_enabled_says_how(tmp_path: Path) -> None:
    pytest.importorskip("toolwire_mcp")
    _config, done = _toolwire_without_plugins(tmp_path, ["mcp", "serve"], {})
    assert done.returncode == 2
    assert "the command 'mcp' comes from the plugin mcp (toolwire-mcp" in done.stderr
