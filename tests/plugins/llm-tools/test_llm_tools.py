"""toolwire-llm-tools in one process: which packages and tools, toolbox threads, results, the
config's policy, and what a package that misbehaves costs."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from sqlite_files import sqlite_file
from toolwire_llm_tools import _loader

import toolwire
from toolwire.config import config_from_dict
from toolwire.loop import Approve, ToolCallingLoop
from toolwire.testing import ScriptedModel, tool_call

HERE = Path(__file__).parent
SAMPLE = _loader.Package(
    name="llm-tools-sample",
    version="1.0",
    entry_points=(
        importlib.metadata.EntryPoint(name="sample", value="llm_sample_tools", group="llm"),
    ),
)


@pytest.fixture
def sample_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """``llm_sample_tools`` installed as the package ``llm-tools-sample``."""
    monkeypatch.syspath_prepend(str(HERE))
    real = _loader.installed_packages
    monkeypatch.setattr(
        _loader, "installed_packages", lambda: {**real(), "llm-tools-sample": SAMPLE}
    )


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "sales.db"
    with sqlite_file(path) as connection:
        connection.execute("create table sales (region text, total integer)")
        connection.execute("insert into sales values ('north', 42), ('south', 17)")
    return path


def load(tmp_path: Path, settings: Mapping[str, Any], **tables: Any) -> toolwire.Host:
    raw = {
        "plugins": {"enable": ["llm-tools"]},
        "tools": {"llm-tools": dict(settings)},
        "ledger": {"path": str(tmp_path / "ledger.sqlite3")},
        **tables,
    }
    return toolwire.Host.load(config_from_dict(raw))


def failure(host: toolwire.Host) -> str:
    """The plugin's failure report once the host collected its tools."""
    assert host.tools is not None
    info = host.plugin_info("llm-tools")
    assert info is not None
    return info.error or ""


async def run(host: toolwire.Host, script: list[Any], **options: Any) -> toolwire.Run:
    return await ToolCallingLoop(host, adapter=ScriptedModel(script=script)).run("go", **options)


async def test_every_installed_package_with_no_more_config(tmp_path: Path):
    host = load(tmp_path, {})
    assert "simple_eval" in host.tools
    # The SQLite toolbox needs its path: reported, not guessed, and the other tools stay.
    assert not any(name.startswith("SQLite_") for name in host.tools)
    problem = failure(host)
    assert "toolbox SQLite of llm-tools-sqlite 0.1 needs path" in problem
    assert "[tools.llm-tools.toolboxes.SQLite]" in problem
    assert "[tools.llm-tools] packages" in problem
    await host.aclose()


async def test_packages_include_and_exclude_narrow_the_tools(tmp_path: Path, database: Path):
    only = load(tmp_path, {"packages": ["llm-tools-simpleeval"]})
    assert list(only.tools) == ["simple_eval"]
    assert failure(only) == ""
    await only.aclose()
    picked = load(
        tmp_path,
        {
            "include": ["SQLite_query", "simple_eval"],
            "toolboxes": {"SQLite": {"path": str(database)}},
        },
    )
    assert sorted(picked.tools) == ["SQLite_query", "simple_eval"]
    await picked.aclose()
    # A toolbox none of whose tools is wanted is not even made (it would need its path).
    none_of_it = load(tmp_path, {"exclude": ["SQLite_query", "SQLite_schema"]})
    assert failure(none_of_it) == ""
    await none_of_it.aclose()


async def test_names_no_package_has_are_reported(tmp_path: Path):
    host = load(
        tmp_path,
        {
            "packages": ["llm-tools-simpleeval", "llm-tools-nothing"],
            "include": ["simple_eval", "simple_evl"],
            "policy": {"simpl_eval": {"side_effects": ["read_only"]}},
            "toolboxes": {"Sqlite": {"path": "x.db"}},
        },
    )
    assert list(host.tools) == ["simple_eval"]
    problem = failure(host)
    assert "packages names 'llm-tools-nothing', which is not installed" in problem
    assert "include names 'simple_evl', which no chosen package registers" in problem
    assert "policy names 'simpl_eval'" in problem
    assert "toolboxes names 'Sqlite'" in problem
    await host.aclose()


async def test_a_toolbox_that_cannot_be_made_is_reported_without_its_values(tmp_path: Path):
    secret = tmp_path / "missing-dir" / "secret-name.db"
    host = load(tmp_path, {"toolboxes": {"SQLite": {"path": str(secret)}}})
    problem = failure(host)
    assert "toolbox SQLite of llm-tools-sqlite 0.1 could not be made from" in problem
    assert "(path): OperationalError: unable to open database file" in problem
    assert "secret-name" not in problem
    assert "simple_eval" in host.tools
    await host.aclose()


