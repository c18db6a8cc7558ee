"""The tool model: tools from typed functions, validation and refusals, results.

Declaring tools is cheap: fastjsonschema and cattrs are imported and validators compiled only when
a tool is first validated or called.
"""

from ._context import Inject, Injected, ToolContext
from ._errors import ArgumentsInvalid, ToolDefinitionError
from ._lint import LintFinding, lint_tool
from ._model import Activation, Resolver, SideEffect, Tool, ToolPolicy, tool
from ._names import provider_name_problems, tool_name_problems, validate_tool_name
from ._paging import Page, PageNumber, Paging
from ._result import Source, ToolBlocked, ToolResult, ToolStatus
from ._spec import FunctionSpec
from ._strict import StrictProjection, strict_projection
from ._toolbox import Toolbox
from ._truncate import truncate_result
from ._validation import describe_schema

__all__ = [
    "Activation",
    "ArgumentsInvalid",
    "FunctionSpec",
    "Inject",
    "Injected",
    "LintFinding",
    "Page",
    "PageNumber",
    "Paging",
    "Resolver",
    "SideEffect",
    "Source",
    "StrictProjection",
    "Tool",
    "ToolBlocked",
    "ToolContext",
    "ToolDefinitionError",
    "ToolPolicy",
    "ToolResult",
    "ToolStatus",
    "Toolbox",
    "describe_schema",
    "lint_tool",
    "provider_name_problems",
    "strict_projection",
    "tool",
    "tool_name_problems",
    "truncate_result",
    "validate_tool_name",
]
