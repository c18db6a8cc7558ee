"""The CLI in-process (output shapes, exit codes) and in a subprocess (what it imports)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolwire.cli import main


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLWIRE_CONFIG", raising=False)
    monkeypatch.delenv("TOOLWIRE_PLUGINS", raising=False)
    return tmp_path


def _imported_after(args: list[str], cwd: Path, plugins: str | None = None) -> set[str]:
    code = (
        "import sys, io, contextlib\n"
        "from toolwire.cli import main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        "    try:\n"
        f"        main({args!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    if plugins is not None:
        env["TOOLWIRE_PLUGINS"] = plugins
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, env=env, check=True
    )
    return set(out.stdout.split())


@pytest.mark.parametrize("args", [["--help"], ["plugins"], ["tools", "list"]])
def test_listing_commands_import_no_network_stack(workdir: Path, args: list[str]):
    modules = _imported_after(args, workdir)
    assert "aiohttp" not in modules
    assert "selectolax" not in modules
    assert "fastjsonschema" not in modules
    assert "toolwire.loop" not in modules
    assert "toolwire_openai" not in modules


@pytest.mark.parametrize("args", [["plugins"], ["tools", "list"]])
def test_enabled_real_plugins_load_no_adapter_events_or_asyncio(workdir: Path, args: list[str]):
    # The configuration users run: the adapters load when a provider is used, not on enabling.
    modules = _imported_after(args, workdir, plugins="openai,anthropic,web,basics")
    assert {"toolwire_openai._plugin", "toolwire_anthropic._plugin", "toolwire_web._plugin"} <= (
        modules
    )
    assert "toolwire_openai._chat" not in modules
    assert "toolwire_openai._responses" not in modules
    assert "toolwire_anthropic._messages" not in modules
    assert "toolwire.adapters" not in modules
    assert "toolwire.events" not in modules
    assert "asyncio" not in modules
    assert "aiohttp" not in modules


def test_listing_plugins_builds_no_tool_of_the_enabled_plugins(workdir: Path):
    modules = _imported_after(["plugins"], workdir, plugins="web,basics")
    assert {"toolwire_web._plugin", "toolwire_basics._plugin"} <= modules
    assert "toolwire_web._read" not in modules
    assert "toolwire_web._search" not in modules
    assert "toolwire_basics._tools" not in modules
    assert "toolwire_basics._calculator" not in modules
    assert "toolwire.tools" not in modules  # the tool model is loaded when tools are listed


def test_version(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("toolwire ")


def test_config_error_exits_2_and_names_the_key(workdir: Path, capsys: pytest.CaptureFixture[str]):
    (workdir / "toolwire.toml").write_text("[loop]\nmax_rounds = 'many'\n")
    assert main(["plugins"]) == 2
    err = capsys.readouterr().err
    assert "$.loop.max_rounds = 'many'" in err


def test_missing_config_file_given_with_option(workdir: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["--config", "missing.toml", "tools", "list"]) == 2
    assert "'missing.toml' (given with --config) does not exist" in capsys.readouterr().err


def test_init_writes_a_config_that_loads(workdir: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["init"]) == 0
    text = (workdir / "toolwire.toml").read_text()
    assert "[plugins]" in text
    assert "enable = [" in text
    (workdir / "toolwire.toml").write_text(text + "# mine\n")
    assert main(["init"]) == 0  # an existing file is left alone
    assert (workdir / "toolwire.toml").read_text().endswith("# mine\n")
    assert main(["plugins", "--json"]) == 0
    out = capsys.readouterr().out
    assert isinstance(json.loads(out[out.index("[") :]), list)


NEEDS_A_KEY = """
import attrs
import toolwire


@attrs.frozen
class Settings:
    token_env: str


@toolwire.hookimpl
def toolwire_settings_class(plugin_name):
    return Settings if plugin_name == "needs-a-key" else None
"""

NEEDS_A_FOLDER = """
import toolwire


@toolwire.hookimpl
def toolwire_tools(settings):
    if "folder" not in settings:
        raise LookupError("the notes toolbox needs folder: set it in [tools.needs-a-folder]")
    return []
"""

READY = """
import toolwire


@toolwire.tool
def shout(text: str) -> str:
    \"\"\"Repeat a text in capitals.\"\"\"
    return text.upper()


@toolwire.hookimpl
def toolwire_tools(settings):
    return [shout]