async def test_a_toolbox_runs_every_call_on_its_own_thread(tmp_path: Path, database: Path):
    host = load(
        tmp_path,
        {"toolboxes": {"SQLite": {"path": str(database)}}},
        loop={"concurrency": 4},
    )
    query = "select total + {} as total from sales where region = 'north'"
    turn = [tool_call("SQLite_query", {"sql": query.format(i)}, id=f"q{i}") for i in range(4)]
    turn.append(tool_call("SQLite_schema", {}, id="s"))
    done = await run(host, [turn, "done"])
    results = [call.result for call in done.tool_calls]
    assert [r.status for r in results] == ["ok"] * 5
    assert [r.content for r in results[:4]] == [f'[{{"total": {42 + i}}}]' for i in range(4)]
    assert "CREATE TABLE sales" in (results[4].content or "")
    await host.aclose()


async def test_closing_the_host_ends_the_toolbox_threads(tmp_path: Path, database: Path):
    host = load(tmp_path, {"toolboxes": {"SQLite": {"path": str(database)}}})
    assert "SQLite_query" in host.tools
    threads = [t for t in threading.enumerate() if t.name.startswith("llm-toolbox-SQLite")]
    assert threads
    await host.aclose()
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive()


async def test_error_text_is_an_error_result(tmp_path: Path):
    host = load(tmp_path, {"packages": ["llm-tools-simpleeval"]})
    turn = [
        tool_call("simple_eval", {"expression": "17.5/100*2480"}, id="a"),
        tool_call("simple_eval", {"expression": "1/0"}, id="b"),
    ]
    done = await run(host, [turn, "done"])
    ok, failed = (call.result for call in done.tool_calls)
    assert (ok.status, ok.content) == ("ok", "434.0")
    assert (failed.status, failed.content) == ("error", "Error: division by zero")
    await host.aclose()
    plain = load(tmp_path, {"packages": ["llm-tools-simpleeval"], "error_prefix": ""})
    done = await run(plain, [[tool_call("simple_eval", {"expression": "1/0"})], "done"])
    assert done.tool_calls[0].result.status == "ok"
    await plain.aclose()


async def test_arguments_are_checked_before_the_tool_runs(tmp_path: Path):
    host = load(tmp_path, {"packages": ["llm-tools-simpleeval"]})
    turn = [
        tool_call("simple_eval", {"expresion": "1+1"}, id="a"),
        tool_call("simple_eval", {"expression": 5}, id="b"),
    ]
    done = await run(host, [turn, "done"])
    misspelt, wrong_type = (call.result for call in done.tool_calls)
    assert misspelt.status == "error"
    assert "expresion" in (misspelt.content or "")
    assert "expression: missing" in (misspelt.content or "")
    assert wrong_type.status == "error"
    assert "string" in (wrong_type.content or "")
    await host.aclose()


async def test_policy_comes_from_the_config_and_strict_names_where(tmp_path: Path):
    settings = {
        "packages": ["llm-tools-simpleeval"],
        "policy": {"simple_eval": {"side_effects": ["read_only"], "idempotent": True}},
    }
    declared = load(tmp_path, settings, policy={"strict": True})
    policy = declared.tools["simple_eval"].policy
    assert policy.read_only
    assert policy.idempotent
    done = await run(declared, [[tool_call("simple_eval", {"expression": "2*21"})], "done"])
    assert done.tool_calls[0].result.content == "42"
    await declared.aclose()

    undeclared = load(tmp_path, {"packages": ["llm-tools-simpleeval"]}, policy={"strict": True})
    done = await run(undeclared, [[tool_call("simple_eval", {"expression": "2*21"})], "done"])
    result = done.tool_calls[0].result
    assert result.status == "blocked"
    assert "[policy] strict = true refuses unclassified tools" in (result.content or "")
    assert "Declare them in [tools.llm-tools.policy.simple_eval]" in (result.content or "")
    await undeclared.aclose()


async def test_a_policy_that_does_not_fit_leaves_its_tool_out(tmp_path: Path):
    settings = {
        "packages": ["llm-tools-simpleeval"],
        "policy": {"simple_eval": {"side_effects": ["readonly"]}},
    }
    host = load(tmp_path, settings)
    assert "simple_eval" not in host.tools
    problem = failure(host)
    assert "$.tools.llm-tools.policy.simple_eval" in problem
    assert "read_only" in problem
    await host.aclose()


# -- the shapes of llm's tool API ---------------------------------------------------------------


