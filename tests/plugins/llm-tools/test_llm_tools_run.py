"""Whole ``toolwire run`` conversations calling the tools of real ``llm-tools-*`` packages from
the package index, against the loopback Chat Completions server."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import provider_table, sent_results, toolwire_run
from sqlite_files import sqlite_file

from toolwire.testing import FakeOpenAIChatServer, tool_call


def write_config(tmp_path: Path, server: FakeOpenAIChatServer, body: str) -> Path:
    config = tmp_path / "toolwire.toml"
    config.write_text(
        '[plugins]\nenable = ["llm-tools", "openai"]\n'
        f'[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n' + provider_table(server) + body,
        encoding="utf-8",
    )
    return config


async def test_simpleeval_answers_and_its_error_text_is_an_error(tmp_path: Path):
    server = FakeOpenAIChatServer(
        [
            [
                tool_call("simple_eval", {"expression": "17.5/100*2480"}, id="a"),
                tool_call("simple_eval", {"expression": "1/0"}, id="b"),
            ],
            "17.5% of 2480 is 434.",
        ]
    )
    async with server:
        run = await toolwire_run(write_config(tmp_path, server, ""), "What is 17.5% of 2480?")
    assert run["stop_reason"] == "answered"
    first, second = server.bodies
    offered = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert offered["simple_eval"]["parameters"]["properties"] == {"expression": {"type": "string"}}
    assert sent_results(second) == ["434.0", "Error: division by zero"]
    statuses = [call["result"]["status"] for call in run["tool_calls"]]
    assert statuses == ["ok", "error"]


async def test_sqlite_toolbox_under_concurrent_calls(tmp_path: Path):
    database = tmp_path / "sales.db"
    with sqlite_file(database) as connection:
        connection.execute("create table sales (region text, total integer)")
        connection.execute("insert into sales values ('north', 42), ('south', 17)")
    server = FakeOpenAIChatServer(
        [
            [
                tool_call("SQLite_schema", {}, id="s"),
                tool_call("SQLite_query", {"sql": "select sum(total) as n from sales"}, id="q"),
            ],
            "59 in all.",
        ]
    )
    body = (
        "[loop]\nconcurrency = 2\n"
        f'[tools.llm-tools.toolboxes.SQLite]\npath = "{database}"\n'
        '[tools.llm-tools.policy.SQLite_query]\nside_effects = ["read_only", "reads_files"]\n'
    )
    async with server:
        run = await toolwire_run(write_config(tmp_path, server, body), "How much was sold?")
    assert run["stop_reason"] == "answered"
    schema, total = sent_results(server.bodies[1])
    assert "CREATE TABLE sales" in schema
    assert json.loads(total) == [{"n": 59}]


async def test_strict_policy_refuses_an_undeclared_tool_and_names_the_table(tmp_path: Path):
    server = FakeOpenAIChatServer(
        [[tool_call("simple_eval", {"expression": "2+2"})], "I may not use it."]
    )
    body = '[policy]\nstrict = true\n[tools.llm-tools]\npackages = ["llm-tools-simpleeval"]\n'
    async with server:
        run = await toolwire_run(write_config(tmp_path, server, body), "2+2?")
    (result,) = sent_results(server.bodies[1])
    assert "does not declare its side effects" in result
    assert "Declare them in [tools.llm-tools.policy.simple_eval]" in result
    assert run["tool_calls"][0]["result"]["status"] == "blocked"
