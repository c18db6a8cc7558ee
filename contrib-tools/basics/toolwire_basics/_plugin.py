"""The ``basics`` plugin: registers the offline tools with the host.

The tools are built when the host first asks for them (``toolwire_tools``), not when the plugin
is enabled: ``toolwire plugins`` never pays for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import toolwire

from ._settings import BasicsSettings

if TYPE_CHECKING:
    from toolwire import Tool


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[tools.basics]`` is structured into :class:`BasicsSettings`."""
    return BasicsSettings if plugin_name == "basics" else None


@toolwire.hookimpl
def toolwire_tools(settings: Any) -> list[Tool]:
    """The calculator, current time, time-zone conversion and unit conversion tools."""
    from ._tools import calculator, convert_time, convert_units, current_time

    return [calculator, current_time, convert_time, convert_units]
