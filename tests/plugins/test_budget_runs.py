"""Budgets over the wire beyond one run: a batch totals what its runs spent, a run resumed
over its budget sends nothing, a run started as a tool adds its usage to its caller's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fake_config import fake_config_table

import toolwire
import toolwire_anthropic._plugin
import toolwire_openai._plugin
from toolwire import Host
from toolwire.batch import BatchPlan, run_batch
from toolwire.config import config_from_dict
from toolwire.events import LimitReached, RequestSent
from toolwire.testing import FakeAnthropicServer, FakeOpenAIChatServer, Reply, tool_call
from toolwire.usage import ModelPrice, Usage

SPENT = Usage(input_tokens=1000, cache_read_tokens=400, output_tokens=50, total_tokens=1050)
PRICE = {"input": 1.0, "cached_input": 0.1, "output": 4.0}


def config_for(server: Any, **sections: Any) -> dict[str, Any]:
    return fake_config_table(server, prices={"m": PRICE}, **sections)


@toolwire.tool(side_effects="read_only")
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


async def test_a_batch_totals_the_usage_and_cost_of_its_runs(tmp_path: Path) -> None:
    jobs = tmp_path / "in.jsonl"
    jobs.write_text("".join(json.dumps({"id": str(i), "prompt": "hi"}) + "\n" for i in range(3)))
    async with FakeOpenAIChatServer([Reply(turn="ok", usage=SPENT)] * 3) as server:
        host = Host.load(config_from_dict(config_for(server)), plugins=[toolwire_openai._plugin])
        try:
            summary = await run_batch(
                host, jobs, tmp_path / "out.jsonl", plan=BatchPlan(concurrency=2)
            )
        finally:
            await host.aclose()
    assert summary.done == 3
    assert summary.usage == SPENT + SPENT + SPENT
    one = ModelPrice(**PRICE).cost(SPENT)
    assert summary.cost is not None
    assert abs(summary.cost - 3 * one) < 1e-12
    written = summary.to_json()
    assert written["usage"]["cache_read_tokens"] == 1200
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert all(r["cost"] == one for r in records)


async def test_a_run_resumed_over_its_budget_sends_no_request() -> None:
    async with FakeOpenAIChatServer(
        [Reply(turn=tool_call("add", {"a": 1, "b": 2}), usage=SPENT)]
    ) as server:
        config = config_from_dict(config_for(server, limits={"max_input_tokens": 1000}, policy={}))
        host = Host.load(config, plugins=[toolwire_openai._plugin])
        host.add_tool(add)
        try:
            run = await host.run("add")
            again = await host.resume(run, {})
        finally:
            await host.aclose()
    assert run.stop_reason == "budget"
    assert again.stop_reason == "budget"
    assert len(server.requests) == 1
    resumed = again.events[len(run.events) :]
    limits = [e for e in resumed if isinstance(e, LimitReached)]
    assert [(e.limit, e.value) for e in limits] == [("max_input_tokens", 1000)]
    assert not any(isinstance(e, RequestSent) for e in resumed)


async def test_a_sub_runs_usage_and_cost_are_added_to_the_callers() -> None:
    sub_spent = Usage(input_tokens=300, output_tokens=30, total_tokens=330)
    async with (
        FakeAnthropicServer([Reply(turn="3", usage=sub_spent)]) as sub,
        FakeOpenAIChatServer(
            [
                Reply(turn=tool_call("helper", {"task": "add 1 and 2"}), usage=SPENT),
                Reply(turn="It is 3.", usage=SPENT),
            ]
        ) as parent,
    ):
        helper = toolwire.agent_tool(
            "helper",
            "Adds.",
            config=config_for(sub, plugins={"enable": []}),
            plugins=[toolwire_anthropic._plugin],
        )
        host = Host.load(config_from_dict(config_for(parent)), plugins=[toolwire_openai._plugin])
        host.add_tool(helper)
        try:
            run = await host.run("go")
        finally:
            await host.aclose()
    assert run.stop_reason == "answered", run.detail
    assert run.usage == SPENT + SPENT + sub_spent
    price = ModelPrice(**PRICE)
    assert run.cost is not None
    assert abs(run.cost - (2 * price.cost(SPENT) + price.cost(sub_spent))) < 1e-12


async def test_toolwire_run_json_shows_a_budget_stop_its_usage_and_cost(tmp_path: Path) -> None:
    from cli_run import provider_table, toolwire_run

    script = [Reply(turn=tool_call("add", {"a": 1, "b": 2}), usage=SPENT), "never asked"]
    async with FakeOpenAIChatServer(script) as server:
        config = tmp_path / "toolwire.toml"
        config.write_text(
            '[plugins]\nenable = ["openai"]\n[ledger]\nenabled = false\n'
            + provider_table(server)
            + '[limits]\nmax_cost = 0.0005\n[prices."test-model"]\n'
            + "".join(f"{key} = {value}\n" for key, value in PRICE.items())
        )
        run = await toolwire_run(config, "Add 1 and 2.", exit_code=1)
    assert len(server.requests) == 1
    assert run["stop_reason"] == "budget"
    assert "[limits] max_cost" in run["detail"]
    assert run["usage"]["input_tokens"] == SPENT.input_tokens
    assert run["usage"]["cache_read_tokens"] == SPENT.cache_read_tokens
    price = ModelPrice(**PRICE)
    assert run["cost"] == price.cost(SPENT)
    assert [r["outcome"] for r in run["tool_calls"]] == ["not_run"]
    (limit,) = [e for e in run["events"] if e["kind"] == "limit_reached"]
    assert limit["limit"] == "max_cost"
