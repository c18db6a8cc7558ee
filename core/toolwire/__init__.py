"""toolwire: a plugin-based host for LLM tool calling.

The names here are the ones most code needs: running the host, writing tools, answering hooks.
A name that also has a public module of its own (:mod:`toolwire.tools`, :mod:`toolwire.loop`,
:mod:`toolwire.messages`, :mod:`toolwire.config`, …) is the same object there. docs/api.md lists
every public module and name; a module whose name starts with ``_`` is private.
"""

from typing import TYPE_CHECKING

from ._lazy import lazy_getattr
from ._markers import hookimpl
from ._version import __version__

if TYPE_CHECKING:
    from ._request import OfferRequest
    from ._surface import Surface
    from ._trust import TrustLevel
    from .cli._plugin_commands import CliCommand
    from .config import Config, ConfigError, load_config
    from .host._agent import agent_tool
    from .host._display import ToolDisplay
    from .host._host import Host, HostError
    from .host._middleware import middleware
    from .loop import NOT_OFFERED, Approve, Deny, Run, Supply, ToolCallingLoop
    from .messages import (
        AssistantMessage,
        SystemMessage,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )
    from .tools import (
        Activation,
        AdjustArguments,
        ApprovalRequired,
        CallDeferred,
        FunctionSpec,
        Injected,
        Retry,
        SideEffect,
        Source,
        Tool,
        ToolBlocked,
        Toolbox,
        ToolContext,
        ToolFatal,
        ToolPolicy,
        ToolResult,
        ToolStatus,
        tool,
    )

# Names are imported on first use: `import toolwire` stays cheap for plugins and for the CLI.
_LAZY = {
    "Activation": "toolwire.tools",
    "AdjustArguments": "toolwire.tools",
    "ApprovalRequired": "toolwire.tools",
    "Approve": "toolwire.loop",
    "AssistantMessage": "toolwire.messages",
    "CallDeferred": "toolwire.tools",
    "CliCommand": "toolwire.cli._plugin_commands",
    "Config": "toolwire.config",
    "ConfigError": "toolwire.config",
    "Deny": "toolwire.loop",
    "FunctionSpec": "toolwire.tools",
    "Host": "toolwire.host._host",
    "HostError": "toolwire.host._host",
    "Injected": "toolwire.tools",
    "NOT_OFFERED": "toolwire.loop",
    "OfferRequest": "toolwire._request",
    "Retry": "toolwire.tools",
    "Run": "toolwire.loop",
    "SideEffect": "toolwire.tools",
    "Source": "toolwire.tools",
    "Supply": "toolwire.loop",
    "Surface": "toolwire._surface",
    "SystemMessage": "toolwire.messages",
    "Tool": "toolwire.tools",
    "ToolBlocked": "toolwire.tools",
    "ToolCall": "toolwire.messages",
    "ToolCallingLoop": "toolwire.loop",
    "ToolContext": "toolwire.tools",
    "ToolDisplay": "toolwire.host._display",
    "ToolFatal": "toolwire.tools",
    "ToolPolicy": "toolwire.tools",
    "ToolResult": "toolwire.tools",
    "ToolResultMessage": "toolwire.messages",
    "ToolStatus": "toolwire.tools",
    "Toolbox": "toolwire.tools",
    "TrustLevel": "toolwire._trust",
    "UserMessage": "toolwire.messages",
    "agent_tool": "toolwire.host._agent",
    "load_config": "toolwire.config",
    "middleware": "toolwire.host._middleware",
    "tool": "toolwire.tools",
}


__getattr__ = lazy_getattr(globals(), _LAZY)


__all__ = [
    "Activation",
    "AdjustArguments",
    "ApprovalRequired",
    "Approve",
    "AssistantMessage",
    "CallDeferred",
    "CliCommand",
    "Config",
    "ConfigError",
    "Deny",
    "FunctionSpec",
    "Host",
    "HostError",
    "Injected",
    "NOT_OFFERED",
    "OfferRequest",
    "Retry",
    "Run",
    "SideEffect",
    "Source",
    "Supply",
    "Surface",
    "SystemMessage",
    "Tool",
    "ToolBlocked",
    "ToolCall",
    "ToolCallingLoop",
    "ToolContext",
    "ToolDisplay",
    "ToolFatal",
    "ToolPolicy",
    "ToolResult",
    "ToolResultMessage",
    "ToolStatus",
    "Toolbox",
    "TrustLevel",
    "UserMessage",
    "__version__",
    "agent_tool",
    "hookimpl",
    "load_config",
    "middleware",
    "tool",
]
