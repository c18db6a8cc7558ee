"""Offline tools for toolwire: a safe calculator, the time in any zone, and unit conversion."""

from ._calculator import CalculationError, evaluate
from ._relevance import BasicsSettings
from ._tools import calculator, convert_time, convert_units, current_time
from ._units import UnitError

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
