"""Recognising provider answers that say a model or host cannot take tools."""

from __future__ import annotations

import re
from typing import Final

from ._base import ProviderError, ToolsNotSupportedError

__all__ = ["TOOLS_UNSUPPORTED_STATUSES", "is_tools_unsupported_message", "tools_not_supported"]

TOOLS_UNSUPPORTED_STATUSES: Final = frozenset({400, 404, 422, 500, 501})
"""Statuses that hosts use when they refuse a request because it carries tools."""

# What real OpenAI-compatible hosts say when a request carries tools they cannot handle:
# Ollama "registry.ollama.ai/library/gemma:2b does not support tools" (400); llama.cpp server
# "tools param requires --jinja flag" and "Unsupported param: tools" (500); vLLM '"auto" tool
# choice requires --enable-auto-tool-choice and --tool-call-parser to be set' (400); OpenRouter
# "No endpoints found that support tool use" (404); and the wordings of other hosts and proxies.
_PATTERNS: Final = re.compile(
    r"does(?: not|n't) support (?:tools|tool use|tool calling|tool calls|function calling"
    r"|functions)"
    r"|(?:tools|tool use|tool calling|tool calls|function calling|functions?) (?:is |are )?"
    r"(?:not|un)(?: |-)?(?:supported|available|enabled)"
    r"|unsupported param(?:eter)?:? ['\"`]?tools"
    r"|tools param requires --jinja"
    r"|tool choice requires --enable-auto-tool-choice"
    r"|no endpoints found that support tool use"
    r"|model does not support function",
    re.IGNORECASE,
)


def is_tools_unsupported_message(message: str | None) -> bool:
    """True when a provider's error message says the model or host cannot take tools."""
    return bool(message) and _PATTERNS.search(message or "") is not None


def tools_not_supported(error: ProviderError) -> ToolsNotSupportedError | None:
    """The :class:`ToolsNotSupportedError` an error amounts to, or None when it is another error.

    Used by adapters on errors of requests that offered tools; the host then falls back to
    prompted tool calling for that provider.
    """
    if error.status not in TOOLS_UNSUPPORTED_STATUSES:
        return None
    if not is_tools_unsupported_message(error.provider_message or str(error)):
        return None
    return ToolsNotSupportedError(
        f"{error} (the model or host does not accept native tools; set provider.native_tools = "
        "false to use prompted tool calling)",
        api=error.api,
        status=error.status,
        provider_message=error.provider_message,
    )
