"""toolwire-gemini: Google's Gemini API adapter for toolwire (``gemini``).

It speaks ``generateContent`` and ``streamGenerateContent`` over HTTP through the host's
transport (no vendor SDK), using only toolwire's public adapter API.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._adapter import GeminiAdapter
    from ._plugin import GeminiSettings
    from ._schema import GeminiSchema, SchemaVerdict, project_schema
    from ._wire import (
        GEMINI_NAME,
        GenerateStream,
        declaration,
        gemini_spelling,
        parse_response,
        render_contents,
        render_request,
        render_tools,
    )

# Names are imported on first use: enabling the plugin imports only `_plugin`, and the adapter
# loads when a provider asks for it.
_LAZY = {
    "GEMINI_NAME": "_wire",
    "GeminiAdapter": "_adapter",
    "GeminiSchema": "_schema",
    "GeminiSettings": "_plugin",
    "GenerateStream": "_wire",
    "SchemaVerdict": "_schema",
    "declaration": "_wire",
    "gemini_spelling": "_wire",
    "parse_response": "_wire",
    "project_schema": "_schema",
    "render_contents": "_wire",
    "render_request": "_wire",
    "render_tools": "_wire",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolwire_gemini' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "GEMINI_NAME",
    "GeminiAdapter",
    "GeminiSchema",
    "GeminiSettings",
    "GenerateStream",
    "SchemaVerdict",
    "declaration",
    "gemini_spelling",
    "parse_response",
    "project_schema",
    "render_contents",
    "render_request",
    "render_tools",
]