"""


def test_init_leaves_out_the_plugins_that_need_settings_saying_what_they_need(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    import toolwire.host._entrypoints as entrypoints
    from toolwire.host._entrypoints import PluginEntryPoint

    plugins = {"needs-a-key": NEEDS_A_KEY, "needs-a-folder": NEEDS_A_FOLDER, "ready": READY}
    for name, source in plugins.items():
        (workdir / f"{name.replace('-', '_')}_plugin.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(workdir))
    monkeypatch.setenv("TOOLWIRE_CACHE_DIR", "")
    monkeypatch.setattr(
        entrypoints,
        "_from_metadata",
        lambda group: [
            PluginEntryPoint(name=name, value=f"{name.replace('-', '_')}_plugin")
            for name in plugins
        ],
    )
    assert main(["init"]) == 0
    assert capsys.readouterr().out == (
        "wrote toolwire.toml (enabled plugins: ready; left out until configured: "
        "needs-a-folder, needs-a-key)\n"
    )
    text = (workdir / "toolwire.toml").read_text()
    assert 'enable = ["ready"]\n' in text
    comment = text[text.index("# Installed, left out") : text.index("[provider]")]
    assert all(line.startswith("#") for line in comment.splitlines() if line)
    assert '"needs-a-folder": toolwire_tools: LookupError: the notes toolbox needs folder' in (
        comment.replace("\n#   ", " ")
    )
    assert '"needs-a-key":' in comment
    assert "$.tools.needs-a-key.token_env" in comment
    # The config written loads with no plugin failing.
    assert main(["plugins", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(p["name"], p["enabled"], p["error"]) for p in listed] == [
        ("needs-a-folder", False, None),
        ("needs-a-key", False, None),
        ("ready", True, None),
    ]


def test_tools_list_json_is_empty_without_plugins(
    workdir: Path, capsys: pytest.CaptureFixture[str]
):
    assert main(["tools", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_unknown_tool(workdir: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["tools", "call", "nothing"]) == 1
    assert "no tool named 'nothing'" in capsys.readouterr().err


def _subcommands(parser: argparse.ArgumentParser) -> list[str]:
    return [
        name
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    ]


def _subcommands_parser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    (found,) = [
        action.choices[name]
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
    ]
    return found


def test_parser_holds_only_the_named_command() -> None:
    from toolwire.cli._commands import _parser

    every = _subcommands(_parser([]))
    assert every == ["plugins", "tools", "run", "chat", "batch", "config", "doctor", "init"]
    assert _subcommands(_parser(["plugins", "--json"])) == ["plugins"]
    assert _subcommands(_parser(["--config", "x.toml", "tools", "list"])) == ["tools"]
    assert _subcommands(_parser(["--config=x.toml", "doctor"])) == ["doctor"]
    assert _subcommands(_subcommands_parser(_parser(["tools", "show", "calc"]), "tools")) == [
        "show"
    ]
    every_action = _subcommands(_subcommands_parser(_parser(["tools"]), "tools"))
    assert every_action == ["list", "why", "show", "call"]
    for args in (["tools", "bogus"], ["tools", "--json", "list"]):
        assert _subcommands(_subcommands_parser(_parser(args), "tools")) == every_action, args
    for args in (["bogus"], ["-h", "plugins"], ["--conf", "x.toml", "plugins"], ["--config"]):
        assert _subcommands(_parser(args)) == every, args


def test_a_command_parses_and_helps_as_with_every_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from toolwire.cli._commands import _parser

    args = ["tools", "show", "calc", "--wire", "prompted", "--dialect", "xml"]
    assert _parser(args).parse_args(args) == _parser([]).parse_args(args)
    helps = []
    for parser in (_parser(["tools"]), _parser([])):
        with pytest.raises(SystemExit):
            parser.parse_args(["tools", "--help"])
        helps.append(capsys.readouterr().out)
    assert helps[0] == helps[1]
    assert "list" in helps[0]


def test_parsing_a_command_line_imports_no_shutil():
    code = (
        "import sys\n"
        "from toolwire.cli._commands import _parser\n"
        "_parser(['tools', 'list']).parse_args(['tools', 'list'])\n"
        "print('shutil' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("columns", [None, "44", "132", "0", "-5", "wide"])
def test_help_is_as_wide_as_argparse_makes_it(monkeypatch: pytest.MonkeyPatch, columns: str | None):
    from toolwire.cli._commands import _parser

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    parser = _parser([])
    parsers = [parser]
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        parsers.extend(getattr(action, "choices", {}).values())
    assert len(parsers) > 5
    ours = [p.format_help() for p in parsers]
    for p in parsers:
        p.formatter_class = argparse.HelpFormatter
    assert ours == [p.format_help() for p in parsers]
