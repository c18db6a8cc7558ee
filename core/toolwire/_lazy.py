"""``lazy_getattr``: the module ``__getattr__`` (PEP 562) of a facade whose names load on use.

A facade lists each name with the module that defines it; the first use imports that module and
keeps the name in the facade, so later uses do not come back here. Importing the facade costs
none of those modules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(namespace: dict[str, Any], names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports each of ``names`` from its module on first use.

    :param namespace: the facade's ``globals()``: a loaded name is kept there, and relative module
        names are resolved against its ``__name__``.
    :param names: for each lazy name, the module that defines it, absolute (``"toolwire.tools"``)
        or relative to the facade (``"._toolbox"``).

    **Example**::

        __getattr__ = lazy_getattr(globals(), {"Toolbox": "._toolbox"})
    """
    facade = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module_name = names.get(name)
        if module_name is None:
            raise AttributeError(f"module {facade!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module_name, facade), name)
        namespace[name] = value
        return value

    return __getattr__
