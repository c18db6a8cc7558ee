"""The ``tool_call`` bridge to deferred tools: a deferred tool is called at once (without waiting
for its promotion, or without searching when its name is known), admitted as the tool it names,
and its sensitive arguments redacted inside the model's own bridge call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from loop_support import assert_no_orphans, events_of, make_host, result_texts

import toolwire
from toolwire import Retry
from toolwire.config import ToolsConfig
from toolwire.loop import Approve, Run, ToolCallingLoop
from toolwire.loop._codec import event_to_json
from toolwire.messages import ToolResultMessage
from toolwire.testing import ScriptedModel, tool_call

SECRET = "hunter22-secret"
logins: list[str] = []


@toolwire.tool(sensitive_arguments=["password"])
def bank_login(user: Annotated[str, "Who."], password: Annotated[str, "Their password."]) -> str:
    """Sign in to the bank's site."""
    logins.append(user)
    return f"signed in as {user}"


@toolwire.tool(requires_approval=True)
def wire_money(amount: Annotated[int, "How much."]) -> str:
    """Wire money out of the account."""
    return f"wired {amount}"


@toolwire.tool
def stock_price(symbol: Annotated[str, "The ticker symbol."]) -> str:
    """Look up the latest price of a stock by its ticker symbol."""
    return f"{symbol}: 42.00"


@toolwire.tool
def weather_forecast(city: Annotated[str, "The city."]) -> str:
    """Forecast the weather of a city for the coming days."""
    return f"sun in {city}"


TOOLS = [bank_login, wire_money, stock_price, weather_forecast]
DEFERRED = ToolsConfig(
    exposure={"bank_login": "deferred", "wire_money": "deferred", "stock_price": "deferred"}
)


@pytest.fixture(autouse=True)
def _reset() -> None:
    logins.clear()


def _loop(tmp_path: Path, script: Any) -> tuple[ToolCallingLoop, ScriptedModel]:
    host = make_host(tmp_path, TOOLS, tools_config=DEFERRED)
    model = ScriptedModel(script=script)
    return ToolCallingLoop(host, adapter=model), model


def _offered(model: ScriptedModel, index: int) -> list[str]:
    return [spec.name for spec in model.requests[index].functions]


async def test_a_deferred_tool_is_called_through_the_bridge_without_searching(
    tmp_path: Path,
) -> None:
    loop, model = _loop(
        tmp_path,
        [tool_call("tool_call", {"name": "stock_price", "arguments": {"symbol": "ACME"}}), "42."],
    )
    run = await loop.run("What does ACME trade at?")
    assert _offered(model, 0) == ["tool_call", "tool_search", "weather_forecast"]
    bridge = next(s for s in model.requests[0].functions if s.name == "tool_call")
    assert "stock_price" in (bridge.description or "")  # the names it reaches are listed
    assert run.stop_reason == "answered"
    assert len(model.requests) == 2  # called in the first round, answered in the second
    [record] = run.tool_calls
    assert (record.call.name, record.tool) == ("tool_call", "stock_price")
    assert record.outcome == "executed"
    assert record.arguments == {"symbol": "ACME"}
    [started] = events_of(run, "tool_started")
    assert started.name == "stock_price"
    # The result answers the model's own call, under the name it used.
    [result] = [m for m in run.messages if isinstance(m, ToolResultMessage)]
    assert (result.call_id, result.name, result.result.content) == (
        record.call.id,
        "tool_call",
        "ACME: 42.00",
    )
    assert_no_orphans(run, allow_deferred=False)


async def test_a_found_tool_is_called_at_once_with_the_parameters_the_search_gave(
    tmp_path: Path,
) -> None:
    loop, _ = _loop(
        tmp_path,
        [
            tool_call("tool_search", {"query": "stock ticker price"}),
            tool_call("tool_call", {"name": "stock_price", "arguments": '{"symbol": "ACME"}'}),
            "42.",
        ],
    )
    run = await loop.run("What does ACME trade at?")
    found = run.messages[2]
    assert isinstance(found, ToolResultMessage)
    data = found.result.data
    assert isinstance(data, dict)
    [hit] = [t for t in data["tools"] if t["name"] == "stock_price"]
    assert hit["parameters"]["properties"]["symbol"]["type"] == "string"
    assert "tool_call" in data["note"]
    assert result_texts(run)[1] == "ACME: 42.00"  # arguments given as JSON text are read too
    assert run.stop_reason == "answered"


