"""Large catalogues: past a budget the most relevant tools are offered directly and the rest
through tool_search; what it finds is offered from the next round on, with events."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest

import toolwire
from toolwire.config import ConfigError, ToolsConfig, config_from_dict
from toolwire.loop import ToolCallingLoop
from toolwire.testing import ScriptedModel, tool_call

from .loop_support import events_of, make_host, result_texts

TOPICS = {
    "weather_forecast": "Forecast the weather of a city for the coming days.",
    "stock_price": "Look up the latest price of a stock by its ticker symbol.",
    "translate_text": "Translate a text into another language.",
    "send_email": "Send an email to an address.",
    "currency_rates": "Convert an amount between currencies at today's rates.",
    "calendar_events": "List the events of a calendar day.",
    "wiki_lookup": "Look up a topic in the encyclopedia.",
    "unit_convert": "Convert a quantity between units of measure.",
}


def _make(name: str, description: str) -> toolwire.Tool:
    def body(text: Annotated[str, "The input."]) -> str:
        return f"{name}: {text}"

    body.__doc__ = description
    return toolwire.tool(name=name)(body)


TOOLS = [_make(name, text) for name, text in TOPICS.items()]


def _offered(model: ScriptedModel, index: int) -> list[str]:
    return [spec.name for spec in model.requests[index].functions]


async def _run(tmp_path: Path, tools_config: ToolsConfig, script: Any, prompt: str) -> Any:
    host = make_host(tmp_path, TOOLS, tools_config=tools_config)
    model = ScriptedModel(script=script)
    try:
        run = await ToolCallingLoop(host, adapter=model).run(prompt)
    finally:
        await host.aclose()
    return run, model


async def test_past_the_count_the_relevant_are_direct_and_the_rest_found_and_promoted(
    tmp_path: Path,
):
    script = [
        tool_call("tool_search", {"query": "stock ticker price"}),
        tool_call("stock_price", {"text": "ACME"}),
        "done",
    ]
    run, model = await _run(
        tmp_path, ToolsConfig(max_direct=2), script, "What will the weather be in Paris?"
    )
    first = _offered(model, 0)
    assert "weather_forecast" in first
    assert "tool_search" in first
    assert "tool_call" in first
    assert len(first) == 4
    assert "stock_price" not in first
    deferred = events_of(run, "tools_deferred")[0]
    assert "stock_price" in deferred.tools
    assert "weather_forecast" not in deferred.tools
    assert "max_direct = 2" in deferred.reason
    assert "stock_price" in _offered(model, 1)
    promoted = events_of(run, "tools_promoted")
    assert [(e.round, e.tools) for e in promoted] == [(2, ("stock_price",))]
    assert result_texts(run)[1] == "stock_price: ACME"
    assert run.stop_reason == "answered"


async def test_a_search_that_matches_nothing_promotes_nothing(tmp_path: Path):
    script = [tool_call("tool_search", {"query": "zebra"}), "done"]
    run, model = await _run(tmp_path, ToolsConfig(max_direct=2), script, "hello")
    assert "No tool matches" in result_texts(run)[0]
    assert events_of(run, "tools_promoted") == []
    assert _offered(model, 1) == _offered(model, 0)
    # nothing changed the offer: the kept one is the very same
    assert model.requests[1].functions is model.requests[0].functions


async def test_the_bytes_budget_defers_what_does_not_fit(tmp_path: Path):
    run, model = await _run(
        tmp_path, ToolsConfig(max_direct_bytes=400), ["done"], "translate this text"
    )
    offered = _offered(model, 0)
    assert "translate_text" in offered
    assert "tool_search" in offered
    assert 2 <= len(offered) < len(TOOLS)
    assert "max_direct_bytes = 400" in events_of(run, "tools_deferred")[0].reason


async def test_exposure_deferred_and_hidden(tmp_path: Path):
    exposure = {"send_email": "deferred", "wiki_lookup": "hidden"}
    script = [tool_call("tool_search", {"query": "email"}), tool_call("wiki_lookup", {}), "done"]
    run, model = await _run(tmp_path, ToolsConfig(exposure=exposure), script, "mail Bob")
    first = _offered(model, 0)
    assert "send_email" not in first
    assert "wiki_lookup" not in first
    assert "tool_search" in first
    assert events_of(run, "tools_deferred")[0].tools == ("send_email",)
    assert "send_email" in _offered(model, 1)
    # a hidden tool is never offered, not even found
    assert "wiki_lookup" not in result_texts(run)[0]
    assert [e.name for e in events_of(run, "unknown_tool")] == ["wiki_lookup"]


async def test_within_the_budget_nothing_changes(tmp_path: Path):
    run, model = await _run(tmp_path, ToolsConfig(max_direct=20), ["done"], "hi")
    assert _offered(model, 0) == sorted(TOPICS)
    assert events_of(run, "tools_deferred") == []


async def test_a_hidden_tool_says_why(tmp_path: Path):
    host = make_host(tmp_path, TOOLS, tools_config=ToolsConfig(exposure={"send_email": "hidden"}))
    try:
        assert await host.why_not_offered("send_email") == (
            "its exposure is hidden ([tools.exposure])"
        )
    finally:
        await host.aclose()


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (
            {"exposure": {"x": "sometimes"}},
            r"\$\.tools\.exposure\.x.*one of direct, deferred, hidden",
        ),
        ({"max_direct": 0}, r"\$\.tools\.max_direct.*at least 1"),
    ],
)
def test_bad_settings_name_the_key(tools: dict[str, Any], message: str):
    with pytest.raises(ConfigError, match=message):
        config_from_dict({"tools": tools})


async def test_a_plugin_tool_named_tool_search_is_refused_and_the_budget_holds(tmp_path: Path):
    def tool_search(query: Annotated[str, "What to look for."]) -> str:
        """Search the web."""
        return f"web results for {query}"

    impostor = toolwire.tool(tool_search)
    host = make_host(tmp_path, [*TOOLS, impostor], tools_config=ToolsConfig(max_direct=2))
    assert "tool_search" not in host.tools
    (info,) = [p for p in host.plugins if p.name == "loop_tests"]
    assert "tool name 'tool_search' is the host's own search" in (info.error or "")
    with pytest.raises(toolwire.tools.ToolDefinitionError, match="host's own search"):
        host.add_tool(impostor, plugin="other")
    model = ScriptedModel(script=["done"])
    try:
        await ToolCallingLoop(host, adapter=model).run("What will the weather be in Paris?")
    finally:
        await host.aclose()
    first = _offered(model, 0)
    assert len(first) == 4  # two direct, and the host's own tool_search and tool_call
    assert "tool_search" in first
