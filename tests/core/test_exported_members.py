"""The public surface is exactly the intended names, each importable."""

from __future__ import annotations

import importlib

import pytest

import toolwire

EXPECTED = {
    "Activation",
    "AdjustArguments",
    "ApprovalRequired",
    "CallDeferred",
    "Retry",
    "ToolFatal",
    "Approve",
    "AssistantMessage",
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
}


def test_exported_names():
    assert set(toolwire.__all__) == EXPECTED
    assert toolwire.__all__ == sorted(toolwire.__all__)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_exported_name_resolves(name: str):
    assert getattr(toolwire, name) is not None


@pytest.mark.parametrize(
    "module",
    [
        "toolwire.adapters",
        "toolwire.batch",
        "toolwire.context",
        "toolwire.events",
        "toolwire.fieldwise",
        "toolwire.loop",
        "toolwire.messages",
        "toolwire.net",
        "toolwire.output",
        "toolwire.sqlite",
        "toolwire.testing",
        "toolwire.tools",
        "toolwire.toolsets",
        "toolwire.usage",
        "toolwire.utf8",
    ],
)
def test_public_modules_have_sorted_all(module: str):
    mod = importlib.import_module(module)
    names = list(mod.__all__)
    assert names == sorted(names)
    for name in names:
        assert getattr(mod, name) is not None


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        toolwire.nothing  # noqa: B018


def test_toolsets_exports_exactly_the_compositions():
    import toolwire.toolsets

    assert set(toolwire.toolsets.__all__) == {
        "ApprovalRequiredToolset",
        "CombinedToolset",
        "ExternalToolset",
        "FilteredToolset",
        "PrefixedToolset",
        "RenamedToolset",
        "StaticToolset",
        "ToolSource",
        "Toolset",
        "combined",
        "external",
        "toolset",
    }
