"""Events of a host's runs as spans and metrics, by the GenAI semantic conventions.

One run is an ``invoke_agent`` span; each model request of a round a ``chat {model}`` span and
each tool call an ``execute_tool {name}`` span, both children of the run's span (so concurrent
calls are siblings). Spans are found by run id, round and call id, never through the current
context, so calls running concurrently cannot nest into one another.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

import toolwire
from toolwire.events import (
    ContentFiltered,
    DuplicateSuppressed,
    Event,
    EventVisitor,
    InvalidArguments,
    LimitReached,
    PluginFailed,
    ProviderRetry,
    RequestSent,
    ResponseReceived,
    RoundFinished,
    RunFinished,
    RunStarted,
    ToolBlockedEvent,
    ToolCompleted,
    ToolDeferred,
    ToolDenied,
    ToolFailed,
    ToolOmitted,
    ToolProgress,
    ToolStarted,
    UnknownTool,
)
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from toolwire.usage import Usage

from . import _conventions as c
from ._pipeline import Pipeline

if TYPE_CHECKING:
    from toolwire import Host, ToolResult

# Stop reasons that are the run's normal ends; any other one marks the run span as an error.
_NORMAL_STOPS = frozenset({"answered", "deferred"})
_MAX_CAPTURED = 16_384
# The whole of gen_ai.input.messages: past it the oldest messages are left out (each part is
# already clipped to _MAX_CAPTURED), so the attribute stays valid JSON.
_MAX_INPUT = 8 * _MAX_CAPTURED


@attrs.define
class _Chat:
    span: Span
    started: float
    attributes: dict[str, Any]
    answered: bool = False


@attrs.define
class _Call:
    span: Span
    name: str
    round: int | None
    started: float | None = None
    refusal: str | None = None


@attrs.define
class _Run:
    span: Span
    context: Context
    provider: str
    model: str | None
    chats: dict[int, _Chat] = attrs.field(factory=dict)
    calls: dict[str, _Call] = attrs.field(factory=dict)
    usage: Usage = attrs.field(factory=Usage)
    cost: float | None = None
    conversation: _Conversation | None = None


@attrs.define
class _Conversation:
    """What the requests of one run held, rebuilt from its events (only with content capture):
    the opening messages, then each answer and the results of its calls, in call order."""

    messages: list[dict[str, Any]] = attrs.field(factory=list)
    calls: list[str] = attrs.field(factory=list)
    results: dict[str, str] = attrs.field(factory=dict)

    def answered(self, message: AssistantMessage) -> None:
        """The model's turn joins the conversation; its calls wait for their results."""
        self.flush()
        self.messages.append(_assistant_message(message))
        self.calls = [call.id for call in message.tool_calls if not call.provider_executed]

    def result(self, call_id: str, text: str) -> None:
        """What the model is sent for one call (the first answer counts)."""
        self.results.setdefault(call_id, text)

    def flush(self) -> None:
        """The results of the last turn's calls become tool messages, in call order."""
        for call_id in self.calls:
            text = self.results.get(call_id)
            if text is not None:
                self.messages.append(_tool_message(call_id, text))
        self.calls = []
        self.results.clear()


