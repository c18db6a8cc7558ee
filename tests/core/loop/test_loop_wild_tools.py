"""Runs with tools from the wild: refused or normalised definitions, names that need repair."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from loop_support import events_of, evolve_loop, make_host, plugin, run_script

from toolwire import Tool
from toolwire.messages import ToolResultMessage
from toolwire.testing import tool_call

WILD = {
    "properties": {
        "size": {"type": "float", "description": "Size in metres."},
        "tags": {"type": "List[str]"},
        "meta": {"type": "dict", "optional": True},
    },
    "required": ["size", "tags", "meta"],
}
seen: list[dict[str, Any]] = []


def _measure(arguments: dict[str, Any]) -> str:
    seen.append(arguments)
    return f"measured {arguments['size']}"


@pytest.fixture(autouse=True)
def _reset() -> None:
    seen.clear()


def _results(run: Any) -> list[ToolResultMessage]:
    return [m for m in run.messages if isinstance(m, ToolResultMessage)]


def _refusing_plugin() -> Any:
    def toolwire_tools(settings: Any) -> list[Tool]:
        return [Tool.from_schema("measure", "Measure a thing.", WILD, _measure)]

    return plugin("wild_plugin", toolwire_tools=toolwire_tools)


async def test_a_refused_definition_costs_its_plugin_and_the_run_goes_on(tmp_path: Path) -> None:
    steady = Tool.from_schema(
        "count", "Count.", {"type": "object", "properties": {}}, lambda a: "3"
    )
    host = make_host(tmp_path, [steady], plugins=[_refusing_plugin()])
    info = host.plugin_info("wild_plugin")
    assert "measure" not in host.tools
    assert info is not None
    assert info.error is not None
    assert "$.properties.size.type: 'float' is not a JSON Schema type" in info.error
    assert "$.properties.meta.type: 'dict' is not a JSON Schema type" in info.error
    run = await run_script(
        host,
        [[tool_call("measure", {"size": 2.5}), tool_call("count", {})], "done"],
    )
    assert run.stop_reason == "answered"
    first, second = _results(run)
    assert first.result.status == "error"
    assert "Unknown tool 'measure'" in first.result.model_text()
    assert second.result.model_text() == "3"


async def test_a_normalised_definition_is_called_like_any_other(tmp_path: Path) -> None:
    measure = Tool.from_schema("measure", "Measure.", WILD, _measure, normalize=True)
    host = make_host(tmp_path, [measure])
    run = await run_script(
        host,
        [
            tool_call("measure", {"size": "big", "tags": ["a"]}),
            tool_call("measure", {"size": 2.5, "tags": ["a"], "meta": None}),
            "done",
        ],
    )
    assert run.stop_reason == "answered"
    refused, ran = _results(run)
    assert refused.result.status == "error"
    assert 'size: got "big" (string); expected a number' in refused.result.model_text()
    assert ran.result.model_text() == "measured 2.5"
    assert seen == [{"size": 2.5, "tags": ["a"]}]


@pytest.mark.parametrize("called", ["Math.Factorial", "math_factorial", "MATH_FACTORIAL"])
async def test_a_name_off_by_case_or_given_as_alias_is_repaired_with_an_event(
    tmp_path: Path, called: str
) -> None:
    factorial = Tool.from_schema(
        "math.factorial",
        "Factorial.",
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        lambda a: str(a["n"]),
    )
    host = make_host(tmp_path, [factorial])
    run = await run_script(host, [tool_call(called, {"n": 4}), "24"])
    assert run.stop_reason == "answered"
    [result] = _results(run)
    assert result.result.model_text() == "4"
    [event] = events_of(run, "unknown_tool")
    assert (event.name, event.action) == (called, "repaired:math.factorial")
    assert run.tool_calls[0].outcome == "executed"
    tool_events = [e for e in run.events if e.kind in ("tool_started", "tool_completed")]
    assert tool_events
    assert all(e.name == "math.factorial" for e in tool_events)


async def test_an_ambiguous_or_failing_name_is_never_repaired(tmp_path: Path) -> None:
    def make(name: str) -> Tool:
        return Tool.from_schema(name, "", {"type": "object", "properties": {}}, lambda a: name)

    host = make_host(tmp_path, [make("get.weather"), make("Get_Weather")])
    run = await run_script(host, [tool_call("get_weather", {}), "sorry"])
    [event] = events_of(run, "unknown_tool")
    assert event.action == "return_error"
    strict = make_host(tmp_path, [make("get_weather")], loop=evolve_loop(unknown_tool="fail"))
    run = await run_script(strict, [tool_call("Get_Weather", {}), "sorry"])
    [event] = events_of(run, "unknown_tool")
    assert event.action == "fail"
    assert run.stop_reason != "answered"


async def test_a_resolver_that_offers_an_unsound_schema_costs_only_its_tool(
    tmp_path: Path,
) -> None:
    from toolwire.tools import FunctionSpec

    def offer_wild(tool: Tool, request: Any) -> FunctionSpec:
        return FunctionSpec(name=tool.name, description="", parameters={"type": "float"})

    wild = Tool.from_schema(
        "wild", "", {"type": "object", "properties": {}}, lambda a: "no", resolver=offer_wild
    )
    steady = Tool.from_schema("count", "", {"type": "object", "properties": {}}, lambda a: "3")
    host = make_host(tmp_path, [wild, steady])
    run = await run_script(host, [tool_call("count", {}), "done"])
    assert run.stop_reason == "answered"
    [omitted] = events_of(run, "tool_omitted")[:1]
    assert omitted.tool == "wild"
    assert "$.type: 'float' is not a JSON Schema type" in omitted.reason
    assert [r.result.model_text() for r in _results(run)] == ["3"]
