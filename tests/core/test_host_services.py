"""Services for tools: given to Host.load or provided by plugins, injected by name or type,
created once per host, closed with it, never shown to the model, missing ones refused."""

from __future__ import annotations

import types
from typing import Annotated, Any

import pytest

import toolwire
from toolwire import Config, Host, Injected
from toolwire.config import config_from_dict
from toolwire.loop import ToolCallingLoop
from toolwire.messages import ToolResultMessage
from toolwire.testing import ScriptedModel, tool_call
from toolwire.tools import Inject, ToolDefinitionError


class Store:
    """A service that records how it is closed."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    def close(self) -> None:
        self.log.append(f"close {self.name}")


class Client:
    """A service closed asynchronously."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def aclose(self) -> None:
        self.log.append("aclose client")


@toolwire.tool
def remember(text: Annotated[str, "What to remember."], store: Injected[Store]) -> str:
    """Keep a text in the store."""
    store.log.append(f"{store.name} keeps {text}")
    return f"kept by {store.name}"


@toolwire.tool
def fetch(url: Annotated[str, "Where."], web: Annotated[Client, Inject("http")]) -> str:
    """Fetch through the host's client."""
    web.log.append(f"fetch {url}")
    return "fetched"


def _plugin(name: str, **hooks: Any) -> types.SimpleNamespace:
    for hook in hooks.values():
        toolwire.hookimpl(hook)
    return types.SimpleNamespace(__name__=name, **hooks)


async def _run(host: Host, *calls: Any) -> Any:
    model = ScriptedModel(script=[list(calls), "done"])
    return await ToolCallingLoop(host, adapter=model).run("go"), model


async def test_a_service_given_to_load_reaches_the_tool_by_type_and_never_the_model():
    log: list[str] = []
    store = Store("given", log)
    host = Host.load(
        Config(),
        plugins=[_plugin("t", toolwire_tools=lambda settings: [remember])],
        services={"archive": store},
    )
    run, model = await _run(host, tool_call("remember", {"text": "milk", "store": "forged"}))
    results = [m.result.model_text() for m in run.messages if isinstance(m, ToolResultMessage)]
    assert results == ["kept by given"]
    assert log == ["given keeps milk"]
    offered = model.requests[0].functions[0].parameters
    assert "store" not in offered["properties"]
    await host.aclose()
    assert log[-1] == "close given"


async def test_plugin_services_are_built_from_settings_once_and_closed_with_the_host():
    log: list[str] = []
    built: list[Any] = []

    def services(settings: Any) -> dict[str, Any]:
        built.append(settings)
        return {"http": Client(log), "store": Store(settings["label"], log)}

    config = config_from_dict({"tools": {"svc": {"label": "from-settings"}}})
    host = Host.load(
        config,
        plugins=[
            _plugin("svc", toolwire_services=services),
            _plugin("t", toolwire_tools=lambda settings: [remember, fetch]),
        ],
    )
    assert list(host.tools) == ["fetch", "remember"]
    run, _ = await _run(
        host, tool_call("fetch", {"url": "http://x"}), tool_call("remember", {"text": "a"})
    )
    assert run.stop_reason == "answered"
    await _run(host, tool_call("remember", {"text": "b"}))
    assert len(built) == 1
    assert log == ["fetch http://x", "from-settings keeps a", "from-settings keeps b"]
    await host.aclose()
    assert log[-2:] == ["close from-settings", "aclose client"]


def test_a_missing_service_refuses_the_tool_naming_tool_and_service():
    seen: list[Any] = []
    host = Host.load(
        Config(),
        plugins=[
            _plugin("t", toolwire_tools=lambda settings: [remember, fetch]),
            _plugin("watch", toolwire_event=lambda event: seen.append(event)),
        ],
        services={"store": Store("s", [])},
    )
    assert list(host.tools) == ["remember"]
    failures = [e.error for e in seen if e.kind == "plugin_failed"]
    assert len(failures) == 1
    assert "tool fetch needs the service 'http' (parameter web: Client)" in failures[0]
    assert "store" in failures[0]
    with pytest.raises(ToolDefinitionError, match=r"tool fetch needs the service 'http'"):
        host.add_tool(fetch)


def test_two_services_of_the_asked_type_must_be_chosen_by_name():
    host = Host.load(Config(), services={"a": Store("a", []), "b": Store("b", [])})
    with pytest.raises(ToolDefinitionError, match=r"several host services are Store \(a, b\)"):
        host.add_tool(remember)
    named = Host.load(Config(), services={"store": Store("a", []), "b": Store("b", [])})
    named.add_tool(remember)
    assert "remember" in named.tools


def test_a_service_two_plugins_provide_stays_with_the_first_and_the_given_one_wins():
    seen: list[Any] = []
    first, second, given = Store("first", []), Store("second", []), Store("given", [])
    host = Host.load(
        Config(),
        plugins=[
            _plugin("p1", toolwire_services=lambda settings: {"store": first, "x": 1}),
            _plugin("p2", toolwire_services=lambda settings: {"store": second, "x": 2}),
            _plugin("watch", toolwire_event=lambda event: seen.append(event)),
        ],
        services={"store": given},
    )
    assert host.services["store"] is given
    assert host.services["x"] == 1
    assert host.services["host"] is host
    errors = [e.error for e in seen if e.kind == "plugin_failed"]
    assert any("service 'x' is provided by two plugins" in e for e in errors)


async def test_a_failing_close_is_reported_and_the_others_still_close():
    log: list[str] = []

    class Broken:
        def close(self) -> None:
            raise OSError("disk gone")

    seen: list[Any] = []
    host = Host.load(
        Config(),
        plugins=[_plugin("watch", toolwire_event=lambda event: seen.append(event))],
        services={"store": Store("s", log), "broken": Broken()},
    )
    assert set(host.services) >= {"store", "broken"}
    await host.aclose()
    assert log == ["close s"]
    assert any("closing service 'broken'" in e.error for e in seen if e.kind == "plugin_failed")


def test_a_services_hook_returning_no_mapping_costs_only_its_plugin():
    host = Host.load(
        Config(),
        plugins=[
            _plugin("bad", toolwire_services=lambda settings: ["not", "a", "mapping"]),
            _plugin("good", toolwire_services=lambda settings: {"store": Store("g", [])}),
        ],
    )
    assert host.services["store"].name == "g"
    info = host.plugin_info("bad")
    assert info is not None
    assert "not a mapping" in (info.error or "")


def test_a_builtin_type_goes_by_name_only():
    @toolwire.tool
    def greet(text: Annotated[str, "Who."], greeting: Injected[str]) -> str:
        """Greet."""
        return f"{greeting} {text}"

    host = Host.load(Config(), services={"salutation": "hello"})
    with pytest.raises(ToolDefinitionError, match=r"needs the service 'greeting'"):
        host.add_tool(greet)
    named = Host.load(Config(), services={"greeting": "hello"})
    named.add_tool(greet)
    assert "greeting" not in named.tools["greet"].parameters["properties"]


def test_services_are_built_only_when_a_tool_or_run_needs_them():
    built: list[Any] = []

    @toolwire.tool
    def plain(text: Annotated[str, "Any text."]) -> str:
        """Echo."""
        return text

    def services(settings: Any) -> dict[str, Any]:
        built.append(settings)
        return {"store": Store("lazy", [])}

    host = Host.load(
        Config(),
        plugins=[
            _plugin("svc", toolwire_services=services),
            _plugin("t", toolwire_tools=lambda settings: [plain]),
        ],
    )
    assert list(host.tools) == ["plain"]
    assert built == []
    host.add_tool(remember)
    assert len(built) == 1