class TelemetryObserver(EventVisitor[None]):
    """One host's ``toolwire_event`` observer: spans and metrics of every run of that host."""

    def __init__(self, host: Host, pipeline: Pipeline, *, capture: bool, agent_name: str) -> None:
        self._host = host
        self._pipeline = pipeline
        self._tracer = pipeline.tracer
        self._capture = capture
        self._agent_name = agent_name
        self._runs: dict[str, _Run] = {}
        self._tools: dict[str, tuple[object, dict[str, Any]]] = {}
        provider = host.config.provider
        self._server = c.server_attributes(provider.base_url)
        key = os.environ.get(provider.api_key_env or "", "") if provider.api_key_env else ""
        self._secrets = tuple(s for s in (key,) if len(s) >= 8)
        meter = pipeline.meter
        self._token_usage = meter.create_histogram(
            c.TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=c.TOKEN_BUCKETS,
        )
        self._request_duration = meter.create_histogram(
            c.OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=c.DURATION_BUCKETS,
        )
        self._tool_duration = meter.create_histogram(
            c.TOOL_DURATION,
            unit="s",
            description="Duration of tool executions.",
            explicit_bucket_boundaries_advisory=c.DURATION_BUCKETS,
        )

    @toolwire.hookimpl
    def toolwire_event(self, event: Event) -> None:
        """Turn one event into span and metric updates (stream deltas are skipped)."""
        self.visit(event)

    def on_event(self, event: Event) -> None:
        """Nothing: stream deltas and the events no span or metric stands for."""

    on_round_started = on_event
    on_tool_resolution_corrected = on_event
    on_tools_deferred = on_event
    on_tools_promoted = on_event
    on_tool_choice_degraded = on_event
    on_request_body = on_event
    on_text_delta = on_event
    on_thinking_delta = on_event
    on_tool_call_started = on_event
    on_tool_call_arguments_delta = on_event
    on_tool_call_completed = on_event
    on_tool_call_recovered = on_event
    on_tool_approved = on_event
    on_arguments_adjusted = on_event
    on_provider_fallback = on_event
    on_invalid_output = on_event
    on_context_compacted = on_event

    def close(self) -> None:
        """End what is still open (a run interrupted by the host's close), then flush."""
        for run_id in list(self._runs):
            self._end_run(self._runs.pop(run_id), "interrupted", "the host closed during the run")
        self._pipeline.close()

    # -- run ---------------------------------------------------------------------------------

    def on_run_started(self, event: RunStarted) -> None:
        provider = c.provider_name(event.api)
        attributes: dict[str, Any] = {
            c.OPERATION: "invoke_agent",
            c.PROVIDER: provider,
            c.AGENT_NAME: self._agent_name,
            c.CONVERSATION_ID: event.run_id,
            "toolwire.api": event.api,
            "toolwire.run.resumed": event.resumed,
        }
        if event.model:
            attributes[c.REQUEST_MODEL] = event.model
        # A run started as a tool of another run (agent_tool) is a child of that call's span.
        context = None
        parent = event.parent
        caller = self._runs.get(parent.run_id) if parent is not None else None
        if parent is not None and caller is not None:
            call = caller.calls.get(parent.call_id)
            context = trace.set_span_in_context(call.span if call is not None else caller.span)
        span = self._tracer.start_span(
            f"invoke_agent {self._agent_name}",
            context=context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        self._runs[event.run_id] = _Run(
            span=span,
            context=trace.set_span_in_context(span),
            provider=provider,
            model=event.model,
            conversation=self._opening(event.messages) if self._capture else None,
        )

    def _opening(self, messages: tuple[Message, ...]) -> _Conversation:
        conversation = _Conversation()
        for message in messages:
            if isinstance(message, AssistantMessage):
                conversation.answered(message)
            elif isinstance(message, ToolResultMessage):
                conversation.result(message.call_id, message.result.model_text())
            else:
                conversation.flush()
                conversation.messages.append(_plain_message(message))
        return conversation

    def on_run_finished(self, event: RunFinished) -> None:
        run = self._runs.pop(event.run_id, None)
        if run is not None:
            self._end_run(run, event.stop_reason, event.detail)

    def _end_run(self, run: _Run, stop: str, detail: str | None) -> None:
        failed = stop not in _NORMAL_STOPS
        for number, chat in sorted(run.chats.items()):
            # A request that got no answer ends with the run's reason (error, cancelled …).
            self._end_chat(run, chat, error=stop if failed else "no_response", detail=detail)
            run.chats.pop(number)
        for call in run.calls.values():
            # Calls still open when the run ended were cut off (cancelled, deadline).
            if stop in {"cancelled", "interrupted"}:
                reason = "cancelled"
            else:
                reason = stop if failed else "unanswered"
            self._fail(call.span, reason, detail)
            self._end_call(run, call, reason)
        run.calls.clear()
        span = run.span
        span.set_attribute("toolwire.run.stop_reason", stop)
        _set_usage(span, run.usage, run.cost)
        if stop == "deferred":
            span.add_event("toolwire.run.deferred", {"toolwire.detail": detail or ""})
        if failed:
            self._fail(span, stop, detail)
        span.end()

    def _run_note(self, event: ToolOmitted | LimitReached | PluginFailed | ContentFiltered) -> None:
        run = self._runs.get(event.run_id)
        if run is None:
            return
        attributes = {
            f"toolwire.{field.name}": _scalar(getattr(event, field.name))
            for field in attrs.fields(type(event))
            if field.name not in {"run_id", "parent"} and getattr(event, field.name) is not None
        }
        if isinstance(event, ContentFiltered) and not self._capture:
            # The filter's report may quote the content it changed.
            attributes.pop("toolwire.report", None)
        target = run.span
        call_id = getattr(event, "call_id", None)
        if call_id is not None and call_id in run.calls:
            target = run.calls[call_id].span
        target.add_event(f"toolwire.{event.kind}", self._scrubbed(attributes))

    on_tool_omitted = _run_note
    on_limit_reached = _run_note
    on_plugin_failed = _run_note
    on_content_filtered = _run_note

    # -- model requests ----------------------------------------------------------------------

    def on_request_sent(self, event: RequestSent) -> None:
        run = self._runs.get(event.run_id)
        if run is None or event.round is None:
            return
        model = event.model or run.model
        attributes: dict[str, Any] = {
            c.OPERATION: "chat",
            c.PROVIDER: run.provider,
            **self._server,
        }
        if model:
            attributes[c.REQUEST_MODEL] = model
        span = self._tracer.start_span(
            f"chat {model}" if model else "chat",
            context=run.context,
            kind=SpanKind.CLIENT,
            attributes={
                **attributes,
                "toolwire.round": event.round,
                "toolwire.request.stream": event.stream,
                "toolwire.request.tools": event.tools,
            },
        )
        if run.conversation is not None:
            run.conversation.flush()
            span.set_attribute(c.INPUT_MESSAGES, self._input_messages(run.conversation))
        run.chats[event.round] = _Chat(
            span=span, started=time.perf_counter(), attributes=attributes
        )

    def _input_messages(self, conversation: _Conversation) -> str:
        """The conversation as ``gen_ai.input.messages``: every text clipped and scrubbed, and
        the oldest messages left out past :data:`_MAX_INPUT`."""
        encoded = [_json(self._clipped_message(m)) for m in conversation.messages]
        total = sum(len(e) + 1 for e in encoded) + 1
        start = 0
        while total > _MAX_INPUT and start < len(encoded) - 1:
            total -= len(encoded[start]) + 1
            start += 1
        return "[" + ",".join(encoded[start:]) + "]"

    def _clipped_message(self, message: Mapping[str, Any]) -> dict[str, Any]:
        parts = []
        for part in message["parts"]:
            part = dict(part)
            for key in ("content", "response"):
                if isinstance(part.get(key), str):
                    part[key] = self._clip(part[key])
            if "arguments" in part:
                part["arguments"] = self._scrubbed_value(part["arguments"])
            parts.append(part)
        return {**message, "parts": parts}

    def _scrubbed_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._clip(value)
        if isinstance(value, Mapping):
            return {k: self._scrubbed_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._scrubbed_value(v) for v in value]
        return value

    def on_provider_retry(self, event: ProviderRetry) -> None:
        chat = self._chat(event)
        if chat is not None:
            chat.span.add_event(
                "toolwire.provider_retry",
                {
                    "http.response.status_code": event.status if event.status is not None else 0,
                    "toolwire.retry.delay": event.delay,
                    "toolwire.retry.attempt": event.attempt,
                    "toolwire.retry.reason": event.reason,
                },
            )

    def on_response_received(self, event: ResponseReceived) -> None:
        run = self._runs.get(event.run_id)
        chat = self._chat(event)
        if run is None or chat is None:
            return
        message = event.message
        span = chat.span
        if message.model:
            span.set_attribute(c.RESPONSE_MODEL, message.model)
            chat.attributes[c.RESPONSE_MODEL] = message.model
        if message.response_id:
            span.set_attribute(c.RESPONSE_ID, message.response_id)
        if message.finish_reason:
            span.set_attribute(c.FINISH_REASONS, (message.finish_reason,))
        usage = event.usage or message.usage
        if usage is not None:
            for value, kind in ((usage.input_tokens, "input"), (usage.output_tokens, "output")):
                if value is not None:
                    self._token_usage.record(value, {**chat.attributes, c.TOKEN_TYPE: kind})
            _set_usage(span, usage, event.cost)
            run.usage = run.usage + usage
        if event.cost is not None:
            run.cost = (run.cost or 0.0) + event.cost
        if self._capture:
            span.set_attribute(c.OUTPUT_MESSAGES, self._clip(_output_messages(message)))
        if run.conversation is not None:
            run.conversation.answered(message)
        chat.answered = True
        self._end_chat(run, chat)
        run.chats.pop(event.round or 0, None)

    def on_round_finished(self, event: RoundFinished) -> None:
        # Every call of a finished round has its result. A call refused at admission (unknown
        # tool, arguments returned as invalid, a suppressed duplicate) gets no event of its own
        # after the refusal: its span ends here. A round that ends without an answer keeps its
        # chat span open until RunFinished, which follows at once and says why.
        run = self._runs.get(event.run_id)
        if run is None:
            return
        for call_id, call in list(run.calls.items()):
            if call.round == event.round and call.started is None:
                reason = call.refusal or "not_run"
                call.span.set_attribute("toolwire.tool.status", "refused")
                self._fail(call.span, reason, None)
                del run.calls[call_id]
                self._end_call(run, call, reason)

    def _chat(self, event: Event) -> _Chat | None:
        run = self._runs.get(event.run_id)
        if run is None or event.round is None:
            return None
        return run.chats.get(event.round)

    def _end_chat(
        self, run: _Run, chat: _Chat, *, error: str | None = None, detail: str | None = None
    ) -> None:
        attributes = chat.attributes
        if not chat.answered and error is not None:
            self._fail(chat.span, error, detail)
            attributes = {**attributes, c.ERROR_TYPE: error}
        self._request_duration.record(time.perf_counter() - chat.started, attributes)
        chat.span.end()

    # -- tool calls --------------------------------------------------------------------------

    def _call(self, run_id: str, call_id: str, name: str, round: int | None) -> _Call | None:
        """The call's span, started now if this is the first event about the call."""
        run = self._runs.get(run_id)
        if run is None:
            return None
        call = run.calls.get(call_id)
        if call is None:
            span = self._tracer.start_span(
                f"execute_tool {name}",
                context=run.context,
                kind=SpanKind.INTERNAL,
                attributes={**self._tool_attributes(name), c.TOOL_CALL_ID: call_id},
            )
            call = run.calls[call_id] = _Call(span=span, name=name, round=round)
        return call

    def _tool_attributes(self, name: str) -> dict[str, Any]:
        """The attributes every span of the tool ``name`` carries (kept per registered tool)."""
        tool = self._host.tools.get(name)
        known = self._tools.get(name)
        if known is not None and known[0] is tool:
            return known[1]
        attributes: dict[str, Any] = {
            c.OPERATION: "execute_tool",
            c.TOOL_NAME: name,
            c.TOOL_TYPE: "function",
        }
        if tool is not None and tool.description:
            attributes[c.TOOL_DESCRIPTION] = tool.description
        if tool is not None:  # names a model invented are not kept
            self._tools[name] = (tool, attributes)
        return attributes

    def _admission_refused(
        self, event: UnknownTool | InvalidArguments | DuplicateSuppressed
    ) -> None:
        call = self._call(event.run_id, event.call_id, event.name, event.round)
        if call is None:
            return
        attributes: dict[str, Any] = {}
        if isinstance(event, UnknownTool):
            attributes = {"toolwire.offered": event.offered, "toolwire.action": event.action}
        elif isinstance(event, InvalidArguments):
            attributes = {"toolwire.recovery": event.recovery}
            if self._capture:
                attributes["toolwire.reason"] = self._clip(event.reason)
        else:
            attributes = {"toolwire.first_call_id": event.first_call_id}
        call.span.add_event(f"toolwire.{event.kind}", attributes)
        if not (isinstance(event, InvalidArguments) and event.recovery == "repaired"):
            call.refusal = event.kind
            run = self._runs.get(event.run_id)
            if run is not None and run.conversation is not None:
                run.conversation.result(event.call_id, _refusal_text(event))

    on_unknown_tool = _admission_refused
    on_invalid_arguments = _admission_refused
    on_duplicate_suppressed = _admission_refused

    def on_tool_started(self, event: ToolStarted) -> None:
        call = self._call(event.run_id, event.call_id, event.name, event.round)
        if call is None:
            return
        if event.answer == "run":  # a supplied or denied call ran nothing: no duration
            call.started = time.perf_counter()
        if self._capture:
            # The loop redacts sensitive arguments before the event is built.
            call.span.set_attribute(c.TOOL_ARGUMENTS, self._clip(_json(event.arguments)))

    def on_tool_progress(self, event: ToolProgress) -> None:
        run = self._runs.get(event.run_id)
        call = run.calls.get(event.call_id) if run is not None else None
        if call is not None:
            attributes: dict[str, Any] = {"toolwire.message": self._clip(event.message)}
            if event.fraction is not None:
                attributes["toolwire.fraction"] = event.fraction
            call.span.add_event("toolwire.tool_progress", attributes)

    def _tool_settled(
        self, event: ToolCompleted | ToolFailed | ToolBlockedEvent | ToolDenied
    ) -> None:
        run = self._runs.get(event.run_id)
        call = self._call(event.run_id, event.call_id, event.name, event.round)
        if run is None or call is None:
            return
        result = event.result
        span = call.span
        status = str(result.status)
        error: str | None = None
        if isinstance(event, ToolFailed):
            error = _failure_type(result)
            status = error if error in {"cancelled", "timeout", "deadline"} else status
        elif isinstance(event, ToolBlockedEvent | ToolDenied):
            error = status
            span.add_event(f"toolwire.tool_{status}", self._message(result))
        span.set_attribute("toolwire.tool.status", status)
        if run.conversation is not None:
            run.conversation.result(event.call_id, result.model_text())
        if self._capture and result.is_ok:
            span.set_attribute(c.TOOL_RESULT, self._clip(_result_text(result)))
        if error is not None:
            if result.exception is not None:
                span.add_event(
                    "exception",
                    {
                        "exception.type": type(result.exception).__qualname__,
                        **self._message(result, "exception.message"),
                    },
                )
            self._fail(span, error, result.content if self._capture else None)
        run.calls.pop(event.call_id, None)
        self._end_call(run, call, error)

    on_tool_completed = _tool_settled
    on_tool_failed = _tool_settled
    on_tool_blocked = _tool_settled
    on_tool_denied = _tool_settled

    def on_tool_deferred(self, event: ToolDeferred) -> None:
        run = self._runs.get(event.run_id)
        call = self._call(event.run_id, event.call_id, event.name, event.round)
        if run is None or call is None:
            return
        call.span.set_attribute("toolwire.tool.status", "deferred")
        call.span.add_event("toolwire.tool_deferred", {"toolwire.reason": event.reason})
        run.calls.pop(event.call_id, None)
        call.span.end()

    def _end_call(self, run: _Run, call: _Call, error: str | None) -> None:
        if call.started is not None:
            attributes: dict[str, Any] = {
                c.OPERATION: "execute_tool",
                c.TOOL_NAME: call.name,
                c.PROVIDER: run.provider,
            }
            if error is not None:
                attributes[c.ERROR_TYPE] = error
            self._tool_duration.record(time.perf_counter() - call.started, attributes)
        call.span.end()

    # -- shared ------------------------------------------------------------------------------

    def _fail(self, span: Span, error: str, detail: str | None) -> None:
        span.set_attribute(c.ERROR_TYPE, error)
        description = f"{error}: {self._clip(detail, 1024)}" if detail else error
        span.set_status(Status(StatusCode.ERROR, description))

    def _message(self, result: ToolResult, key: str = "toolwire.message") -> dict[str, str]:
        """The result's message as an event attribute, only when content is captured."""
        if self._capture and result.content:
            return {key: self._clip(result.content)}
        return {}

    def _clip(self, text: str | None, limit: int = _MAX_CAPTURED) -> str:
        text = self._scrub(text or "")
        return text if len(text) <= limit else text[:limit] + "…"

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, "[redacted]")
        return text

    def _scrubbed(self, attributes: Mapping[str, Any]) -> dict[str, Any]:
        return {k: self._scrub(v) if isinstance(v, str) else v for k, v in attributes.items()}


