"""Prompted tool calling: tools through the system prompt for models without a native tool channel.

Five dialects are rendered from the same ``FunctionSpec`` as the native path: ``json``
(``<tool_call>{"name": …, "arguments": {…}}</tool_call>``), ``xml``
(``<name><arg>value</arg></name>``), ``ptype`` (``name("a", 5)``), ``python``
(``name('a', 5, flag=True)``) and ``typescript`` (``name("a", undefined, true)``).
:class:`ToolDialects` gives single tools a dialect of their own. :class:`PromptedAdapter` wraps
an adapter of a model without tool calling; the host chooses, per provider, between native,
prompted and native-with-fallback (``[provider] native_tools``).
"""

from ._adapter import PromptedAdapter
from ._catalogue import render_prompted_tools, with_tool_instructions
from ._dialect import DIALECTS, Dialect, ToolDialects
from ._history import (
    coalesce_tool_results,
    ensure_resolvable_user_turn,
    escape_result_body,
    render_tool_results,
)
from ._recover import RecoveredCalls, RecoveredForm, recover_text_calls
from ._scanner import ParsedTurn, parse_tool_calls

__all__ = [
    "DIALECTS",
    "Dialect",
    "ParsedTurn",
    "PromptedAdapter",
    "RecoveredCalls",
    "RecoveredForm",
    "ToolDialects",
    "coalesce_tool_results",
    "ensure_resolvable_user_turn",
    "escape_result_body",
    "parse_tool_calls",
    "recover_text_calls",
    "render_prompted_tools",
    "render_tool_results",
    "with_tool_instructions",
]
