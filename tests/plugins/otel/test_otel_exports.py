"""The public surface of toolwire_otel, and the plugin's entry point."""

from __future__ import annotations

from importlib.metadata import entry_points

import toolwire_otel


def test_exported_names_are_exactly_the_intended_ones() -> None:
    assert toolwire_otel.__all__ == ["OtelConfigError", "OtelSettings"]
    assert sorted(toolwire_otel.__all__) == toolwire_otel.__all__


def test_the_plugin_is_discovered_as_otel() -> None:
    (point,) = [ep for ep in entry_points(group="toolwire.plugins") if ep.name == "otel"]
    assert point.value == "toolwire_otel._plugin"
