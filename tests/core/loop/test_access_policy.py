"""Access policy: the roots a path argument may lie in, and unattended runs."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Annotated, Any

import pytest
from loop_support import assert_no_orphans, events_of, make_host, plugin, result_texts, run_script

import toolwire
from toolwire import ToolResult
from toolwire.config import PolicyConfig, load_config
from toolwire.testing import tool_call
from toolwire.tools import ToolDefinitionError


@toolwire.tool(path_arguments=["path"], side_effects=["reads_files", "read_only"])
def read_file(path: Annotated[str, "File to read."]) -> str:
    """Read a text file."""
    return Path(path).read_text(encoding="utf-8")


@toolwire.tool(path_arguments=["paths"], side_effects=["read_only"])
def sizes(paths: Annotated[list[str], "Files."]) -> str:
    """Sizes of files."""
    return ",".join(str(Path(p).stat().st_size) for p in paths)


@toolwire.middleware
async def passthrough(call: Any, context: Any, call_next: Any) -> ToolResult:
    result: ToolResult = await call_next()
    return result


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """A workspace with a file and a symlink out of it, a trusted root, and a secret outside."""
    work = tmp_path / "work"
    trusted = tmp_path / "shared"
    outside = tmp_path / "outside"
    for folder in (work, trusted, outside):
        folder.mkdir()
    (work / "notes.txt").write_text("notes", encoding="utf-8")
    (trusted / "ref.txt").write_text("reference", encoding="utf-8")
    (outside / "secret.txt").write_text("secret", encoding="utf-8")
    (work / "escape").symlink_to(outside)
    return {"work": work, "trusted": trusted, "outside": outside}


def _policy(tree: dict[str, Path], **more: Any) -> PolicyConfig:
    return PolicyConfig(workspace=str(tree["work"]), trusted_roots=(str(tree["trusted"]),), **more)


HOOK_PATHS = pytest.mark.parametrize("middleware", [False, True], ids=["inline", "hook"])


@HOOK_PATHS
async def test_paths_inside_the_roots_run(
    tmp_path: Path, tree: dict[str, Path], middleware: bool
) -> None:
    plugins = [plugin("mw", passthrough=passthrough)] if middleware else []
    host = make_host(tmp_path, [read_file], policy=_policy(tree), plugins=plugins)
    assert (host.pipeline.direct_execution is None) is middleware
    run = await run_script(
        host,
        [
            [
                tool_call("read_file", {"path": str(tree["work"] / "notes.txt")}),
                tool_call("read_file", {"path": str(tree["trusted"] / "ref.txt")}),
            ],
            "done",
        ],
    )
    assert result_texts(run) == ["notes", "reference"]


@HOOK_PATHS
@pytest.mark.parametrize(
    ("argument", "why"),
    [
        ("{outside}/secret.txt", "plain"),
        ("{work}/../outside/secret.txt", "dot-dot"),
        ("{work}/escape/secret.txt", "symlink"),
        ("/etc/passwd", "absolute"),
    ],
)
async def test_paths_outside_the_roots_are_refused_before_the_tool_runs(
    tmp_path: Path, tree: dict[str, Path], middleware: bool, argument: str, why: str
) -> None:
    ran: list[str] = []

    @toolwire.tool(path_arguments=["path"])
    def touch(path: Annotated[str, "File."]) -> str:
        """Touch a file."""
        ran.append(path)
        return "touched"

    plugins = [plugin("mw", passthrough=passthrough)] if middleware else []
    host = make_host(tmp_path, [touch], policy=_policy(tree), plugins=plugins)
    path = argument.format(outside=tree["outside"], work=tree["work"])
    run = await run_script(host, [tool_call("touch", {"path": path}), "done"])
    assert ran == []
    [blocked] = events_of(run, "tool_blocked")
    assert blocked.name == "touch"
    text = result_texts(run)[0]
    assert "blocked by policy" in text
    assert f"argument 'path' = {path!r}" in text
    assert str(tree["work"].resolve()) in text
    assert str(tree["trusted"].resolve()) in text
    assert_no_orphans(run)


async def test_every_path_of_a_list_argument_is_checked(
    tmp_path: Path, tree: dict[str, Path]
) -> None:
    host = make_host(tmp_path, [sizes], policy=_policy(tree))
    inside = str(tree["work"] / "notes.txt")
    outside = str(tree["outside"] / "secret.txt")
    run = await run_script(
        host,
        [
            [
                tool_call("sizes", {"paths": [inside]}),
                tool_call("sizes", {"paths": [inside, outside]}),
            ],
            "done",
        ],
    )
    texts = result_texts(run)
    assert texts[0] == "5"
    assert f"argument 'paths' = {outside!r}" in texts[1]


async def test_relative_paths_resolve_from_the_current_directory(
    tmp_path: Path, tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree["work"])
    host = make_host(tmp_path, [read_file], policy=PolicyConfig())  # workspace: the cwd
    run = await run_script(
        host,
        [
            [
                tool_call("read_file", {"path": "notes.txt"}),
                tool_call("read_file", {"path": "../outside/secret.txt"}),
            ],
            "done",
        ],
    )
    texts = result_texts(run)
    assert texts[0] == "notes"
    assert "outside the allowed roots" in texts[1]


def test_a_relative_workspace_is_taken_from_its_config_file(tmp_path: Path) -> None:
    from toolwire._defaults.policy import allowed_roots

    (tmp_path / "proj").mkdir()
    file = tmp_path / "proj" / "toolwire.toml"
    file.write_text(
        '[policy]\nworkspace = "data"\ntrusted_roots = ["/srv/../opt"]\n', encoding="utf-8"
    )
    roots = allowed_roots(load_config(file))
    assert roots == (Path(os.path.realpath(tmp_path / "proj" / "data")), Path("/opt").resolve())


def test_path_arguments_must_name_arguments_of_the_tool() -> None:
    with pytest.raises(ToolDefinitionError, match="path_arguments names where, which the tool"):

        @toolwire.tool(path_arguments=["where"])
        def bad(path: str) -> str:
            """Bad."""
            return path


def test_bad_roots_in_the_config_are_explained(tmp_path: Path) -> None:
    from toolwire.config import ConfigError

    file = tmp_path / "toolwire.toml"
    file.write_text('[policy]\ntrusted_roots = [""]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\$\.policy\.trusted_roots\[0\] = '': expected a dir"):
        load_config(file)


@toolwire.tool(side_effects=["read_only"])
def look() -> str:
    """Look (read only: safe unattended by default)."""
    return "looked"


@toolwire.tool(side_effects=["writes_files"], background_safe=True)
def tidy() -> str:
    """Tidy (writes, but declared safe unattended)."""
    return "tidied"


@toolwire.tool(side_effects=["network"])
def post() -> str:
    """Post (not background safe)."""
    return "posted"


@toolwire.tool(side_effects=["read_only"], background_safe=False)
def peek() -> str:
    """Peek (read only, but declared unsafe unattended)."""
    return "peeked"


@HOOK_PATHS
async def test_unattended_runs_refuse_tools_not_background_safe(
    tmp_path: Path, middleware: bool
) -> None:
    plugins = [plugin("mw", passthrough=passthrough)] if middleware else []
    host = make_host(
        tmp_path,
        [look, tidy, post, peek],
        policy=PolicyConfig(unattended=True),
        plugins=plugins,
    )
    run = await run_script(host, [[tool_call(n) for n in ("look", "tidy", "post", "peek")], "done"])
    texts = result_texts(run)
    assert texts[:2] == ["looked", "tidied"]
    for name, text in zip(("post", "peek"), texts[2:], strict=True):
        assert text.startswith(f"Tool {name} is blocked by policy: this run is unattended")
    assert_no_orphans(run)


async def test_attended_runs_run_every_tool(tmp_path: Path) -> None:
    host = make_host(tmp_path, [post, peek])
    run = await run_script(host, [[tool_call("post"), tool_call("peek")], "done"])
    assert result_texts(run) == ["posted", "peeked"]


def test_batch_unattended_sets_the_policy() -> None:
    from toolwire.cli._batch import add_batch_parser, batch_config
    from toolwire.config import Config

    parser = argparse.ArgumentParser()
    add_batch_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["batch", "in.jsonl", "--out", "out.jsonl", "--unattended"])
    assert batch_config(Config(), args).policy.unattended is True
    args = parser.parse_args(["batch", "in.jsonl", "--out", "out.jsonl"])
    assert batch_config(Config(), args).policy.unattended is False


def test_doctor_flags_a_file_tool_whose_path_is_not_declared() -> None:
    from toolwire.tools import lint_tool

    @toolwire.tool(side_effects=["writes_files"])
    def save(target_path: Annotated[str, "Where."], text: Annotated[str, "What."]) -> str:
        """Save text."""
        return text

    [finding] = [f for f in lint_tool(save) if f.code == "undeclared-path-argument"]
    assert finding.parameter == "target_path"
    declared = toolwire.tool(side_effects=["writes_files"], path_arguments=["target_path"])(
        save.__wrapped__
    )
    assert not [f for f in lint_tool(declared) if f.code == "undeclared-path-argument"]
    assert not [f for f in lint_tool(read_file) if f.code == "undeclared-path-argument"]
