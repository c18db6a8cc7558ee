"""``[loop]``: limits and admission policies of the tool-calling loop."""

from __future__ import annotations

import re
from typing import Literal

import attrs

from .._fieldwise import record_eq, record_hash, record_repr
from ._fields import WEEK, setting, whole

_SECONDS = (0.001, WEEK)


def _unknown_tool_problem(value: str) -> str | None:
    if value in ("return_error", "fail") or re.fullmatch(r"rewrite:[a-z][a-z0-9_]{0,63}", value):
        return None
    return "'return_error', 'fail' or 'rewrite:<tool name>'"


@attrs.frozen(kw_only=True, slots=False)
class LoopConfig:
    """``[loop]``: limits and admission policies of the tool-calling loop."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    max_rounds: int = setting(10, bounds=(1, 10_000), help="model requests per run")
    max_tool_calls: int = setting(
        50,
        bounds=(0, 100_000),
        help="tool calls per run, refused and repaired calls included; a call waiting for a "
        "decision counts when it runs (approved), not while it waits",
    )
    concurrency: int = setting(
        1,
        bounds=(1, 256),
        help="calls of one turn that may run at once (results keep call order)",
    )
    deadline_seconds: float | None = setting(
        None, bounds=_SECONDS, unit="seconds", help="wall-clock limit of a run"
    )
    unknown_tool: str = setting(
        "return_error",
        check=whole(_unknown_tool_problem),
        kind="`return_error`, `fail`, `rewrite:<tool>`",
        help="what a call of a tool that was not offered gets",
    )
    invalid_arguments: Literal["return_error", "fail"] = setting(
        "return_error", help="what a call whose arguments fail the schema gets"
    )
    system_prompt: str | None = setting(
        None, help="the base system prompt; offered tools' instructions are appended"
    )
    tool_timeout: float = setting(
        300.0,
        bounds=_SECONDS,
        unit="seconds",
        help="a call of a tool that sets no `timeout` of its own is stopped after this; a "
        "tool's own `timeout` wins",
    )
    hook_timeout: float = setting(
        30.0,
        bounds=_SECONDS,
        unit="seconds",
        help="the most the awaitable answer of a filter, resolve, instruction or "
        "request-context hook may take; a slower one fails alone (`plugin_failed`)",
    )
    observer_timeout: float = setting(
        1.0,
        bounds=_SECONDS,
        unit="seconds",
        help="an observer (`toolwire_event`) slower than this over one event is reported once "
        "and fed from a thread of its own from then on",
    )
    observer_close_timeout: float = setting(
        5.0,
        bounds=_SECONDS,
        unit="seconds",
        help="how long closing the host (`Host.aclose`) waits for the observers fed from a "
        "thread of their own to deliver the events queued before the close; one still busy "
        "then is reported (`plugin_failed`) and gets nothing more",
    )
    execute_tools: bool = setting(
        True,
        help="`false`: the host runs no local tool. Every call the model makes is admitted "
        "(parsed, validated, checked for duplicates) and the run ends `deferred`, each call with "
        "its arguments and reason `external`; answer them with `Supply(result)` on `resume`, "
        "or as they come with `run(…, external=…)`. Provider-run tools (web search at the "
        "provider) are not affected",
    )
    compact_at: float = setting(
        0.85,
        kind="share, above `compact_to`, at most 1",
        help="with `[provider] context_tokens`: a request estimated above this share of the "
        "window (less `max_tokens`) is compacted first (see [Long conversations]"
        "(#long-conversations))",
    )
    compact_to: float = setting(
        0.6,
        kind="share, above 0",
        help="the share of the window compaction brings the conversation down to",
    )
