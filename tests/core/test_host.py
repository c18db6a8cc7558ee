"""The Host: plugin registration and isolation, tool registry, settings, events — in one process."""

from __future__ import annotations

import types
from typing import Annotated, Any

import attrs
import pytest

import toolwire
from toolwire import Config, ConfigError, Host
from toolwire.config import config_from_dict


@toolwire.tool
def echo(text: Annotated[str, "The text to give back."]) -> str:
    """Give the text back."""
    return text


def _plugin(name: str, **hooks: Any) -> types.SimpleNamespace:
    for hook in hooks.values():
        toolwire.hookimpl(hook)
    return types.SimpleNamespace(__name__=name, **hooks)


def test_two_hosts_live_in_one_process():
    first = Host.load(Config(), plugins=[_plugin("a", toolwire_tools=lambda settings: [echo])])
    second = Host.load(Config())
    assert list(first.tools) == ["echo"]
    assert list(second.tools) == []
    assert first.plugin_manager is not second.plugin_manager


def test_registered_tool_knows_its_plugin():
    host = Host.load(Config(), plugins=[_plugin("mine", toolwire_tools=lambda settings: [echo])])
    assert host.tools["echo"].plugin == "mine"
    assert host.plugin_info("mine").hooks == ["toolwire_tools"]


def test_raising_tools_hook_costs_only_its_plugin():
    def boom(settings: Any) -> list[toolwire.Tool]:
        raise RuntimeError("cannot build tools")

    seen: list[Any] = []
    host = Host.load(
        Config(),
        plugins=[
            _plugin("bad", toolwire_tools=boom),
            _plugin("good", toolwire_tools=lambda settings: [echo]),
            _plugin("watch", toolwire_event=lambda event: seen.append(event)),
        ],
    )
    assert list(host.tools) == ["echo"]
    info = host.plugin_info("bad")
    assert info is not None
    assert "RuntimeError: cannot build tools" in (info.error or "")
    assert [e.plugin for e in seen if e.kind == "plugin_failed"] == ["bad"]


def test_duplicate_tool_name_names_both_plugins():
    host = Host.load(
        Config(),
        plugins=[
            _plugin("first", toolwire_tools=lambda settings: [echo]),
            _plugin("second", toolwire_tools=lambda settings: [echo]),
        ],
    )
    assert host.tools["echo"].plugin == "first"
    error = host.plugin_info("second").error or ""
    assert "'echo' is registered by two plugins" in error
    assert "first" in error
    assert "second" in error


def test_a_non_tool_is_refused_alone():
    host = Host.load(Config(), plugins=[_plugin("odd", toolwire_tools=lambda settings: [echo, 3])])
    assert list(host.tools) == ["echo"]
    assert "which is not a toolwire.Tool" in (host.plugin_info("odd").error or "")


def test_unknown_hook_is_refused_naming_the_known_ones():
    host = Host.load(Config(), plugins=[_plugin("typo", toolwire_tool=lambda settings: [echo])])
    info = host.plugin_info("typo")
    assert info is not None
    assert not info.loaded
    assert "unknown hook(s) toolwire_tool" in (info.error or "")
    assert "toolwire_tools" in (info.error or "")
    assert list(host.tools) == []


def test_raising_observer_is_reported_once_and_never_stops_the_host():
    calls: list[str] = []

    def bad_observer(event: Any) -> None:
        calls.append(event.kind)
        raise ValueError("observer broke")

    seen: list[Any] = []
    host = Host.load(
        Config(),
        plugins=[
            _plugin("bad", toolwire_event=bad_observer),
            _plugin("ok", toolwire_event=lambda event: seen.append(event)),
        ],
    )
    from toolwire.events import RoundStarted

    host.emit(RoundStarted(run_id="r", round=1))
    host.emit(RoundStarted(run_id="r", round=2))
    assert calls.count("round_started") == 2
    assert [e.kind for e in seen].count("plugin_failed") == 1


@attrs.frozen
class EchoSettings:
    prefix: str = ""
    times: int = 1


