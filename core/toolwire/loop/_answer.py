"""A run's typed answer in the loop: how each request asks for it, and what an answer gives.

:func:`output_mode`, :func:`forced_choice` and :func:`read_answer` are pure functions of the
run's :class:`~toolwire.output.OutputSpec`, the adapter's capabilities and the model's answer;
:func:`ask_for_answer` (in the round's request) and :func:`take_typed_answer` (after the answer)
are the stages that apply them.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import attrs

from ..adapters._base import AdapterCapabilities, ModelRequest, NamedToolChoice, ToolChoice
from ..adapters._outcome import answer_outcome
from ..events import InvalidOutput
from ..messages import AssistantMessage, SystemMessage, ToolCall, UserMessage
from ..output import ANSWER_TOOL, OutputInvalid, OutputSpec
from ..tools._result import ToolResult
from ._lifecycle import CallEvent
from ._state import CallSlot, End, RunState, Turn
from ._turn import close_turn, stop_turn, take_turn

if TYPE_CHECKING:
    from ._view import LoopView

__all__ = [
    "Answered",
    "OutputMode",
    "Refused",
    "answer_tool_name",
    "ask_for_answer",
    "forced_choice",
    "output_mode",
    "read_answer",
    "take_typed_answer",
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
    """The run's typed answer: its value, its JSON text, and the answer tool's call that gave
    it (None for a text answer)."""

    value: Any
    text: str
    call: ToolCall | None = None


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
        return Answered(value, _json_text(value), given)
    if any(not c.provider_executed for c in calls):
        return None
    try:
        value = spec.parse(message.text)
    except OutputInvalid as exc:
        return Refused(exc)
    return Answered(value, message.text)


# -- the stages' side ----------------------------------------------------------------------------


def ask_for_answer(
    state: RunState, capabilities: AdapterCapabilities, tool: str, request: ModelRequest
) -> ModelRequest:
    """``request`` asking for the run's typed answer the way the adapter can take it: in the
    API's structured-output field, as the answer tool (forced as far as the API allows; the
    only tool when the run's tool choice is ``none``), or in the system prompt."""
    spec = state.options.output
    if spec is None:
        return request
    mode = output_mode(capabilities)
    if mode == "native":
        return attrs.evolve(request, output=spec)
    if mode == "prompted":
        messages = list(request.messages)
        if messages and isinstance(messages[0], SystemMessage):
            messages[0] = SystemMessage(f"{messages[0].content}\n\n{spec.instructions()}")
        else:
            messages.insert(0, SystemMessage(spec.instructions()))
        return attrs.evolve(request, messages=tuple(messages))
    answer = spec.function(tool)
    if request.tool_choice == "none":
        return attrs.evolve(request, functions=(answer,), tool_choice=NamedToolChoice(tool))
    choice = forced_choice(request.tool_choice, tool, bool(request.functions), capabilities)
    return attrs.evolve(request, functions=(*request.functions, answer), tool_choice=choice)


async def take_typed_answer(
    view: LoopView,
    state: RunState,
    turn: Turn,
    calls: list[ToolCall],
    capabilities: AdapterCapabilities,
    tool: str,
    *,
    hint: str | None = None,
) -> End | None:
    """What the model's last answer gives a run with a typed output: the end of the run when
    it ends it (``hint``: the adapter's likely cause of an empty answer).

    A valid answer ends the run ``answered`` with :attr:`RunState.output` set (calls beside the
    answer tool's are answered as not run). A wrong one is sent back with what is wrong (the
    answer tool's call answered with it, or a user message after a text answer) while
    ``[run] output_retries`` allows, and ends the run ``output_invalid`` after that. A turn of
    calls of other tools is an ordinary turn.
    """
    spec = state.options.output
    assert spec is not None
    message = state.messages[-1]
    assert isinstance(message, AssistantMessage)
    mode = output_mode(capabilities)
    if not calls:
        outcome, detail = answer_outcome(
            message, api=message.api or "", max_tokens=view.config.provider.max_tokens, hint=hint
        )
        if outcome == "truncated" or (outcome == "empty" and mode != "tool"):
            return End(outcome, detail)
    verdict = read_answer(spec, mode, message, tool)
    slots = [CallSlot(call) for call in calls]
    if verdict is None:
        return await take_turn(view, state, turn, slots)
    turn.message, turn.slots = message, slots
    if isinstance(verdict, Answered):
        state.output = verdict.value
        state.text = verdict.text
        for slot in slots:
            if slot.call.name == tool:
                slot.arguments = slot.call.arguments
            if slot.call is verdict.call:
                slot.answer(CallEvent.STOP, "final_answer", _ACCEPTED)
            else:
                slot.answer(CallEvent.STOP, "not_run", _NOT_RUN_AFTER_ANSWER)
        if slots:
            close_turn(view, state, turn)
        return End("answered")
    return await _wrong_answer(view, state, turn, verdict, mode, tool)


async def _wrong_answer(
    view: LoopView, state: RunState, turn: Turn, verdict: Refused, mode: OutputMode, tool: str
) -> End | None:
    """A wrong typed answer (``InvalidOutput``) sent back while ``[run] output_retries``
    allows; the run ends ``output_invalid`` after that."""
    spec = state.options.output
    assert spec is not None
    attempt = 1 + sum(isinstance(e, InvalidOutput) for e in state.events)
    give_up = attempt > view.config.run.output_retries
    reason = str(verdict.error)
    view.emit(
        state,
        InvalidOutput(
            run_id=state.run_id,
            round=turn.round,
            reason=reason,
            recovery="failed" if give_up else "returned",
            attempt=attempt,
        ),
    )
    stopped = (
        f"the answer did not match the output type after {attempt} attempt(s) "
        f"([run] output_retries = {view.config.run.output_retries}): {reason}"
    )
    if verdict.call is None:
        if give_up:
            return End("output_invalid", stopped)
        hint = tool if mode == "tool" else None
        state.messages.append(UserMessage(spec.retry_message(verdict.error, tool=hint)))
        return None
    others = [s for s in turn.slots if s.call.name != tool]
    for slot in turn.slots:
        if slot.call.name != tool:
            continue
        slot.arguments = slot.call.arguments
        if slot.call is verdict.call:
            retry = ToolResult.error(spec.retry_message(verdict.error, tool=tool))
            slot.answer(CallEvent.REFUSE, "invalid_arguments", retry)
        else:
            only = ToolResult.error("Not run: only the first answer counts.")
            slot.answer(CallEvent.REFUSE, "not_run", only)
    if give_up:
        stop_turn(view, state, turn, "its answer did not match the output type")
        return End("output_invalid", stopped)
    return await take_turn(view, state, turn, turn.slots, others)


_ACCEPTED = ToolResult.ok("The answer was accepted.")
_NOT_RUN_AFTER_ANSWER = ToolResult.error("Not run: the run ended with the final answer.")