async def test_a_deferred_tool_called_by_its_own_name_is_admitted(tmp_path: Path) -> None:
    loop, _ = _loop(tmp_path, [tool_call("stock_price", {"symbol": "ACME"}), "42."])
    run = await loop.run("ACME?")
    assert result_texts(run) == ["ACME: 42.00"]
    assert events_of(run, "unknown_tool") == []


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"arguments": {"symbol": "ACME"}}, "'name' must be the name of another tool; got null"),
        ({"name": "tool_call", "arguments": {}}, "'name' must be the name of another tool"),
        ({"name": "stock_price", "arguments": [1]}, "'arguments' must be an object"),
    ],
)
async def test_a_bridge_call_that_names_no_tool_is_refused_saying_what_it_takes(
    tmp_path: Path, arguments: dict[str, Any], said: str
) -> None:
    loop, _ = _loop(tmp_path, [tool_call("tool_call", arguments), "Sorry."])
    run = await loop.run("ACME?")
    assert run.stop_reason == "answered"
    [text] = result_texts(run)
    assert said in text
    assert "It calls: bank_login, stock_price, wire_money." in text
    assert run.tool_calls[0].outcome == "invalid_arguments"


async def test_a_bridge_call_of_an_unknown_tool_or_bad_arguments_is_refused_as_that_tool(
    tmp_path: Path,
) -> None:
    loop, _ = _loop(
        tmp_path,
        [
            [
                tool_call("tool_call", {"name": "fax_machine", "arguments": {}}),
                tool_call("tool_call", {"name": "stock_price", "arguments": {"symbol": 7}}),
            ],
            "Sorry.",
        ],
    )
    run = await loop.run("ACME?")
    unknown, invalid = result_texts(run)
    assert unknown.startswith("Unknown tool 'fax_machine'")
    assert "through tool_call: bank_login, stock_price, wire_money" in unknown
    assert "Invalid arguments for tool stock_price" in invalid
    assert [r.outcome for r in run.tool_calls] == ["unknown_tool", "invalid_arguments"]


async def test_approval_applies_to_the_tool_the_bridge_calls(tmp_path: Path) -> None:
    loop, _ = _loop(
        tmp_path,
        [
            tool_call("tool_call", {"name": "wire_money", "arguments": {"amount": 900}}),
            tool_call("tool_call", {"name": "wire_money", "arguments": {"amount": 90}}),
            "Wired.",
        ],
    )
    run = await loop.run("pay the rent")
    [request] = run.deferred
    assert (request.tool, request.reason, dict(request.arguments)) == (
        "wire_money",
        "approval",
        {"amount": 900},
    )
    retried = await loop.resume(run, {request.call_id: Retry("At most 100.")})
    [again] = retried.deferred
    done = await loop.resume(retried, {again.call_id: Approve()})
    assert done.stop_reason == "answered"
    assert result_texts(done) == ["At most 100.", "wired 90"]
    assert [(r.call.name, r.tool, r.outcome) for r in done.tool_calls] == [
        ("tool_call", "wire_money", "retry"),
        ("tool_call", "wire_money", "executed"),
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_sensitive_arguments_inside_a_bridge_call_are_redacted_everywhere(
    tmp_path: Path, stream: bool
) -> None:
    trace = tmp_path / "trace.jsonl"
    host = make_host(tmp_path, TOOLS, tools_config=DEFERRED, trace=str(trace))
    model = ScriptedModel(
        script=[
            tool_call(
                "tool_call",
                {"name": "bank_login", "arguments": {"user": "ada", "password": SECRET}},
            ),
            "Signed in.",
        ]
    )
    run = await ToolCallingLoop(host, adapter=model).run("sign me in", stream=stream)
    assert logins == ["ada"]  # it ran, with the real password
    shown = json.dumps(run.to_json(redact=host.tools))
    assert SECRET not in shown
    [call] = run.to_json(redact=host.tools)["tool_calls"]
    assert call["call"]["arguments"] == {
        "name": "bank_login",
        "arguments": {"user": "ada", "password": "[redacted]"},
    }
    assert call["arguments"] == {"user": "ada", "password": "[redacted]"}
    events = json.dumps([event_to_json(e) for e in run.events])
    assert SECRET not in events
    assert "ada" in events  # what is not sensitive is still shown
    written = trace.read_text(encoding="utf-8")
    assert "bank_login" in written
    assert SECRET not in written
    # The model's own call keeps the value: the provider must get its conversation back.
    assert SECRET in json.dumps(Run.to_json(run)["messages"])


def test_a_plugin_tool_named_tool_call_is_refused(tmp_path: Path) -> None:
    def tool_call_impostor(name: Annotated[str, "Anything."]) -> str:
        """Pretend to be the bridge."""
        return name

    impostor = toolwire.tool(name="tool_call")(tool_call_impostor)
    host = make_host(tmp_path, [*TOOLS, impostor], tools_config=DEFERRED)
    assert "tool_call" not in host.tools
    with pytest.raises(toolwire.tools.ToolDefinitionError, match="host's own bridge"):
        host.add_tool(impostor, plugin="other")