async def test_what_a_package_registers_becomes_tools(tmp_path: Path, sample_package: None):
    host = load(
        tmp_path, {"packages": ["llm-tools-sample"], "toolboxes": {"Keyed": {"api_key": "sk-2931"}}}
    )
    assert sorted(host.tools) == [
        "Counter_increment",
        "ask_person",
        "chart",
        "echo_all",
        "slow_upper",
        "where_am_i",
        "whoami",
    ]
    # A bad registration, or a toolbox that cannot be made, costs only itself; a toolbox's
    # argument values stay out of the report.
    problem = failure(host)
    assert "llm-tools-sample 1.0 registers the class NotAToolbox" in problem
    assert "(api_key): ValueError: the key [redacted] was refused" in problem
    assert "sk-2931" not in problem
    # llm's reserved parameter is never offered; a fixed signature refuses unknown arguments.
    whoami = host.tools["whoami"].parameters
    assert list(whoami["properties"]) == ["greeting"]
    assert whoami["additionalProperties"] is False
    # An llm.Tool whose implementation takes **kwargs keeps its schema open.
    assert "additionalProperties" not in host.tools["echo_all"].parameters
    assert host.tools["whoami"].description == "Greet, naming the call."
    await host.aclose()


async def test_llm_tool_call_holds_the_call_not_the_models_value(
    tmp_path: Path, sample_package: None
):
    import llm_sample_tools

    host = load(tmp_path, {"packages": ["llm-tools-sample"]})
    done = await run(host, [[tool_call("whoami", {"greeting": "hi"}, id="call-7")], "done"])
    assert done.tool_calls[0].result.content == "hi from call-7"
    seen = llm_sample_tools.SEEN_CALLS[-1]
    assert (seen.name, seen.arguments) == ("whoami", {"greeting": "hi"})
    await host.aclose()


async def test_outputs_attachments_async_tools_and_threads(tmp_path: Path, sample_package: None):
    host = load(
        tmp_path, {"packages": ["llm-tools-sample"], "toolboxes": {"Counter": {"start": 5}}}
    )
    turn = [
        tool_call("chart", {"title": "sales"}, id="c"),
        tool_call("slow_upper", {"text": "quiet"}, id="u"),
        tool_call("Counter_increment", {}, id="i1"),
        tool_call("Counter_increment", {"by": 2}, id="i2"),
        tool_call("echo_all", {"a": "1", "b": "2"}, id="e"),
        tool_call("where_am_i", {}, id="w"),
    ]
    done = await run(host, [turn, "done"])
    chart, upper, first, second, echo, where = (call.result for call in done.tool_calls)
    assert chart.data == {"title": "sales", "points": 3}
    assert chart.artifacts == {"attachment-1": b"\x89PNG fake"}
    assert "PNG" not in chart.model_text()
    assert upper.content == "QUIET"
    # Both calls ran on the thread the toolbox was made on, and saw each other's count.
    made = re.fullmatch(r"6 on (llm-toolbox-Counter\S*) \(made on \1\)", first.content or "")
    assert made is not None
    assert second.content == f"8 on {made[1]} (made on {made[1]})"
    assert echo.content == "a=1, b=2"
    # A plain function runs on a worker thread of the host, not on a toolbox's.
    assert where.content is not None
    assert not where.content.startswith("llm-toolbox")
    await host.aclose()


async def test_pause_chain_defers_the_call(tmp_path: Path, sample_package: None):
    host = load(tmp_path, {"packages": ["llm-tools-sample"]})
    loop = ToolCallingLoop(host, adapter=ScriptedModel(script=[
        [tool_call("ask_person", {"question": "which region?"})], "done",
    ]))  # fmt: skip
    paused = await loop.run("go")
    assert paused.stop_reason == "deferred"
    (request,) = paused.deferred
    assert (request.tool, request.reason) == ("ask_person", "deferred")
    assert request.detail.endswith("waiting for an answer to 'which region?'")
    # Approved, it runs again: still waiting, it pauses again.
    resumed = await loop.resume(paused, {request.call_id: Approve()})
    assert resumed.stop_reason == "deferred"
    await host.aclose()


def test_plugins_and_help_do_not_import_llm(tmp_path: Path):
    config = tmp_path / "toolwire.toml"
    config.write_text(
        '[plugins]\nenable = ["llm-tools"]\n'
        '[tools.llm-tools.policy.simple_eval]\nside_effects = ["read_only"]\n'
    )
    code = (
        "import sys, toolwire\n"
        f"host = toolwire.Host.load({str(config)!r})\n"
        "print(host.plugin_info('llm-tools').loaded)\n"
        "print(sorted(m for m in ('llm', 'pydantic', 'toolwire.tools') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out.split("\n")[:2] == ["True", "[]"]
