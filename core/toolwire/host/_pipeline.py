"""The fast paths of one host, chosen once from the hook implementations it has registered."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from .._defaults import execute as _execute
from .._defaults import offer as _offer
from .._defaults import policy as _policy
from .._defaults import trace as _trace
from ..loop._protocol import Pipeline

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    import pluggy

    from ..config import Config
    from ..tools import Tool

_DEFAULT_OFFER = _offer.__name__
_DEFAULT_EXECUTE = _execute.__name__
_DEFAULT_POLICY = _policy.__name__


def choose_pipeline(hook: pluggy.HookRelay, config: Config) -> Pipeline:
    """The :class:`~toolwire.loop.Pipeline` for a host with these hooks and this config."""
    trace = _trace_of(hook)
    return Pipeline(
        direct_resolve=_only_defaults(hook.toolwire_resolve_function),
        direct_instructions=_only_defaults(hook.toolwire_system_prompt_instructions),
        direct_execution=_direct_execution(hook),
        request_context=bool(hook.toolwire_request_context.get_hookimpls()),
        refusal_reason=_per_tool(
            functools.partial(_policy.refusal_reason, policy=config.policy, surface=config.surface)
        ),
        approval_reason=_per_tool(
            functools.partial(_policy.approval_reason, policy=config.policy, surface=config.surface)
        ),
        access_reason=_access(_policy.allowed_roots(config)),
        begin_trace=trace.begin if trace is not None else _no_trace,
        end_trace=trace.end if trace is not None else _no_trace,
    )


_CACHED_TOOLS = 512


def _per_tool(reason: Callable[[Tool], str | None]) -> Callable[[Tool], str | None]:
    """``reason`` remembered per tool: a tool and the config are frozen, so the answer for one
    tool never changes, and admission and execution ask it for every call (a known tool's
    answer is a lookup in C, no Python call)."""
    return _Known(reason).__getitem__


class _Known(dict["Tool", "str | None"]):
    """The answers of ``reason`` by tool (tools compare by identity), each worked out when a
    tool is first looked up."""

    def __init__(self, reason: Callable[[Tool], str | None]) -> None:
        super().__init__()
        self._reason = reason

    def __missing__(self, tool: Tool) -> str | None:
        if len(self) >= _CACHED_TOOLS:  # tools made on the fly: keep the cache bounded
            self.clear()
        answer = self[tool] = self._reason(tool)
        return answer


def _access(roots: tuple[Path, ...]) -> Callable[[Tool, Mapping[str, Any]], str | None]:
    """The path check of ``[policy]`` with the allowed roots resolved once, for this host."""

    def access_reason(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
        if not tool.path_arguments:  # most tools take no paths: nothing to resolve
            return None
        return _policy.access_reason(tool, arguments, roots)

    return access_reason


def _only_defaults(caller: Any) -> bool:
    impls = caller.get_hookimpls()
    return len(impls) == 1 and impls[0].plugin_name == _DEFAULT_OFFER


def _direct_execution(hook: pluggy.HookRelay) -> bool | None:
    """None when plugins implement ``toolwire_execute_tool`` (call the hook); otherwise whether
    the built-in policy middleware is among the built-in implementations (run them inline)."""
    names = {impl.plugin_name for impl in hook.toolwire_execute_tool.get_hookimpls()}
    if _DEFAULT_EXECUTE not in names or not names <= {_DEFAULT_EXECUTE, _DEFAULT_POLICY}:
        return None
    return _DEFAULT_POLICY in names


def _trace_of(hook: pluggy.HookRelay) -> _trace.Trace | None:
    """The host's registered :class:`~toolwire._defaults.trace.Trace` (None when it is
    blocked)."""
    for impl in hook.toolwire_event.get_hookimpls():
        if impl.plugin_name == _trace.NAME and isinstance(impl.plugin, _trace.Trace):
            return impl.plugin
    return None


def _no_trace(_: object) -> None:
    return None
