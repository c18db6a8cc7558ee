"""The history records a call whose argument text was repaired with the arguments it was read as:
the model is shown what ran, through the ``tool_call`` bridge too, and a resumed run shows the
same arguments as the run that deferred the call."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from loop_support import make_host

import toolwire
from toolwire.config import ToolsConfig
from toolwire.loop import Approve, ToolCallingLoop
from toolwire.messages import AssistantMessage, Message, ToolCall
from toolwire.testing import ScriptedModel, tool_call


@toolwire.tool
def stock_price(symbol: Annotated[str, "The ticker symbol."]) -> str:
    """Look up the latest price of a stock by its ticker symbol."""
    return f"{symbol}: 42.00"


@toolwire.tool(requires_approval=True)
def wire_money(amount: Annotated[int, "How much."]) -> str:
    """Wire money out of the account."""
    return f"wired {amount}"


def _calls(messages: tuple[Message, ...] | list[Message]) -> list[ToolCall]:
    return [c for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]


def _loop(tmp_path: Path, script: Any, **options: Any) -> tuple[ToolCallingLoop, ScriptedModel]:
    host = make_host(tmp_path, [stock_price, wire_money], **options)
    model = ScriptedModel(script=script)
    return ToolCallingLoop(host, adapter=model), model


async def test_the_next_request_shows_the_repaired_arguments_and_keeps_the_text(
    tmp_path: Path,
) -> None:
    text = "```json\n{symbol: 'ACME',}\n```"
    loop, model = _loop(tmp_path, [tool_call("stock_price", raw_arguments=text), "42."])
    run = await loop.run("ACME?")
    assert run.stop_reason == "answered", run.detail
    [sent] = _calls(model.requests[1].messages)
    assert (sent.arguments, sent.raw_arguments, sent.invalid_reason) == (
        {"symbol": "ACME"},
        text,
        None,
    )
    assert _calls(run.messages) == [sent]
    assert run.tool_calls[0].call == sent


async def test_a_bridge_call_shows_its_inner_arguments_as_read(tmp_path: Path) -> None:
    deferred = ToolsConfig(exposure={"stock_price": "deferred"})
    loop, model = _loop(
        tmp_path,
        [
            # The bridge's own arguments are fine; the arguments it passes on are text.
            tool_call("tool_call", {"name": "stock_price", "arguments": "{symbol: 'ACME'}"}),
            # The bridge's own argument text needs repair.
            tool_call("tool_call", raw_arguments="{name: 'stock_price', arguments: {symbol: 'X'}}"),
            "42.",
        ],
        tools_config=deferred,
    )
    run = await loop.run("ACME?")
    assert run.stop_reason == "answered", run.detail
    assert [r.result.model_text() for r in run.tool_calls if r.result] == [
        "ACME: 42.00",
        "X: 42.00",
    ]
    first, second = _calls(model.requests[2].messages)
    assert first.arguments == {"name": "stock_price", "arguments": {"symbol": "ACME"}}
    assert second.arguments == {"name": "stock_price", "arguments": {"symbol": "X"}}
    assert second.raw_arguments == "{name: 'stock_price', arguments: {symbol: 'X'}}"


async def test_a_deferred_call_resumed_shows_the_same_arguments(tmp_path: Path) -> None:
    script = [tool_call("wire_money", raw_arguments="{amount: 5,}"), "Done."]
    loop, model = _loop(tmp_path, script)
    run = await loop.run("Send 5.")
    assert run.stop_reason == "deferred"
    [waiting] = _calls(run.messages)
    assert waiting.arguments == {"amount": 5}
    assert run.deferred[0].arguments == {"amount": 5}
    # Resumed by id, from the ledger's record of the run, in a new loop.
    again = ToolCallingLoop(loop.host, adapter=model)
    resumed = await again.resume(run.id, {waiting.id: Approve()})
    assert resumed.stop_reason == "answered", resumed.detail
    assert resumed.tool_calls[0].result is not None
    assert resumed.tool_calls[0].result.model_text() == "wired 5"
    assert _calls(model.requests[-1].messages) == [waiting]
    assert _calls(resumed.messages) == [waiting]
