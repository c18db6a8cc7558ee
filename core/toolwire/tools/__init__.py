"""The tool model: tools from typed functions, validation and refusals, results.

Declaring tools is cheap: fastjsonschema and cattrs are imported and validators compiled only when
a tool is first validated or called.
"""

from typing import TYPE_CHECKING

from .._effects import SideEffect
from .._lazy import lazy_getattr
from ._context import Inject, Injected, ToolContext
from ._errors import (
    AdjustArguments,
    ApprovalRequired,
    ArgumentsInvalid,
    CallDeferred,
    CallInterrupt,
    Retry,
    ToolDefinitionError,
    ToolFatal,
)
from ._model import (
    Activation,
    Resolver,
    Tool,
    ToolOptions,
    ToolPolicy,
    run_in_thread,
    schema_for,
    tool,
)
from ._names import tool_name_problems
from ._result import Source, ToolBlocked, ToolResult, ToolStatus
from ._spec import FunctionSpec

if TYPE_CHECKING:
    from ._cache import cached_resolver
    from ._lint import LintFinding, lint_tool
    from ._normalize import normalize_schema
    from ._page_number import PageNumber
    from ._paging import Page, Paging
    from ._patterns import LinearPattern, PatternError, linear_pattern
    from ._strict import StrictProjection, strict_projection
    from ._toolbox import Toolbox
    from ._truncate import truncate_result
    from ._validation import json_type_of

# Used when a tool is linted, paged, projected, cut, cached, normalised or written as a toolbox,
# not when a function is declared: loaded on first use, so `toolwire plugins` and `toolwire tools
# list` do not build them.
_LAZY = {
    "Toolbox": "._toolbox",
    "cached_resolver": "._cache",
    "normalize_schema": "._normalize",
    "LintFinding": "._lint",
    "lint_tool": "._lint",
    "Page": "._paging",
    "PageNumber": "._page_number",
    "Paging": "._paging",
    "LinearPattern": "._patterns",
    "PatternError": "._patterns",
    "linear_pattern": "._patterns",
    "StrictProjection": "._strict",
    "strict_projection": "._strict",
    "truncate_result": "._truncate",
    "json_type_of": "._validation",
}


__getattr__ = lazy_getattr(globals(), _LAZY)


__all__ = [
    "Activation",
    "AdjustArguments",
    "ApprovalRequired",
    "ArgumentsInvalid",
    "CallDeferred",
    "CallInterrupt",
    "FunctionSpec",
    "Inject",
    "Injected",
    "LinearPattern",
    "LintFinding",
    "Page",
    "PageNumber",
    "Paging",
    "PatternError",
    "Resolver",
    "Retry",
    "SideEffect",
    "Source",
    "StrictProjection",
    "Tool",
    "ToolBlocked",
    "ToolContext",
    "ToolDefinitionError",
    "ToolFatal",
    "ToolOptions",
    "ToolPolicy",
    "ToolResult",
    "ToolStatus",
    "Toolbox",
    "cached_resolver",
    "json_type_of",
    "linear_pattern",
    "lint_tool",
    "normalize_schema",
    "run_in_thread",
    "schema_for",
    "strict_projection",
    "tool",
    "tool_name_problems",
    "truncate_result",
]