def _failure_type(result: ToolResult) -> str:
    """``error.type`` of a failed call: the exception's class, or what stopped the call."""
    if result.exception is not None:
        return type(result.exception).__qualname__
    text = result.content or ""
    # The loop's wording for calls it stopped itself (toolwire.loop._execution.capture).
    if text.startswith("Cancelled:"):
        return "cancelled"
    if " timed out after " in text:
        return "timeout"
    if "deadline passed" in text:
        return "deadline"
    return "tool_error"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def _result_text(result: ToolResult) -> str:
    if result.content is not None:
        return result.content
    return _json(result.data)


def _output_messages(message: AssistantMessage) -> str:
    """The assistant turn in the conventions' output-message shape (text and tool calls)."""
    out = _assistant_message(message, reasoning=False)
    if message.finish_reason:
        out["finish_reason"] = message.finish_reason
    return _json([out])


def _assistant_message(message: AssistantMessage, *, reasoning: bool = True) -> dict[str, Any]:
    """An assistant turn as a message of the conventions: text, reasoning and tool calls."""
    parts: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "content": part.text})
        elif isinstance(part, ThinkingPart) and reasoning:
            parts.append({"type": "reasoning", "content": part.text})
        elif isinstance(part, ToolCall):
            arguments = part.arguments if part.arguments is not None else part.raw_arguments
            parts.append(
                {"type": "tool_call", "id": part.id, "name": part.name, "arguments": arguments}
            )
    return {"role": "assistant", "parts": parts}


