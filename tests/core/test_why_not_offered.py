"""Why a tool is not offered: ``Host.why_not_offered`` and ``toolwire tools why`` give the first
reason the offer itself would apply, in its order, and agree with what a run omits."""

from __future__ import annotations

import json
import types
from typing import Annotated, Any, ClassVar

import attrs
import pytest

import toolwire
from toolwire import Host
from toolwire.adapters import AdapterCapabilities
from toolwire.config import config_from_dict
from toolwire.loop import ToolCallingLoop
from toolwire.testing import ScriptedModel


def _make(name: str, **options: Any) -> toolwire.Tool:
    def body(text: Annotated[str, "Any text."]) -> str:
        return text

    body.__doc__ = f"The {name} tool."
    return toolwire.tool(name=name, **options)(body)


TOOLS = [
    _make("alpha"),
    _make("beta"),
    _make("gamma"),
    _make("delta", min_provider_trust="high"),
    _make("a_rather_long_tool_name"),
    _make("epsilon", activation="context", resolver=lambda tool, request: None),
]


class ShortNames(ScriptedModel):
    """The scripted model behind an API that takes names of at most 12 characters."""

    api: ClassVar[str] = "short-names"

    @property
    def capabilities(self) -> AdapterCapabilities:
        return attrs.evolve(super().capabilities, max_tool_name_length=12)


def _plugin(**hooks: Any) -> types.SimpleNamespace:
    for hook in hooks.values():
        toolwire.hookimpl(hook)
    return types.SimpleNamespace(__name__="whyplug", **hooks)


def _host(extra: dict[str, Any] | None = None) -> Host:
    data: dict[str, Any] = {
        "provider": {"adapter": "short-names", "trust": "medium"},
        "tools": {
            "enable": ["alpha", "beta", "delta", "a_rather_long_tool_name"],
            "deny": ["beta"],
            "profile": "narrow",
        },
        "profiles": {"narrow": {"allow": ["beta", "delta", "a_rather_long_tool_name", "epsilon"]}},
    }
    data.update(extra or {})
    plugin = _plugin(
        toolwire_tools=lambda settings: TOOLS,
        toolwire_provider_adapters=lambda settings: [ShortNames],
    )
    return Host.load(config_from_dict(data), plugins=[plugin])


def _tool_plugin_with(*tools: toolwire.Tool) -> types.SimpleNamespace:
    return _plugin(toolwire_tools=lambda settings: list(tools))


async def test_each_reason_in_the_offers_order():
    host = _host()
    try:
        reasons = {t: await host.why_not_offered(t) for t in host.tools}
    finally:
        await host.aclose()
    assert reasons["alpha"] == "it is not in the profile's allow list"
    # denied and outside the allow list: the deny list is checked first
    assert reasons["beta"] == "it is denied ([tools] deny, or the profile's deny list, names it)"
    # not enabled comes before everything else
    assert reasons["gamma"].startswith("it is not enabled")
    # trust before name length (delta is short; the long name is trusted enough)
    assert (
        reasons["delta"] == "it needs a provider trusted at least 'high'; the provider is 'medium'"
    )
    assert reasons["a_rather_long_tool_name"] == (
        "its name is 23 characters long; the short-names adapter accepts at most 12"
    )
    assert reasons["epsilon"] == (
        "nothing to offer for this request (toolwire_resolve_function returned None)"
    )


async def test_the_reasons_are_the_ones_a_run_omits_tools_for():
    host = _host()
    model = ShortNames(script=["done"])
    try:
        run = await ToolCallingLoop(host, adapter=model).run("go")
        omitted = {e.tool: e.reason for e in run.events if e.kind == "tool_omitted"}
        for name, reason in omitted.items():
            assert await host.why_not_offered(name) == reason
        # a tool a run leaves out before the per-round checks has no event, but a reason
        assert set(omitted) == {"delta", "a_rather_long_tool_name", "epsilon"}
    finally:
        await host.aclose()


async def test_an_offered_tool_has_no_reason_and_run_options_count():
    host = _host({"tools": {}, "profiles": {}})
    try:
        assert await host.why_not_offered("alpha") is None
        reason = await host.why_not_offered("alpha", tools=["beta"])
        assert reason is not None
        assert reason.startswith("it is not enabled")
        assert "no tool named 'zeta'" in (await host.why_not_offered("zeta") or "")
        with pytest.raises(ValueError, match="profile 'nope' is not defined"):
            await host.why_not_offered("alpha", profile="nope")
    finally:
        await host.aclose()


async def test_a_raising_resolver_is_the_reason():
    def broken(tool: Any, request: Any) -> Any:
        raise RuntimeError("index offline")

    tool = _make("lookup", activation="context", resolver=broken)
    host = Host.load(config_from_dict({}), plugins=[_tool_plugin_with(tool)])
    try:
        reason = await host.why_not_offered("lookup")
    finally:
        await host.aclose()
    assert reason is not None
    assert "RuntimeError: index offline" in reason


def _cli(tmp_path: Any, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    from toolwire.cli import main

    config = tmp_path / "toolwire.toml"
    config.write_text(
        '[provider]\nadapter = "scripted"\ntrust = "low"\n'
        '[tools]\ndeny = ["read_web_page"]\n'
        '[plugins]\nenable = ["web"]\n',
        encoding="utf-8",
    )
    code = main(["--config", str(config), *argv])
    return code, capsys.readouterr().out


def test_tools_why_and_the_list_column(tmp_path: Any, capsys: pytest.CaptureFixture[str]):
    code, text = _cli(tmp_path, capsys, "tools", "why", "read_web_page")
    assert code == 0
    assert text == (
        "read_web_page: it is denied ([tools] deny, or the profile's deny list, names it)\n"
    )
    code, text = _cli(tmp_path, capsys, "tools", "list", "--json")
    rows = {row["name"]: row for row in json.loads(text)}
    assert rows["read_web_page"]["offered"] is False
    assert rows["web_search"]["offered"] is True
    assert rows["web_search"]["not_offered"] is None
    code, text = _cli(tmp_path, capsys, "tools", "list")
    line = next(line for line in text.splitlines() if line.startswith("read_web_page"))
    assert "not offered" in line
    assert "(it is denied" in line
    code, text = _cli(tmp_path, capsys, "tools", "why", "no_such_tool", "--json")
    assert code == 1
    assert json.loads(text)["offered"] is False
