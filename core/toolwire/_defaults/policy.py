"""Default plugin: ``[policy]`` enforcement around tool calls (deny by side effect, strict mode).

The loop asks :func:`approval_reason` at admission (a call that needs approval is deferred or put
to the run's approver) and truncates results to ``max_result_bytes``; the middleware here refuses
the calls ``[policy]`` forbids, before any other middleware or the tool runs.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from .._markers import hookimpl
from ..config import Config, PolicyConfig

if TYPE_CHECKING:
    from ..messages import ToolCall
    from ..tools import Tool, ToolContext


def _effects(tool: Tool) -> list[str] | None:
    effects = tool.policy.side_effects
    if effects is None:
        return None
    return sorted(str(getattr(e, "value", e)) for e in effects)


def refusal_reason(tool: Tool, policy: PolicyConfig) -> str | None:
    """Why ``[policy]`` refuses every call of ``tool`` (None when it does not)."""
    effects = _effects(tool)
    if effects is None:
        if policy.strict:
            return (
                f"Tool {tool.name} is blocked by policy: it does not declare its side effects, "
                "and [policy] strict = true refuses unclassified tools."
            )
        return None
    denied = [e for e in effects if e in policy.deny]
    if denied:
        listed = ", ".join(repr(e) for e in denied)
        return (
            f"Tool {tool.name} is blocked by policy: it has the side effect(s) {listed}, which "
            "[policy] deny refuses."
        )
    return None


def approval_reason(tool: Tool, policy: PolicyConfig) -> str | None:
    """Why a call of ``tool`` needs a person's approval (None when it does not)."""
    if tool.policy.requires_approval:
        return f"tool {tool.name} asks for approval before every call"
    effects = _effects(tool) or []
    needing = [e for e in effects if e in policy.require_approval]
    if needing:
        listed = ", ".join(repr(e) for e in needing)
        return f"[policy] require_approval covers the side effect(s) {listed} of tool {tool.name}"
    return None


@hookimpl(wrapper=True, tryfirst=True)
def toolwire_execute_tool(call: ToolCall, context: ToolContext) -> Generator[None, Any, Any]:
    """Refuse (``blocked``) calls of tools whose side effects ``[policy]`` denies or, with
    ``strict = true``, that declare none. The config comes from ``context.services["config"]``."""
    config = context.services.get("config")
    if isinstance(config, Config):
        reason = refusal_reason(context.tool, config.policy)
        if reason is not None:
            from ..tools._result import ToolBlocked  # imported when a call runs, not at start

            raise ToolBlocked(reason)
    return (yield)
