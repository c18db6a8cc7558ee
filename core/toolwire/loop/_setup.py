"""A run's state as it starts (its arguments checked) or is restored from a stored run."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._trust import levels_in_use
from ..adapters._base import NamedToolChoice, ToolChoice
from ..messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
    required_trust,
    strictest_result,
)
from ..output import OutputSpec
from ._admission import duplicate_key
from ._offer import Selection
from ._run import Run, RunOptions
from ._state import RunState, Spending, TrustNeed

if TYPE_CHECKING:
    from ..config import Config
    from ..tools import Tool

_ANY_TOOL_CHOICE = ("auto", "none", "required")


def new_state(
    config: Config,
    registered: Mapping[str, Tool],
    prompt: str | Sequence[Message],
    *,
    system_prompt: str | None,
    tools: Sequence[str] | None,
    profile: str | None,
    tool_choice: ToolChoice | str,
    stream: bool | None,
    run_id: str | None,
    output: Any = None,
) -> RunState:
    """The state of a new run, its arguments checked (see :meth:`ToolCallingLoop.run`)."""
    messages = _messages(prompt)
    base = config.loop.system_prompt
    first = messages[0] if messages else None
    if isinstance(first, SystemMessage):
        messages.pop(0)
        base = first.content
    if system_prompt is not None:
        base = system_prompt
    tool_names: tuple[str, ...] | None = None
    if tools is not None:
        if isinstance(tools, str):
            raise TypeError("tools= takes a list of tool names, not a str")
        tool_names = tuple(tools)
        unknown = [n for n in tool_names if n not in registered]
        if unknown:
            known = ", ".join(registered) or "none are registered"
            raise ValueError(
                f"tools={list(tool_names)!r} names unknown tool(s) "
                f"{', '.join(map(repr, unknown))}; registered tools: {known}"
            )
    choice = _tool_choice(tool_choice)
    options = RunOptions(
        system_prompt=base,
        tools=tool_names,
        profile=profile,
        tool_choice=choice,
        stream=stream,
        output=OutputSpec.for_run(output, config),
    )
    selection = Selection.from_config(config, tool_names, profile)  # refuses an unknown profile
    state = RunState(run_id or f"run_{uuid.uuid4().hex}", options, messages, selection)
    with levels_in_use(config.trust.levels):  # compared in the host's scheme
        inherited = strictest_result(messages)  # a continued conversation keeps its requirement
        if inherited is not None:
            state.require(
                required_trust(messages),
                f"{inherited.name} call {inherited.call_id} of the conversation",
            )
    return state


def _messages(prompt: str | Sequence[Message]) -> list[Message]:
    if isinstance(prompt, str):
        return [UserMessage(prompt)]
    if not isinstance(prompt, Sequence):
        raise TypeError(
            f"the prompt must be a str or a sequence of messages, got {type(prompt).__name__}"
        )
    messages = [*prompt]
    for i, message in enumerate(messages):
        if not isinstance(
            message, SystemMessage | UserMessage | AssistantMessage | ToolResultMessage
        ):
            raise TypeError(
                f"messages[{i}] is a {type(message).__name__}; expected a message of "
                "toolwire.messages"
            )
    return messages


def _tool_choice(value: ToolChoice | str) -> ToolChoice:
    if isinstance(value, NamedToolChoice):
        return value
    if value in _ANY_TOOL_CHOICE:
        return value  # type: ignore[return-value]
    if isinstance(value, str) and value:
        return NamedToolChoice(value)
    raise ValueError(
        f"tool_choice={value!r}; expected 'auto', 'none', 'required', a tool name or "
        "NamedToolChoice"
    )


def restore(config: Config, registered: Mapping[str, Tool], run: Run) -> RunState:
    """The state of a stored run, to go on with it (its duplicate keys rebuilt)."""
    messages = list(run.messages)
    if messages and isinstance(messages[0], SystemMessage):
        messages.pop(0)
    options = run.options
    selection = Selection.from_config(config, options.tools, options.profile)
    state = RunState(run.id, options, messages, selection)
    state.records = list(run.tool_calls)
    state.events = list(run.events)
    state.sources = {s.url: s for s in run.sources}
    state.rounds = run.rounds
    state.used = run.tool_calls_used
    if run.required_trust is not None:
        state.trust = TrustNeed(run.required_trust)
    state.spending = Spending(
        run.usage, run.cost or 0.0, int(run.cost is None and run.usage.reported)
    )
    state.deferred = list(run.deferred)
    for record in run.tool_calls:
        if (
            record.outcome == "executed"
            and record.result is not None
            and record.result.is_ok
            and record.arguments is not None
            and record.tool is not None
        ):
            tool = registered.get(record.tool)
            if tool is not None and not tool.allow_duplicates:
                key = duplicate_key(tool, record.arguments)
                state.seen.setdefault(key, record.call.id)
    return state