def _plain_message(message: SystemMessage | UserMessage) -> dict[str, Any]:
    """A system or user message of the conversation as a message of the conventions."""
    if isinstance(message, SystemMessage):
        return {"role": "system", "parts": [{"type": "text", "content": message.content}]}
    return {"role": "user", "parts": [{"type": "text", "content": message.text}]}


def _tool_message(call_id: str, text: str) -> dict[str, Any]:
    """What the model was sent for one call, as the conventions' tool message."""
    return {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": call_id, "response": text}],
    }


def _refusal_text(event: UnknownTool | InvalidArguments | DuplicateSuppressed) -> str:
    """A refused call's answer as the events tell it (the loop words the exact text itself)."""
    if isinstance(event, UnknownTool):
        offered = ", ".join(event.offered) or "none"
        return f"refused: no tool named {event.name!r} is offered (offered: {offered})"
    if isinstance(event, InvalidArguments):
        return f"refused: invalid arguments: {event.reason}"
    return f"refused: a duplicate of call {event.first_call_id}"


def _scalar(value: Any) -> Any:
    if isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
        return value
    return str(value)


def _set_usage(span: Span, usage: Usage, cost: float | None) -> None:
    """The usage attributes of a chat or agent span: the conventions' token counts (cached
    input and cache writes inside the input, reasoning inside the output), and the cost."""
    for name, value in (
        (c.INPUT_TOKENS, usage.input_tokens),
        (c.OUTPUT_TOKENS, usage.output_tokens),
        (c.CACHE_READ_TOKENS, usage.cache_read_tokens),
        (c.CACHE_CREATION_TOKENS, usage.cache_write_tokens),
        (c.REASONING_TOKENS, usage.reasoning_tokens),
    ):
        if value is not None:
            span.set_attribute(name, value)
    if cost is not None:
        span.set_attribute(c.COST, cost)
