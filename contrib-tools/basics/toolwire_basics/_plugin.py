"""The ``basics`` plugin: registers the offline tools with the host."""

from __future__ import annotations

from typing import Any

import toolwire
from toolwire import Tool

from ._relevance import BasicsSettings
from ._tools import calculator, convert_time, convert_units, current_time


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[tools.basics]`` is structured into :class:`BasicsSettings`."""
    return BasicsSettings if plugin_name == "basics" else None


@toolwire.hookimpl
def toolwire_tools(settings: Any) -> list[Tool]:
    """The calculator, current time, time-zone conversion and unit conversion tools."""
    return [calculator, current_time, convert_time, convert_units]
