"""Offline tools for toolwire: a safe calculator, the time in any zone, and unit conversion."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._calculator import CalculationError, evaluate
    from ._settings import BasicsSettings
    from ._tools import calculator, convert_time, convert_units, current_time
    from ._units import UnitError

# Names are imported on first use: enabling the plugin imports only `_plugin` and its settings.
_LAZY = {
    "BasicsSettings": "._settings",
    "CalculationError": "._calculator",
    "UnitError": "._units",
    "calculator": "._tools",
    "convert_time": "._tools",
    "convert_units": "._tools",
    "current_time": "._tools",
    "evaluate": "._calculator",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'toolwire_basics' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "BasicsSettings",
    "CalculationError",
    "UnitError",
    "calculator",
    "convert_time",
    "convert_units",
    "current_time",
    "evaluate",
]
