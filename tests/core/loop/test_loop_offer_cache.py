"""The kept offer: the same offer round after round, and a new one whenever something decides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loop_support import events_of, make_host, names_of, plain_tool, plugin, scripted_loop

import toolwire
from toolwire import FunctionSpec, OfferRequest, Tool
from toolwire.config import ProviderConfig
from toolwire.messages import ToolResultMessage
from toolwire.testing import tool_call


async def test_rounds_with_nothing_changed_share_one_offer(tmp_path: Path) -> None:
    vault = plain_tool("vault", min_provider_trust="high")
    host = make_host(tmp_path, [plain_tool("alpha"), plain_tool("beta"), vault])
    loop, model = scripted_loop(host, [tool_call("alpha", {}), tool_call("beta", {}), "done"])
    first = await loop.run("go")
    second = await loop.run("again", system_prompt=None)
    requests = model.requests
    assert len(requests) > 3
    assert all(names_of(r.functions) == ["alpha", "beta"] for r in requests)
    assert all(r.functions is requests[0].functions for r in requests)
    # The tool the provider's trust rules out is still announced every round.
    for run in (first, second):
        omitted = events_of(run, "tool_omitted")
        assert [(e.round, e.tool) for e in omitted] == [
            (r, "vault") for r in range(1, len(omitted) + 1)
        ]
        assert "needs a provider trusted at least 'high'" in omitted[0].reason


async def test_a_tool_added_or_removed_mid_run_changes_the_next_offer(tmp_path: Path) -> None:
    late = plain_tool("late")
    host = make_host(tmp_path)

    @toolwire.tool
    def install() -> str:
        """Register the late tool."""
        host.add_tool(late)
        return "installed"

    @toolwire.tool
    def uninstall() -> str:
        """Unregister the late tool."""
        host.remove_tool("late")
        return "removed"

    host.add_tool(install)
    host.add_tool(uninstall)
    script = [tool_call("install", {}), tool_call("late", {}), tool_call("uninstall", {}), "ok"]
    loop, model = scripted_loop(host, script)
    run = await loop.run("go")
    assert run.stop_reason == "answered"
    assert [names_of(r.functions) for r in model.requests] == [
        ["install", "uninstall"],
        ["install", "late", "uninstall"],
        ["install", "late", "uninstall"],
        ["install", "uninstall"],
    ]
    assert [r.result.content for r in run.tool_calls if r.result] == [
        "installed",
        "late done",
        "removed",
    ]


async def test_a_context_tool_is_asked_every_round(tmp_path: Path) -> None:
    asked: list[int] = []

    def when_mentioned(tool: Tool, request: OfferRequest) -> FunctionSpec | None:
        asked.append(request.round)
        said = [m.result.model_text() for m in request.messages if isinstance(m, ToolResultMessage)]
        return tool.function_spec() if any("page" in text for text in said) else None

    reader = plain_tool("reader", activation="context", resolver=when_mentioned)
    host = make_host(tmp_path, [plain_tool("alpha"), reader])

    @toolwire.tool
    def mention() -> str:
        """Say the word."""
        return "here is a page"

    host.add_tool(mention)
    script = [tool_call("alpha", {}), tool_call("mention", {}), tool_call("alpha", {}), "ok"]
    loop, model = scripted_loop(host, script)
    run = await loop.run("go")
    assert asked == [1, 2, 3, 4]
    offered = [names_of(r.functions) for r in model.requests]
    assert offered == [
        ["alpha", "mention"],
        ["alpha", "mention"],
        ["alpha", "mention", "reader"],
        ["alpha", "mention", "reader"],
    ]
    # While the context tool answers the same, the offer object is kept.
    assert model.requests[0].functions is model.requests[1].functions
    assert model.requests[2].functions is model.requests[3].functions
    assert len(events_of(run, "tool_omitted")) == 2


async def test_a_plugin_resolver_is_asked_every_round(tmp_path: Path) -> None:
    asked: list[tuple[str, int]] = []

    def resolve(tool: Tool, request: OfferRequest) -> Any:
        asked.append((tool.name, request.round))
        return None

    host = make_host(
        tmp_path,
        [plain_tool("alpha")],
        plugins=[plugin("picky", toolwire_resolve_function=resolve)],
    )
    loop, _ = scripted_loop(host, [tool_call("alpha", {}), tool_call("alpha", {}), "ok"])
    await loop.run("go")
    assert asked == [("alpha", 1), ("alpha", 2), ("alpha", 3)]


async def test_selection_and_system_prompt_of_each_run_are_their_own(tmp_path: Path) -> None:
    shouting = Tool.from_schema(
        name="shout",
        description="Shout.",
        parameters={"type": "object", "properties": {}},
        handler=lambda arguments: "!",
        instructions="Shout only when asked.",
    )
    host = make_host(tmp_path, [plain_tool("alpha"), shouting])
    loop, model = scripted_loop(host, ["a", "b", "c", "d"])
    await loop.run("go", system_prompt="Be brief.")
    await loop.run("go", system_prompt="Be kind.")
    await loop.run("go", tools=["alpha"], system_prompt="Be kind.")
    await loop.run("go", system_prompt="Be brief.")
    prompts = [r.messages[0].content for r in model.requests]
    assert prompts == [
        "Be brief.\n\nShout only when asked.",
        "Be kind.\n\nShout only when asked.",
        "Be kind.",
        "Be brief.\n\nShout only when asked.",
    ]
    assert [names_of(r.functions) for r in model.requests] == [
        ["alpha", "shout"],
        ["alpha", "shout"],
        ["alpha"],
        ["alpha", "shout"],
    ]


async def test_a_provider_of_another_trust_gets_its_own_offer(tmp_path: Path) -> None:
    vault = plain_tool("vault", min_provider_trust="high")
    for trust, expected in (("high", ["alpha", "vault"]), ("low", ["alpha"])):
        host = make_host(
            tmp_path / trust,
            [plain_tool("alpha"), vault],
            provider=ProviderConfig(trust=trust),
        )
        loop, model = scripted_loop(host, ["ok"])
        await loop.run("go")
        assert names_of(model.requests[0].functions) == expected


async def test_context_tools_of_one_plugin_are_each_asked_about_the_round(tmp_path: Path) -> None:
    asked: list[tuple[str, int, int]] = []

    def resolve(tool: Tool, request: OfferRequest) -> FunctionSpec:
        asked.append((tool.name, request.round, len(request.messages)))
        return tool.function_spec()

    one = plain_tool("one", activation="context", resolver=resolve)
    two = plain_tool("two", activation="context", resolver=resolve)
    host = make_host(tmp_path, [one, two])
    loop, model = scripted_loop(host, [tool_call("one", {}), "ok"])
    await loop.run("go")
    assert asked == [("one", 1, 1), ("two", 1, 1), ("one", 2, 3), ("two", 2, 3)]
    assert [names_of(r.functions) for r in model.requests] == [["one", "two"], ["one", "two"]]
