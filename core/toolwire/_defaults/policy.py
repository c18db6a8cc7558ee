"""Default plugin: ``[policy]`` enforcement around tool calls (deny by side effect, strict mode,
unattended runs, guarded side effects by surface, the roots a path argument may lie in).

The loop asks :func:`approval_reason` at admission (a call that needs approval is deferred or put
to the run's approver) and truncates results to ``max_result_bytes``; the middleware here refuses
the calls ``[policy]`` forbids, before any other middleware or the tool runs.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._markers import hookimpl
from ..config import Config, PolicyConfig

if TYPE_CHECKING:
    from .._surface import Surface
    from ..messages import ToolCall
    from ..tools import Tool, ToolContext


def _effects(tool: Tool) -> list[str] | None:
    effects = tool.policy.side_effects
    if effects is None:
        return None
    return sorted(str(getattr(e, "value", e)) for e in effects)


def background_safe(tool: Tool) -> bool:
    """Whether a call of ``tool`` may run with nobody watching: its own ``background_safe``,
    else True only for a read-only tool that asks for no approval."""
    if tool.background_safe is not None:
        return tool.background_safe
    return tool.policy.read_only and not tool.policy.requires_approval


def _listed(effects: list[str]) -> str:
    return ", ".join(repr(e) for e in effects)


def guarded_effects(tool: Tool, policy: PolicyConfig, surface: Surface | None) -> list[str]:
    """The side effects of ``tool`` that ``[policy] guarded`` puts to a person on ``surface``
    (none without a surface, or for a tool approved in advance there)."""
    if surface is None or tool.name in surface.approved:
        return []
    effects = [e for e in _effects(tool) or () if e in policy.guarded]
    if not surface.interactive:
        effects = [e for e in effects if e not in policy.unattended_allow]
    return effects


def approved_in_advance(config: Config) -> Config:
    """``config`` for a person who approved every call in advance (``--approve-all``): an
    unattended surface runs the guarded side effects too, since someone agreed to them."""
    import attrs

    policy = config.policy
    allowed = tuple(dict.fromkeys([*policy.unattended_allow, *policy.guarded]))
    return attrs.evolve(config, policy=attrs.evolve(policy, unattended_allow=allowed))


def refusal_reason(tool: Tool, policy: PolicyConfig, surface: Surface | None = None) -> str | None:
    """Why ``[policy]`` refuses every call of ``tool`` on ``surface`` (None when it does not).

    On an unattended surface that includes a tool with a guarded side effect: nobody is there
    to agree to the call.
    """
    effects = _effects(tool)
    if policy.unattended and not background_safe(tool):
        return (
            f"Tool {tool.name} is blocked by policy: this run is unattended ([policy] unattended "
            "= true) and the tool is not marked background_safe, so it may only run with a "
            "person watching."
        )
    if effects is None:
        if policy.strict:
            reason = (
                f"Tool {tool.name} is blocked by policy: it does not declare its side effects, "
                "and [policy] strict = true refuses unclassified tools."
            )
            where = tool.policy_config_key
            if where:
                reason += (
                    f' Declare them in {where}: side_effects = [...] (for example ["read_only"]).'
                )
            return reason
        return None
    denied = [e for e in effects if e in policy.deny]
    if denied:
        return (
            f"Tool {tool.name} is blocked by policy: it has the side effect(s) {_listed(denied)}, "
            "which [policy] deny refuses."
        )
    if surface is not None and not surface.interactive:
        guarded = guarded_effects(tool, policy, surface)
        if guarded:
            return (
                f"Tool {tool.name} is blocked by policy: its side effect(s) {_listed(guarded)} "
                f"need a person's approval ([policy] guarded), and the {surface.name} surface "
                "runs unattended, with nobody to ask. [policy] unattended_allow lists the side "
                "effects unattended surfaces may run anyway."
            )
    return None


def approval_reason(tool: Tool, policy: PolicyConfig, surface: Surface | None = None) -> str | None:
    """Why a call of ``tool`` on ``surface`` needs a person's approval (None when it does
    not): the tool asks for it, ``[policy] require_approval`` covers one of its side effects,
    or, on an interactive surface, ``[policy] guarded`` does."""
    if tool.policy.requires_approval:
        return f"tool {tool.name} asks for approval before every call"
    effects = _effects(tool) or []
    needing = [e for e in effects if e in policy.require_approval]
    if needing:
        return (
            f"[policy] require_approval covers the side effect(s) {_listed(needing)} of tool "
            f"{tool.name}"
        )
    if surface is not None and surface.interactive:
        guarded = guarded_effects(tool, policy, surface)
        if guarded:
            return (
                f"tool {tool.name} has the side effect(s) {_listed(guarded)}, which the "
                f"{surface.name} surface asks about first ([policy] guarded)"
            )
    return None


def allowed_roots(config: Config) -> tuple[Path, ...]:
    """The directories ``path_arguments`` may lie in: ``[policy] workspace`` (default: the
    current directory) and ``trusted_roots``, symlinks resolved. A relative root is taken from
    the directory of the config file that set it."""
    policy = config.policy

    def resolved(root: str, key: str) -> Path:
        path = Path(root)
        if not path.is_absolute():
            origin = config.origin_of(key)
            path = (Path(origin).parent if origin else Path.cwd()) / path
        return Path(os.path.realpath(path))

    roots = [resolved(policy.workspace or ".", "$.policy.workspace")]
    roots += [resolved(root, "$.policy.trusted_roots") for root in policy.trusted_roots]
    return tuple(dict.fromkeys(roots))


def access_reason(tool: Tool, arguments: Mapping[str, Any], roots: tuple[Path, ...]) -> str | None:
    """Why ``[policy]`` refuses this call for a path it names (None when every path of the
    tool's ``path_arguments`` lies in one of ``roots``).

    A path is resolved as the tool would open it: relative to the current directory, ``..`` and
    symlinks followed (a path that does not exist yet is resolved as far as it exists).
    """
    for name in sorted(tool.path_arguments):
        value = arguments.get(name)
        values = value if isinstance(value, list | tuple) else [value]
        for item in values:
            if item is None:
                continue
            if not isinstance(item, str) or "\x00" in item:
                return (
                    f"Tool {tool.name} is blocked by policy: argument {name!r} = {item!r} is not "
                    "a file system path (a string without NUL characters)."
                )
            target = Path(os.path.realpath(item))
            if not any(target == root or target.is_relative_to(root) for root in roots):
                allowed = ", ".join(str(root) for root in roots)
                return (
                    f"Tool {tool.name} is blocked by policy: argument {name!r} = {item!r} "
                    f"resolves to {target}, outside the allowed roots ({allowed}; [policy] "
                    "workspace and trusted_roots)."
                )
    return None


@hookimpl(wrapper=True, tryfirst=True)
def toolwire_execute_tool(call: ToolCall, context: ToolContext) -> Generator[None, Any, Any]:
    """Refuse (``blocked``) calls of tools whose side effects ``[policy]`` denies or, with
    ``strict = true``, that declare none; in an unattended run, of tools not background safe;
    and calls naming a path outside the allowed roots. The config comes from
    ``context.services["config"]``."""
    config = context.services.get("config")
    if isinstance(config, Config):
        reason = refusal_reason(context.tool, config.policy, config.surface)
        if reason is None and context.tool.path_arguments:
            reason = access_reason(context.tool, call.arguments or {}, allowed_roots(config))
        if reason is not None:
            from ..tools._result import ToolBlocked  # imported when a call runs, not at start

            raise ToolBlocked(reason)
    return (yield)
