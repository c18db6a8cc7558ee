"""Adapters keep their rendering of the offer across rounds, and render again when it changes."""

from __future__ import annotations

from typing import Any

import pytest

import toolwire
import toolwire_anthropic._plugin
import toolwire_gemini._plugin
import toolwire_openai._plugin
from toolwire import Config, FunctionSpec, Host, Tool
from toolwire.adapters import RenderedTools, ToolNames, wire_request
from toolwire.config import LedgerConfig, ProviderConfig
from toolwire.testing import FakeAnthropicServer, FakeOpenAIChatServer, tool_call
from toolwire_gemini.testing import FakeGeminiServer

# Each server with the name its API receives for the tool `late.tool` (Gemini takes dots).
SERVERS: list[tuple[Any, str, Any, str]] = [
    (FakeOpenAIChatServer, "openai-chat", toolwire_openai._plugin, "late_tool"),
    (FakeAnthropicServer, "anthropic-messages", toolwire_anthropic._plugin, "late_tool"),
    (FakeGeminiServer, "gemini", toolwire_gemini._plugin, "late.tool"),
]


def _tool(name: str) -> Tool:
    return Tool.from_schema(
        name=name,
        description=f"The {name} tool.",
        parameters={"type": "object", "properties": {}},
        handler=lambda arguments: f"{name} done",
    )


def _tool_names(body: Any) -> list[str]:
    tools = body.get("tools", ())
    if tools and "functionDeclarations" in tools[0]:
        return [f["name"] for f in tools[0]["functionDeclarations"]]
    return [t["name"] if "name" in t else t["function"]["name"] for t in tools]


def test_the_same_functions_give_the_same_rendering_and_new_ones_a_new_one() -> None:
    rendered: list[list[str]] = []

    def render(functions: Any) -> list[dict[str, Any]]:
        rendered.append([f.name for f in functions])
        return [{"name": f.name} for f in functions]

    cache = RenderedTools(render)
    first = (_tool("alpha").function_spec(), _tool("math.sqrt").function_spec())
    wire = cache.get(first)
    assert cache.get(first) is wire
    assert cache.get(tuple(first)) is wire  # the same specs in another tuple
    assert wire.tools == [{"name": "alpha"}, {"name": "math_sqrt"}]
    assert wire.names.wire("math.sqrt") == "math_sqrt"
    other = (first[0], _tool("beta").function_spec())
    assert cache.get(other).tools == [{"name": "alpha"}, {"name": "beta"}]
    assert rendered == [["alpha", "math_sqrt"], ["alpha", "beta"]]
    cache.clear()
    cache.get(other)
    assert len(rendered) == 3


def test_a_kept_name_map_is_copied_for_each_request() -> None:
    from toolwire.adapters import ModelRequest
    from toolwire.messages import AssistantMessage, ToolCall, UserMessage

    spec = FunctionSpec(
        name="math.sqrt", description="Root.", parameters={"type": "object", "properties": {}}
    )
    names = ToolNames(["math.sqrt"])
    history = (
        UserMessage("go"),
        AssistantMessage(parts=(ToolCall(id="c1", name="old.tool", arguments={}),)),
    )
    request = ModelRequest(run_id="r", round=2, messages=history, functions=(spec,))
    wired = wire_request(request, names=names)
    assert wired.functions[0].name == "math_sqrt"
    assert wired.tool_names is not None
    assert wired.tool_names.wire("old.tool") == "old_tool"
    assert names.aliases == {"math.sqrt": "math_sqrt"}  # the kept map did not grow
    fresh = wire_request(request)
    assert fresh.tool_names is not None
    assert wired.tool_names.aliases == fresh.tool_names.aliases


@pytest.mark.parametrize(("server_class", "api", "plugin", "late_name"), SERVERS)
async def test_a_run_renders_the_offer_again_only_when_it_changes(
    server_class: Any, api: str, plugin: Any, late_name: str
) -> None:
    late = _tool("late.tool")
    script = [
        tool_call("alpha", {}),
        tool_call("install", {}),
        tool_call(late_name, {}),
        "done",
    ]
    async with server_class(script) as server:
        provider = ProviderConfig(adapter=api, base_url=server.base_url, model="m", max_retries=1)
        config = Config(provider=provider, ledger=LedgerConfig(enabled=False))
        host = Host.load(config, plugins=[plugin])

        @toolwire.tool
        def install() -> str:
            """Register the late tool."""
            host.add_tool(late)
            return "installed"

        host.add_tool(_tool("alpha"))
        host.add_tool(install)
        adapter = await host.get_adapter()
        adapter = getattr(adapter, "inner", adapter)  # under the fallback to prompted calls
        renders: list[int] = []
        original = adapter._tools._render  # type: ignore[attr-defined]

        def counting(functions: Any) -> list[dict[str, Any]]:
            renders.append(len(functions))
            result: list[dict[str, Any]] = original(functions)
            return result

        adapter._tools._render = counting  # type: ignore[attr-defined]
        try:
            run = await host.run("go")
        finally:
            await host.aclose()
    assert run.stop_reason == "answered", run.detail
    bodies = server.bodies
    assert [_tool_names(b) for b in bodies] == [
        ["alpha", "install"],
        ["alpha", "install"],
        ["alpha", "install", late_name],
        ["alpha", "install", late_name],
    ]
    assert bodies[0]["tools"] == bodies[1]["tools"]
    assert renders == [2, 3]
    assert [r.tool for r in run.tool_calls] == ["alpha", "install", "late.tool"]
    assert [r.result.model_text() for r in run.tool_calls if r.result] == [
        "alpha done",
        "installed",
        "late.tool done",
    ]
