"""The ``basics`` plugin: discovery through its entry point, and what each tool declares."""

from __future__ import annotations

import importlib.metadata

import toolwire_basics._plugin as plugin
from toolwire import Config, Host, SideEffect, Tool

NAMES = ["calculator", "convert_time", "convert_units", "current_time"]


def test_entry_point_names_the_plugin_module() -> None:
    points = importlib.metadata.entry_points(group="toolwire.plugins")
    (point,) = [p for p in points if p.name == "basics"]
    assert point.value == "toolwire_basics._plugin"
    assert point.dist is not None
    assert point.dist.name == "toolwire-basics"


def test_host_registers_the_tools_when_enabled() -> None:
    host = Host.load(Config().with_enabled(("basics",)))
    assert sorted(host.tools) == NAMES
    assert {t.plugin for t in host.tools.values()} == {"basics"}


def test_host_registers_the_plugin_module_directly() -> None:
    host = Host.load(Config(), plugins=[plugin])
    assert sorted(host.tools) == NAMES


def test_every_tool_is_read_only_idempotent_and_fully_described() -> None:
    tools: list[Tool] = plugin.toolwire_tools(settings=None)
    for tool in tools:
        assert tool.policy.side_effects == frozenset({SideEffect.READ_ONLY}), tool.name
        assert tool.policy.idempotent, tool.name
        assert tool.description, tool.name
        properties = tool.parameters["properties"]
        assert properties, tool.name
        for name, schema in properties.items():
            assert len(schema.get("description", "")) > 20, (tool.name, name)
        assert tool.parameters.get("additionalProperties") is False
