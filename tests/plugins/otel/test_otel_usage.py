"""Usage and cost on the spans (GenAI conventions), and a run started as a tool as a child of
its call's span, from real runs against the fake servers."""

from __future__ import annotations

import types
from typing import Any

import pytest

pytest.importorskip("toolwire_openai")
pytest.importorskip("toolwire_anthropic")

from fake_config import fake_config

import toolwire
import toolwire_anthropic._plugin
import toolwire_openai._plugin
from toolwire import Host
from toolwire.testing import FakeAnthropicServer, FakeOpenAIChatServer, Reply, tool_call
from toolwire.usage import ModelPrice, Usage

PRICE = {"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0}


def _config(server: Any) -> Any:
    return fake_config(server, prices={"m": PRICE})


async def test_chat_and_agent_spans_carry_every_count_and_the_cost(telemetry: Any) -> None:
    spent = Usage(
        input_tokens=2000,
        cache_read_tokens=1500,
        cache_write_tokens=300,
        output_tokens=120,
        reasoning_tokens=80,
        total_tokens=2120,
    )
    async with FakeAnthropicServer([Reply(turn="Hello.", usage=spent)]) as server:
        host = Host.load(_config(server), plugins=[toolwire_anthropic._plugin, telemetry.plugin()])
        run = await host.run("hi")
        await host.aclose()
    assert run.stop_reason == "answered"
    spans = telemetry.spans.get_finished_spans()
    (chat,) = [s for s in spans if s.name.startswith("chat ")]
    (agent,) = [s for s in spans if s.name.startswith("invoke_agent")]
    cost = ModelPrice(**PRICE).cost(spent)
    for span in (chat, agent):
        attributes = span.attributes
        assert attributes["gen_ai.usage.input_tokens"] == 2000
        assert attributes["gen_ai.usage.output_tokens"] == 120
        assert attributes["gen_ai.usage.cache_read.input_tokens"] == 1500
        assert attributes["gen_ai.usage.cache_creation.input_tokens"] == 300
        assert attributes["gen_ai.usage.reasoning.output_tokens"] == 80
        assert attributes["toolwire.usage.cost"] == pytest.approx(cost)
    # The token metric keeps to input and output, reasoning counted inside the output.
    points = telemetry.histogram_points("gen_ai.client.token.usage")
    assert sorted(p.sum for p in points) == [120, 2000]


async def test_a_run_started_as_a_tool_is_a_child_of_its_calls_span(telemetry: Any) -> None:
    async with (
        FakeAnthropicServer(["3"]) as sub,
        FakeOpenAIChatServer([tool_call("helper", {"task": "add"}), "It is 3."]) as parent,
    ):
        helper = toolwire.agent_tool(
            "helper",
            "Adds.",
            config=_config(sub),
            plugins=[toolwire_anthropic._plugin],
        )
        host = Host.load(
            _config(parent),
            plugins=[
                toolwire_openai._plugin,
                types.SimpleNamespace(
                    __name__="helper_tool",
                    toolwire_tools=toolwire.hookimpl(lambda settings: [helper]),
                ),
                telemetry.plugin(),
            ],
        )
        run = await host.run("go")
        await host.aclose()
    assert run.stop_reason == "answered", run.detail
    spans = telemetry.spans.get_finished_spans()
    agents = [s for s in spans if s.name.startswith("invoke_agent")]
    assert len(agents) == 2
    (call,) = [s for s in spans if s.name == "execute_tool helper"]
    (outer,) = [a for a in agents if a.parent is None]
    (inner,) = [a for a in agents if a.parent is not None]
    assert inner.parent.span_id == call.context.span_id
    assert call.parent is not None
    assert call.parent.span_id == outer.context.span_id
    assert inner.attributes["gen_ai.provider.name"] == "anthropic"
