"""A whole ``toolwire run`` calling LangChain tools made with langchain-core (an ``@tool``
function, a ``BaseTool`` class, langchain-core's retriever tool), against the loopback Chat
Completions server."""

from __future__ import annotations

from pathlib import Path

from cli_run import provider_table, sent_results, toolwire_run

from toolwire.testing import FakeOpenAIChatServer, tool_call

HERE = Path(__file__).parent


async def test_langchain_tools_through_a_whole_run(tmp_path: Path):
    server = FakeOpenAIChatServer(
        [
            [
                tool_call("multiply", {"a": 6, "b": 7}, id="m"),
                tool_call("divide", {"a": 1, "b": 0}, id="d"),
                tool_call("search_reports", {"query": "units sold"}, id="s"),
            ],
            "42, no quotient, and a report.",
        ]
    )
    async with server:
        config = tmp_path / "toolwire.toml"
        config.write_text(
            '[plugins]\nenable = ["langchain", "openai"]\n'
            f'[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n'
            "[tools.langchain]\n"
            'tools = ["lc_sample_tools:multiply", "lc_sample_tools:Divide", '
            '"lc_sample_tools:search_reports"]\n'
            "[tools.langchain.policy.multiply]\n"
            'side_effects = ["read_only"]\n' + provider_table(server),
            encoding="utf-8",
        )
        run = await toolwire_run(config, "Work it out.", env={"PYTHONPATH": str(HERE)})
    assert run["stop_reason"] == "answered"
    first, second = server.bodies
    offered = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert sorted(offered) == ["divide", "multiply", "search_reports"]
    assert offered["multiply"]["parameters"]["properties"] == {
        "a": {"type": "integer"},
        "b": {"type": "integer"},
    }
    product, by_zero, report = sent_results(second)
    assert product == "42"
    assert by_zero == "cannot divide by zero; ask for another divisor"
    assert report.endswith("region sold 17 units.") or report.endswith("region sold 42 units.")
    statuses = [call["result"]["status"] for call in run["tool_calls"]]
    assert statuses == ["ok", "error", "ok"]
