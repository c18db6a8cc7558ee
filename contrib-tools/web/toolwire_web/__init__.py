"""Web tools for toolwire."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._confluence import search_confluence
    from ._read import read_web_page
    from ._search import web_search
    from ._settings import WebSettings

# Names are imported on first use: enabling the plugin imports only `_plugin` and its settings.
_LAZY = {
    "WebSettings": "._settings",
    "read_web_page": "._read",
    "search_confluence": "._confluence",
    "web_search": "._search",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'toolwire_web' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name, __name__), name)
    globals()[name] = value
    return value


__all__ = ["WebSettings", "read_web_page", "search_confluence", "web_search"]
