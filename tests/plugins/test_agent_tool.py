"""``toolwire.agent_tool``: a whole run with its own provider and tools as one tool of another,
over the wire, its events nested under the call."""

from __future__ import annotations

from typing import Any

from fake_config import fake_config_table

import toolwire
import toolwire_anthropic._plugin
import toolwire_openai._plugin
from toolwire import Host
from toolwire.config import config_from_dict
from toolwire.events import ResponseReceived, RunStarted, ToolCompleted, ToolStarted
from toolwire.loop import Run
from toolwire.testing import FakeAnthropicServer, FakeOpenAIChatServer, tool_call

used: list[str] = []


@toolwire.tool(side_effects="read_only")
def lookup(city: str) -> str:
    """The weather in a city."""
    used.append(city)
    return f"{city}: 21 °C"


def config_for(server: Any, **extra: Any) -> dict[str, Any]:
    return fake_config_table(
        server, model=f"model-of-{server.api}", plugins={"enable": []}, **extra
    )


async def run_parent(parent: Any, tool: toolwire.Tool, prompt: str = "Weather in Nice?") -> Run:
    host = Host.load(
        config_from_dict(config_for(parent)),
        plugins=[toolwire_openai._plugin, toolwire_anthropic._plugin],
    )
    host.add_tool(tool)
    try:
        return await host.run(prompt)
    finally:
        await host.aclose()


async def test_a_sub_run_with_its_own_provider_and_tools_answers_the_call() -> None:
    used.clear()
    async with (
        FakeAnthropicServer([tool_call("lookup", {"city": "Nice"}), "Nice: 21 °C, sunny."]) as sub,
        FakeOpenAIChatServer(
            [tool_call("weather_agent", {"task": "Find the weather in Nice."}), "It is 21 °C."]
        ) as parent,
    ):
        tool = toolwire.agent_tool(
            "weather_agent",
            "Finds the weather of a city.",
            config=config_for(sub),
            tools=[lookup],
            plugins=[toolwire_anthropic._plugin],
            system_prompt="You look weather up.",
        )
        assert tool.policy.side_effects == frozenset({toolwire.SideEffect.READ_ONLY})
        run = await run_parent(parent, tool)
    assert run.stop_reason == "answered", run.detail
    assert used == ["Nice"]
    (record,) = run.tool_calls
    assert record.result is not None
    assert record.result.model_text() == "Nice: 21 °C, sunny."
    assert record.result.metadata["stop_reason"] == "answered"
    # The sub-run asked its own provider with its own system prompt and tool.
    first = sub.bodies[0]
    assert first["system"] == "You look weather up."
    assert [t["name"] for t in first["tools"]] == ["lookup"]
    assert first["messages"][0]["content"] == "Find the weather in Nice."
    # Its usage is on the result.
    assert record.result.usage is not None
    assert record.result.usage.input_tokens is not None
    # Its events are in the calling run, each under the call.
    call_id = record.call.id
    nested = [e for e in run.events if e.parent is not None]
    assert nested
    assert all(e.parent.call_id == call_id and e.parent.run_id == run.id for e in nested)
    assert all(e.run_id == f"{run.id}.{call_id}" for e in nested)
    kinds = [type(e) for e in nested]
    assert kinds[0] is RunStarted
    assert ToolStarted in kinds
    assert ToolCompleted in kinds
    assert ResponseReceived in kinds
    # The call's own events are no nested events.
    own = [e for e in run.events if isinstance(e, ToolCompleted) and e.parent is None]
    assert [e.call_id for e in own] == [call_id]


async def test_a_sub_run_that_stops_without_an_answer_answers_with_an_error() -> None:
    async with (
        FakeAnthropicServer([tool_call("lookup", {"city": "Nice"})] * 3) as sub,
        FakeOpenAIChatServer([tool_call("weather_agent", {"task": "Loop."}), "Gave up."]) as parent,
    ):
        tool = toolwire.agent_tool(
            "weather_agent",
            "Finds the weather.",
            config=config_for(sub, loop={"max_rounds": 2}),
            tools=[lookup],
            plugins=[toolwire_anthropic._plugin],
        )
        run = await run_parent(parent, tool)
    assert run.stop_reason == "answered", run.detail
    (record,) = run.tool_calls
    assert record.result is not None
    assert record.result.status.value == "error"
    assert "max_rounds" in record.result.model_text()
    assert "The sub-run stopped without an answer" in record.result.model_text()


async def test_the_sub_runs_host_is_made_once_and_closed_with_the_callers() -> None:
    async with (
        FakeAnthropicServer(["one", "two"]) as sub,
        FakeOpenAIChatServer(
            [
                [
                    tool_call("helper", {"task": "first"}),
                    tool_call("helper", {"task": "second"}),
                ],
                "Done.",
            ]
        ) as parent,
    ):
        tool = toolwire.agent_tool(
            "helper",
            "Helps.",
            config=config_for(sub),
            plugins=[toolwire_anthropic._plugin],
        )
        host = Host.load(config_from_dict(config_for(parent)), plugins=[toolwire_openai._plugin])
        host.add_tool(tool)
        try:
            run = await host.run("go")
            (sub_host,) = [v for v in host.stash.values() if isinstance(v, Host)]
        finally:
            await host.aclose()
    assert run.stop_reason == "answered", run.detail
    assert [r.result.model_text() for r in run.tool_calls if r.result] == ["one", "two"]
    assert sub_host._adapter is None  # closed with the calling host


async def test_cancelling_the_calling_run_cancels_the_sub_run() -> None:
    import asyncio

    from toolwire.events import RequestSent
    from toolwire.testing import Reply

    cancel = asyncio.Event()
    async with (
        FakeAnthropicServer([Reply(turn="late", delay=2)]) as sub,
        FakeOpenAIChatServer([tool_call("helper", {"task": "slow"}), "never"]) as parent,
    ):
        tool = toolwire.agent_tool(
            "helper", "Helps.", config=config_for(sub), plugins=[toolwire_anthropic._plugin]
        )
        host = Host.load(config_from_dict(config_for(parent)), plugins=[toolwire_openai._plugin])
        host.add_tool(tool)
        try:
            stream = host.stream("go", cancel=cancel)
            async for event in stream:
                if isinstance(event, RequestSent) and event.parent is not None:
                    cancel.set()
            run = stream.run
        finally:
            await host.aclose()
    assert run is not None
    assert run.stop_reason == "cancelled", run.detail
    (record,) = run.tool_calls
    assert record.result is not None
    assert record.result.status.value == "error"
    finished = [e for e in run.events if type(e).__name__ == "RunFinished" and e.parent]
    assert [e.stop_reason for e in finished] == ["cancelled"]  # type: ignore[attr-defined]
