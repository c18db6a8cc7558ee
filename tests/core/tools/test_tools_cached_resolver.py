"""``cached_resolver``: a context tool's tailored function fetched once per conversation."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from loop_support import make_host, scripted_loop

import toolwire
from toolwire.messages import AssistantMessage, SystemMessage, TextPart, UserMessage
from toolwire.testing import tool_call
from toolwire.tools import FunctionSpec, ToolDefinitionError, cached_resolver


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def projects_tool(
    fetches: list[str], clock: Clock, *, fetch_async: bool = False, **options: object
) -> toolwire.Tool:
    """A context tool whose resolver 'fetches' the user's projects to offer them as an enum
    (with ``fetch_async``, an ``async def`` resolver, as one that really fetches is)."""

    def offer(tool: toolwire.Tool, request: toolwire.OfferRequest) -> FunctionSpec | None:
        if not any(isinstance(m, UserMessage) and "project" in m.text for m in request.messages):
            return None
        fetches.append(request.run_id)
        names = [f"p{len(fetches)}a", f"p{len(fetches)}b"]
        parameters = {
            "type": "object",
            "properties": {"project": {"enum": names}},
            "required": ["project"],
        }
        return FunctionSpec(name=tool.name, description="Open a project.", parameters=parameters)

    async def offer_async(
        tool: toolwire.Tool, request: toolwire.OfferRequest
    ) -> FunctionSpec | None:
        await asyncio.sleep(0)
        return offer(tool, request)

    return toolwire.Tool.from_schema(
        name="open_project",
        description="Open one of the user's projects.",
        parameters={"type": "object", "properties": {"project": {"type": "string"}}},
        handler=lambda arguments: f"opened {arguments['project']}",
        activation="context",
        resolver=cached_resolver(offer_async if fetch_async else offer, clock=clock, **options),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("fetch_async", [False, True], ids=["sync", "async"])
async def test_a_conversation_fetches_once_and_is_offered_the_same_function(
    tmp_path: Path, fetch_async: bool
) -> None:
    fetches: list[str] = []
    clock = Clock()
    host = make_host(tmp_path, [projects_tool(fetches, clock, fetch_async=fetch_async)])
    turn = [tool_call("open_project", {"project": "p1a"})]
    loop, model = scripted_loop(host, [turn, turn, "done", "again"])
    run = await loop.run("open my project")
    assert run.stop_reason == "answered"
    offered = [r.functions for r in model.requests]
    assert len(offered) == 3
    assert offered[0] == offered[1] == offered[2]  # stable: the provider's prompt cache holds
    assert fetches == [run.id]
    # The conversation goes on in a new run: same opening, same entry.
    more = await loop.run([*run.messages, UserMessage("and again")])
    assert fetches == [run.id]
    assert model.requests[-1].functions == offered[0]
    assert more.stop_reason == "answered"


def test_entries_expire_and_none_is_never_kept() -> None:
    fetches: list[str] = []
    clock = Clock()
    tool = projects_tool(fetches, clock, ttl=60)
    assert tool.resolver is not None

    def request(*texts: str, run_id: str = "r1") -> toolwire.OfferRequest:
        return toolwire.OfferRequest(
            run_id=run_id, round=1, messages=tuple(UserMessage(t) for t in texts), api="x"
        )

    assert tool.resolve(request("hello")) is None  # nothing to offer yet: asked again later
    first = tool.resolve(request("hello", "my project"))
    assert first is not None
    assert fetches == ["r1"]
    assert tool.resolve(request("hello", "my project", run_id="r2")) is first
    clock.now += 61
    assert tool.resolve(request("hello", "my project")) is not first
    assert len(fetches) == 2
    other = tool.resolve(request("a project, another conversation"))
    assert other is not None
    assert len(fetches) == 3


def test_the_least_recently_used_conversation_goes_first() -> None:
    fetches: list[str] = []
    tool = projects_tool(fetches, Clock(), max_entries=2)
    assert tool.resolver is not None

    def ask(opening: str) -> None:
        request = toolwire.OfferRequest(
            run_id=opening, round=1, messages=(UserMessage(f"{opening} project"),), api="x"
        )
        tool.resolve(request)

    for opening in ("a", "b", "a", "c", "a", "b"):
        ask(opening)
    assert fetches == ["a", "b", "c", "b"]


def test_the_conversation_key_ignores_the_system_prompt_and_later_turns() -> None:
    def key(*messages: object) -> str:
        request = toolwire.OfferRequest(run_id="r", round=1, messages=messages, api="x")  # type: ignore[arg-type]
        return request.conversation_key

    opening = UserMessage("plan my week")
    assert key(opening) == key(
        SystemMessage("be brief"), opening, AssistantMessage(parts=(TextPart("ok"),))
    )
    assert key(opening) != key(UserMessage("plan my month"))


@pytest.mark.parametrize(("field", "value"), [("ttl", 0), ("ttl", -1), ("max_entries", 0)])
def test_bad_settings_are_refused(field: str, value: float) -> None:
    with pytest.raises(ToolDefinitionError, match=f"{field} must be"):
        cached_resolver(lambda tool, request: None, **{field: value})  # type: ignore[arg-type]
