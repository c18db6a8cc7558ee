"""A result's trust requirement carried into a new run that continues the same conversation."""

from __future__ import annotations

import json
from pathlib import Path

from loop_support import assert_no_orphans, make_host, scripted_loop

import toolwire
from toolwire import ToolResult, TrustLevel, UserMessage
from toolwire.config import ProviderConfig
from toolwire.loop import Run
from toolwire.messages import ToolResultMessage, strictest_result
from toolwire.testing import tool_call


@toolwire.tool
def medical_record() -> ToolResult:
    """Read a medical record."""
    return ToolResult.ok("blood type 0+", required_trust=TrustLevel.HIGH)


@toolwire.tool
def weather() -> ToolResult:
    """Read the weather."""
    return ToolResult.ok("sunny", required_trust=TrustLevel.LOW)


async def _first_run(tmp_path: Path) -> Run:
    host = make_host(tmp_path, [medical_record, weather], provider=ProviderConfig(trust="high"))
    loop, _ = scripted_loop(host, [[tool_call("weather"), tool_call("medical_record")], "Noted."])
    run = await loop.run("Read my record and the weather.")
    assert run.stop_reason == "answered"
    assert run.required_trust == TrustLevel.HIGH
    return run


async def test_a_new_run_continuing_the_messages_refuses_a_weaker_provider(tmp_path: Path):
    run = await _first_run(tmp_path)
    weaker = make_host(tmp_path, [medical_record], provider=ProviderConfig(trust="medium"))
    loop, model = scripted_loop(weaker, ["never sent"])
    continued = await loop.run([*run.messages, UserMessage("And now?")])
    assert continued.stop_reason == "trust"
    assert continued.required_trust == TrustLevel.HIGH
    assert "medical_record call call_1_1 of the conversation" in (continued.detail or "")
    assert "trusted at least 'high'" in (continued.detail or "")
    assert model.requests == []  # nothing of the record reached the weaker provider
    assert_no_orphans(continued)


async def test_the_requirement_survives_the_json_of_the_run(tmp_path: Path):
    run = await _first_run(tmp_path)
    stored = Run.from_json(json.loads(json.dumps(run.to_json())))
    weaker = make_host(tmp_path, [medical_record], provider=ProviderConfig(trust="medium"))
    loop, model = scripted_loop(weaker, ["never sent"])
    continued = await loop.run([*stored.messages, UserMessage("And now?")])
    assert continued.stop_reason == "trust"
    assert model.requests == []
    trusted = make_host(tmp_path, [medical_record], provider=ProviderConfig(trust="high"))
    loop, model = scripted_loop(trusted, lambda request: "Still 0+.")
    continued = await loop.run([*stored.messages, UserMessage("And now?")])
    assert continued.stop_reason == "answered"
    assert continued.required_trust == TrustLevel.HIGH  # and it is handed on again
    assert len(model.requests) == 1


async def test_a_record_stored_before_the_field_still_loads_without_a_requirement(
    tmp_path: Path,
):
    run = await _first_run(tmp_path)
    data = json.loads(json.dumps(run.to_json()))
    for message in data["messages"]:
        if message["role"] == "tool":
            del message["result"]["required_trust"]
    old = Run.from_json(data)
    assert strictest_result(old.messages) is None
    weaker = make_host(tmp_path, [medical_record], provider=ProviderConfig(trust="medium"))
    loop, _ = scripted_loop(weaker, lambda request: "Fine.")
    continued = await loop.run([*old.messages, UserMessage("And now?")])
    assert continued.stop_reason == "answered"
    assert continued.required_trust is None


def test_strictest_result_takes_the_first_of_the_strictest():
    low = ToolResultMessage(call_id="a", name="weather", result=ToolResult.ok("x"))
    high = ToolResultMessage(
        call_id="b",
        name="medical_record",
        result=ToolResult.ok("y", required_trust=TrustLevel.HIGH),
    )
    later = ToolResultMessage(
        call_id="c",
        name="medical_record",
        result=ToolResult.ok("z", required_trust=TrustLevel.HIGH),
    )
    assert strictest_result([]) is None
    assert strictest_result([low]) is None
    assert strictest_result([UserMessage("hi"), low, high, later]) is high