def test_plugin_settings_are_typed_and_errors_name_the_key():
    def settings_class(plugin_name: str) -> type | None:
        return EchoSettings if plugin_name == "echoer" else None

    received: list[Any] = []

    def tools(settings: Any) -> list[toolwire.Tool]:
        received.append(settings)
        return [echo]

    plugin = _plugin("echoer", toolwire_tools=tools, toolwire_settings_class=settings_class)
    good = config_from_dict({"tools": {"echoer": {"prefix": "> ", "times": 2}}}, file="t.toml")
    host = Host.load(good, plugins=[plugin])
    assert list(host.tools) == ["echo"]
    assert received == [EchoSettings(prefix="> ", times=2)]

    # A section that does not fit is a config error at load, not a plugin that loses its tools.
    bad = config_from_dict({"tools": {"echoer": {"times": "two", "prefx": "> "}}}, file="t.toml")
    with pytest.raises(ConfigError) as caught:
        Host.load(bad, plugins=[plugin])
    message = str(caught.value)
    assert "t.toml: $.tools.echoer.times = 'two': wrong type (str); expected an integer" in message
    assert "$.tools.echoer.prefx: unknown key 'prefx'; valid keys here: prefix, times" in message
    assert caught.value.path == "$.tools.echoer.times"


def test_enabling_a_plugin_that_is_not_installed():
    config = config_from_dict({"plugins": {"enable": ["nope-not-here"]}}, file="t.toml")
    with pytest.raises(
        ConfigError, match=r"\$\.plugins\.enable\[0\] = 'nope-not-here': no installed"
    ):
        Host.load(config)


def test_adding_and_removing_tools():
    host = Host.load(Config())

    @toolwire.tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    host.add_tool(ping, plugin="embedder")
    assert host.tools["ping"].plugin == "embedder"
    with pytest.raises(toolwire.tools.ToolDefinitionError, match="already registered"):
        host.add_tool(ping)
    host.remove_tool("ping")
    assert "ping" not in host.tools


def test_unknown_adapter_names_the_registered_ones():
    host = Host.load(Config(provider=attrs.evolve(Config().provider, adapter="martian")))
    with pytest.raises(toolwire.HostError, match="no provider adapter named 'martian'"):
        host.create_adapter()


async def test_closers_run_latest_first_and_a_failing_one_does_not_stop_the_rest():
    seen: list[Any] = []
    host = Host.load(
        Config(), plugins=[_plugin("watch", toolwire_event=lambda event: seen.append(event))]
    )
    order: list[str] = []

    async def first() -> None:
        order.append("first")

    async def broken() -> None:
        raise OSError("socket already gone")

    async def last() -> None:
        order.append("last")

    host.stash["session"] = object()
    host.on_close(first)
    host.on_close(broken)
    host.on_close(last)
    await host.aclose()
    assert order == ["last", "first"]
    assert host.stash == {}
    [failure] = [e for e in seen if e.kind == "plugin_failed"]
    assert failure.hook == "on_close"
    assert "socket already gone" in failure.error
    await host.aclose()  # closing twice runs nothing again
    assert order == ["last", "first"]


def test_configure_hook_lets_a_plugin_register_per_host_observers():
    class Counter:
        def __init__(self, host: Host) -> None:
            self.host = host
            self.kinds: list[str] = []

        @toolwire.hookimpl
        def toolwire_event(self, event: Any) -> None:
            self.kinds.append(event.kind)

    counters: list[Counter] = []

    def configure(host: Host) -> None:
        counter = Counter(host)
        counters.append(counter)
        host.plugin_manager.register(counter, name="counter")

    def broken(host: Host) -> None:
        raise RuntimeError("no exporter today")

    plugins = [
        _plugin("counting", toolwire_configure=configure),
        _plugin("bad", toolwire_configure=broken),
    ]
    first = Host.load(Config(), plugins=plugins)
    second = Host.load(Config(), plugins=plugins)
    from toolwire.events import RoundStarted

    first.emit(RoundStarted(run_id="r", round=1))
    assert [c.host for c in counters] == [first, second]
    # The failure of "bad" was reported to the observer registered by "counting", and only the
    # first host's observer saw the first host's event.
    assert counters[0].kinds == ["plugin_failed", "round_started"]
    assert counters[1].kinds == ["plugin_failed"]
    info = first.plugin_info("bad")
    assert info is not None
    assert "toolwire_configure: RuntimeError: no exporter today" in (info.error or "")
