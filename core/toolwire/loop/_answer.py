"""A run's typed answer in the loop: how each request asks for it, and what an answer gives.

Pure functions of the run's :class:`~toolwire.output.OutputSpec`, the adapter's capabilities
and the model's answer; the stages apply what they return.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any, Literal, TypeAlias

import attrs

from ..adapters._base import AdapterCapabilities, NamedToolChoice, ToolChoice
from ..messages import AssistantMessage, ToolCall
from ..output import ANSWER_TOOL, OutputInvalid, OutputSpec

__all__ = [
    "Answered",
    "OutputMode",
    "Refused",
    "answer_tool_name",
    "forced_choice",
    "output_mode",
    "read_answer",
]

OutputMode: TypeAlias = Literal["native", "tool", "prompted"]
"""How a request asks for the typed answer: the API's structured-output field, the answer tool,
or instructions in the system prompt."""


def output_mode(capabilities: AdapterCapabilities) -> OutputMode:
    """Native where the API constrains answers to a schema, the answer tool where it has tools,
    the prompt otherwise."""
    if capabilities.native_output:
        return "native"
    if capabilities.native_tools:
        return "tool"
    return "prompted"


def answer_tool_name(offered: Collection[str]) -> str:
    """``final_answer``, or ``final_answer_2`` … when a registered tool holds the name."""
    name, number = ANSWER_TOOL, 1
    while name in offered:
        number += 1
        name = f"{ANSWER_TOOL}_{number}"
    return name


def forced_choice(
    choice: ToolChoice, tool: str, others: bool, capabilities: AdapterCapabilities
) -> ToolChoice:
    """The tool choice of a request on the answer-tool path: the answer tool named when the
    round offers nothing else, ``required`` when it does (the model calls a tool or answers);
    a choice the run set itself (``none``, a tool named for the first round) stands, and so
    does ``auto`` where the API cannot force a call."""
    if choice not in ("auto", "required"):
        return choice
    if not others and "named" in capabilities.tool_choice:
        return NamedToolChoice(tool)
    if "required" in capabilities.tool_choice:
        return "required"
    return choice


@attrs.frozen
class Answered:
    """The run's typed answer: its value and its JSON text."""

    value: Any
    text: str


@attrs.frozen
class Refused:
    """A wrong answer: what was wrong, and the answer-tool call that gave it (None for text)."""

    error: OutputInvalid
    call: ToolCall | None = None


def _json_text(value: Any) -> str:
    from ..tools._convert import unstructure_result

    return json.dumps(unstructure_result(value), ensure_ascii=False)


def read_answer(
    spec: OutputSpec, mode: OutputMode, message: AssistantMessage, tool: str
) -> Answered | Refused | None:
    """What the model's ``message`` gives the run: its typed answer, a wrong one, or None when
    it is no answer yet (it calls tools, and not the answer tool).

    On the tool path the first call of ``tool`` is the answer, and a turn without calls is a
    wrong answer (the model was to call the tool); otherwise the text of a turn without calls
    is the answer, as JSON.
    """
    calls = message.tool_calls
    if mode == "tool":
        given = next((c for c in calls if c.name == tool and not c.provider_executed), None)
        if given is None:
            if any(not c.provider_executed for c in calls):
                return None
            return Refused(OutputInvalid([f"the answer must be given by calling the tool {tool}"]))
        if given.arguments is None:
            reason = given.invalid_reason or "the arguments are not a JSON object"
            return Refused(OutputInvalid([reason]), given)
        try:
            value = spec.check(given.arguments)
        except OutputInvalid as exc:
            return Refused(exc, given)
        return Answered(value, _json_text(value))
    if any(not c.provider_executed for c in calls):
        return None
    try:
        value = spec.parse(message.text)
    except OutputInvalid as exc:
        return Refused(exc)
    return Answered(value, message.text)
