"""The ``openai-responses`` adapter: the OpenAI Responses API.

Every output item of a turn goes back unchanged in the next request (reasoning items, messages
with their ids, provider-run tool items), kept as :class:`OpaquePart`; function calls become
:class:`ToolCall` parts and their results ``function_call_output`` items.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, ClassVar, Final

import attrs

from toolwire import FunctionSpec
from toolwire.adapters import (
    CallAssembler,
    EmitEvent,
    ModelRequest,
    NamedToolChoice,
    ProviderError,
    RenderedHistory,
    RenderedMessages,
    check_tool_choice,
    event_object,
    extra_fields,
    parse_arguments,
    provider_call_events,
    provider_tools,
    unique_call_ids,
    wire_call_id,
    wire_call_ids,
    wire_objects,
)
from toolwire.events import Event
from toolwire.messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    OpaquePart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

from ._common import (
    HostProfile,
    OpenAIAdapter,
    WireFunction,
    arguments_text,
    check_output_options,
    error_in_body,
    host_profile,
    output_schema,
    response_id,
    responses_usage,
    wire_function,
)
from ._provider_tools import PROGRESS_EVENT, progress_message, result_of_item

__all__ = [
    "API",
    "OpenAIResponsesAdapter",
    "ResponsesStream",
    "parse_response",
    "render_responses_input",
    "render_responses_request",
    "render_responses_tools",
]

API: Final = "openai-responses"

# Output items of tools the provider runs itself; reported as calls, never run locally.
PROVIDER_TOOL_ITEMS: Final = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "image_generation_call",
        "code_interpreter_call",
        "mcp_call",
    }
)


# -- rendering ---------------------------------------------------------------------------------


def _tool(function: WireFunction) -> dict[str, Any]:
    # `strict` is always written: the Responses API takes a missing flag as true.
    return {
        "type": "function",
        "name": function.name,
        "description": function.description,
        "parameters": function.parameters,
        "strict": function.strict,
    }


def render_responses_tools(
    functions: Sequence[FunctionSpec], *, binds_strict: bool = False
) -> list[dict[str, Any]]:
    """The ``tools`` array: flat ``{"type": "function", name, description, parameters, strict}``."""
    return [_tool(wire_function(f, binds_strict=binds_strict)) for f in functions]


def _user(message: UserMessage) -> dict[str, Any]:
    if isinstance(message.content, str):
        return {"role": "user", "content": message.content}
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "input_text", "text": part.text})
        elif isinstance(part, OpaquePart) and part.api == API:
            parts.append(dict(part.data))
    return {"role": "user", "content": parts}


def _function_call(call: ToolCall) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "function_call",
        "call_id": wire_call_id(call),
        "name": call.name,
        "arguments": arguments_text(call),
    }
    item_id = (call.provider_data or {}).get("item_id")
    if isinstance(item_id, str) and item_id:
        item["id"] = item_id
    return item


def _assistant_items(message: AssistantMessage) -> list[dict[str, Any]]:
    own = message.api == API
    # Text that came from this API is inside the message items kept as opaque parts.
    covered = False
    if own:
        for p in message.parts:
            if isinstance(p, OpaquePart) and p.api == API and _item_type(p.data) == "message":
                covered = True
                break
    items: list[dict[str, Any]] = []
    text: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if not covered and part.text:
                text.append(part.text)
            continue
        if text:  # the text before this part, as one message
            items.append(_text_item(text))
            text = []
        if isinstance(part, OpaquePart):
            if part.api == API:
                items.append(dict(part.data))
        elif isinstance(part, ToolCall):
            if part.provider_executed:
                item = (part.provider_data or {}).get("item")
                if own and isinstance(item, Mapping):
                    items.append(dict(item))
            else:
                items.append(_function_call(part))
    if text:
        items.append(_text_item(text))
    return items


def _text_item(text: list[str]) -> dict[str, Any]:
    return {"role": "assistant", "content": "".join(text)}


def _item_type(data: Any) -> Any:
    return data.get("type") if isinstance(data, Mapping) else None


def _items(message: Message, wire_id: Any) -> list[dict[str, Any]]:
    """The input items of one message (a system message not first among them); ``wire_id``
    is the id a result's call has on the wire."""
    if isinstance(message, SystemMessage):
        return [{"role": "system", "content": message.content}]
    if isinstance(message, UserMessage):
        return [_user(message)]
    if isinstance(message, AssistantMessage):
        return _assistant_items(message)
    if isinstance(message, ToolResultMessage):
        output = message.result.model_text()
        return [{"type": "function_call_output", "call_id": wire_id, "output": output}]
    return []


def render_responses_input(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(instructions, input)``: a leading system message becomes ``instructions``; the rest
    becomes input items, results as ``function_call_output`` items by ``call_id``."""
    return _responses_input(messages, _items)


def _responses_input(
    messages: Sequence[Message], render: Callable[[Message, Any], list[dict[str, Any]]]
) -> tuple[str | None, list[dict[str, Any]]]:
    """``(instructions, input)``, each message's items rendered by ``render`` (:func:`_items`,
    or a :class:`RenderedMessages` of it)."""
    fold = _Input(render)
    for message in messages:
        fold.feed(message)
    return fold.result()


class _Input:
    """``(instructions, input)`` built one message at a time, so a run's next request adds only
    its new messages (a fold of :class:`RenderedHistory`)."""

    __slots__ = ("_fed", "_instructions", "_items", "_render", "_wire_ids")

    def __init__(self, render: Callable[[Message, Any], list[dict[str, Any]]]) -> None:
        self._render = render
        self._fed = 0
        self._instructions: str | None = None
        self._items: list[dict[str, Any]] = []
        self._wire_ids: dict[str, str] = {}

    def feed(self, message: Message) -> None:
        first = self._fed == 0
        self._fed += 1
        if first and isinstance(message, SystemMessage):
            self._instructions = message.content
            return
        wire_id = None
        if isinstance(message, AssistantMessage):
            self._wire_ids.update(wire_call_ids((message,)))
        elif isinstance(message, ToolResultMessage):
            wire_id = self._wire_ids.get(message.call_id, message.call_id)
        self._items.extend(self._render(message, wire_id))

    def copy(self) -> _Input:
        # Made without __init__: a fold is copied every request.
        other = _Input.__new__(_Input)
        other._render = self._render
        other._fed = self._fed
        other._instructions = self._instructions
        other._items = list(self._items)
        other._wire_ids = dict(self._wire_ids)
        return other

    def result(self) -> tuple[str | None, list[dict[str, Any]]]:
        """A new list (a request may add to it), of the kept renderings."""
        return self._instructions, list(self._items)


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, NamedToolChoice):
        return {"type": "function", "name": choice.name}
    return choice


def render_responses_request(
    request: ModelRequest,
    config: Any,
    *,
    profile: HostProfile | None = None,
    tools: list[dict[str, Any]] | None = None,
    rendered_input: tuple[str | None, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The whole request body for ``request`` under the ``[provider]`` config ``config``.

    As for Chat Completions: ``tool_choice`` when not ``auto``, ``parallel_tool_calls: false``
    for serial execution where the host accepts it, ``max_output_tokens`` and ``temperature``
    from the config, the tools the provider runs itself (``[provider] provider_tools``) after the
    local ones, then ``[provider] options`` and the request's options merged in (for example
    ``store = false`` with ``include = ["reasoning.encrypted_content"]`` for stateless use;
    never the tool fields the loop decides).
    ``tools`` is the rendered ``tools`` array when the caller has it already, and
    ``rendered_input`` the ``(instructions, input)`` of :func:`render_responses_input`. A run's
    typed output (``request.output``) goes out as ``text.format`` of type ``json_schema`` (other
    ``text`` options, such as ``verbosity``, kept beside it).
    """
    profile = profile or host_profile(config)
    if not config.model:
        raise ProviderError(
            f"{API}: no model is configured; set provider.model (for example 'gpt-4.1-mini')",
            api=API,
        )
    check_tool_choice(request, API)
    if rendered_input is None:
        rendered_input = render_responses_input(request.messages)
    instructions, items = rendered_input
    body: dict[str, Any] = {"model": config.model, "input": items}
    if instructions is not None:
        body["instructions"] = instructions
    if request.functions:
        if tools is None:
            tools = render_responses_tools(request.functions, binds_strict=profile.binds_strict)
        body["tools"] = tools
        if request.tool_choice != "auto":
            body["tool_choice"] = _tool_choice(request.tool_choice)
        if request.parallel_tool_calls is False and profile.accepts_parallel:
            body["parallel_tool_calls"] = False
    hosted = provider_tools(config)
    if hosted:
        body["tools"] = [*body.get("tools", ()), *hosted]
    if config.max_tokens is not None:
        body["max_output_tokens"] = config.max_tokens
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if request.stream:
        body["stream"] = True
    extra = extra_fields(config, request, API)
    check_output_options(request, extra, API)
    if request.output is not None:
        schema, strict = output_schema(request.output, binds_strict=profile.binds_strict)
        text = extra.pop("text", None)
        body["text"] = {
            **(text if isinstance(text, Mapping) else {}),
            "format": {
                "type": "json_schema",
                "name": request.output.name,
                "description": request.output.description,
                "schema": schema,
                "strict": strict,
            },
        }
    body.update(extra)
    return body


# -- parsing -----------------------------------------------------------------------------------


def _missing_call_id(item: Mapping[str, Any]) -> ProviderError:
    return ProviderError(
        f"{API}: the function_call item {item.get('id')!r} ({item.get('name')!r}) has no call_id, "
        "so its result cannot be sent back; the run cannot continue",
        api=API,
    )


def function_call_from_item(item: Mapping[str, Any]) -> ToolCall:
    """The :class:`ToolCall` of a ``function_call`` item.

    :raises ProviderError: when the item has no ``call_id``.
    """
    call_id = item.get("call_id")
    if not call_id:
        raise _missing_call_id(item)
    name = str(item.get("name") or "")
    raw = item.get("arguments")
    arguments, reason = parse_arguments(raw)
    raw_text = raw if isinstance(raw, str) else (None if raw is None else json.dumps(raw))
    item_id = item.get("id")
    return ToolCall(
        id=str(call_id),
        name=name,
        arguments=arguments,
        raw_arguments=raw_text,
        invalid_reason=reason,
        provider_data={"item_id": item_id} if item_id else None,
    )


def provider_call_from_item(item: Mapping[str, Any]) -> ToolCall:
    """The :class:`ToolCall` (``provider_executed``) reporting a tool the provider ran."""
    kind = str(item.get("type"))
    arguments: dict[str, Any] = {}
    for field in ("action", "queries", "code", "arguments", "server_label"):
        if field in item and item[field] is not None:
            value = item[field]
            if field == "arguments" and isinstance(value, str):
                parsed, _ = parse_arguments(value)
                value = parsed if parsed is not None else value
            arguments[field] = value
    return ToolCall(
        id=str(item.get("id") or ""),
        name=str(item.get("name") or kind.removesuffix("_call")),
        arguments=arguments,
        provider_executed=True,
        provider_data={"item": dict(item)},
    )


def _parts_of_item(
    item: Mapping[str, Any], calls: Mapping[str, ToolCall] | None
) -> list[AssistantPart]:
    kind = item.get("type")
    if kind == "message":
        parts: list[AssistantPart] = []
        for content in item.get("content") or ():
            if not isinstance(content, Mapping):
                continue
            text = content.get("text") if content.get("type") == "output_text" else None
            if content.get("type") == "refusal":
                text = content.get("refusal")
            if isinstance(text, str) and text:
                parts.append(TextPart(text))
        parts.append(OpaquePart(api=API, data=dict(item)))
        return parts
    if kind == "function_call":
        item_id = item.get("id")
        if calls is not None and isinstance(item_id, str) and item_id in calls:
            return [calls[item_id]]
        return [function_call_from_item(item)]
    if kind in PROVIDER_TOOL_ITEMS:
        item_id = item.get("id")
        if calls is not None and isinstance(item_id, str) and item_id in calls:
            return [calls[item_id]]
        return [provider_call_from_item(item)]
    return [OpaquePart(api=API, data=dict(item))]


def _finish(response: Mapping[str, Any], parts: Sequence[AssistantPart]) -> str | None:
    status = response.get("status")
    if status == "incomplete":
        details = response.get("incomplete_details") or {}
        reason = details.get("reason") if isinstance(details, Mapping) else None
        return "length" if reason == "max_output_tokens" else str(reason or "incomplete")
    for part in parts:
        if isinstance(part, ToolCall) and not part.provider_executed:
            return "tool_calls"
    if status in (None, "completed"):
        return "stop"
    return str(status)


def _failed(response: Mapping[str, Any]) -> ProviderError | None:
    if response.get("status") != "failed":
        return error_in_body(response, API)
    error = response.get("error") or {}
    message = str(error.get("message") if isinstance(error, Mapping) else error) or "failed"
    code = str(error.get("code") or "") if isinstance(error, Mapping) else ""
    return ProviderError(
        f"{API}: the response failed: {message}",
        api=API,
        retryable=code in ("server_error", "rate_limit_exceeded"),
        provider_message=message,
    )


def parse_response(
    payload: Mapping[str, Any],
    *,
    calls: Mapping[str, ToolCall] | None = None,
) -> AssistantMessage:
    """The assistant turn of a ``response`` object.

    Message items give :class:`TextPart` s and are kept whole as an :class:`OpaquePart`;
    reasoning and unknown items are kept as :class:`OpaquePart`; ``function_call`` items become
    calls; provider-run tool items become ``provider_executed`` calls. ``calls`` maps item ids to
    calls already assembled from a stream.

    :raises ProviderError: when the response failed, or a function call has no ``call_id``.
    """
    failure = _failed(payload)
    if failure is not None:
        raise failure
    parts: list[AssistantPart] = []
    for item in wire_objects(payload.get("output"), "output", API):
        parts.extend(_parts_of_item(item, calls))
    return AssistantMessage(
        parts=unique_call_ids(parts),
        api=API,
        model=payload.get("model"),
        finish_reason=_finish(payload, parts),
        usage=responses_usage(payload.get("usage")),
        response_id=response_id(payload),
    )


def _key(item_id: Any, output_index: Any) -> Hashable:
    """Stream items are keyed by id; a host that sends none is keyed by output position."""
    return item_id if isinstance(item_id, str) and item_id else ("output", output_index)


class ResponsesStream:
    """Reads the events of a streamed Responses answer, emitting events as they come.

    Calls are keyed by item id; arguments stream from ``response.function_call_arguments.delta``
    and the item of ``response.output_item.done`` is authoritative. The turn is built from the
    final response when it arrives (``response.completed`` / ``response.incomplete``), else from
    the items that completed.
    """

    def __init__(self, request: ModelRequest, emit: EmitEvent) -> None:
        self._calls = CallAssembler(request, emit)
        self._items: dict[int, Mapping[str, Any]] = {}
        self._completed: dict[str, ToolCall] = {}
        self._response: Mapping[str, Any] | None = None
        self._started: Mapping[str, Any] = {}
        self._done = False

    def feed(self, data: str) -> bool:
        """Take the data of one event; True once the response is over."""
        if data == "[DONE]":
            return True
        event = event_object(data, API)
        kind = event.get("type")
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            self._calls.text(str(event.get("delta") or ""))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            self._calls.thinking(str(event.get("delta") or ""))
        elif kind == "response.output_item.added":
            self._item_added(event.get("item") or {}, event.get("output_index"))
        elif kind == "response.function_call_arguments.delta":
            key = _key(event.get("item_id"), event.get("output_index"))
            self._calls.arguments(key, str(event.get("delta") or ""))
        elif kind == "response.output_item.done":
            self._item_done(event)
        elif kind == "response.created":
            started = event.get("response")
            # Parsed JSON holds dicts: the exact type check spares the ABC's (run in Python).
            if type(started) is dict or isinstance(started, Mapping):
                self._started = started
            else:
                self._started = {}
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self._response = event.get("response") or {}
            failure = _failed(self._response)
            if failure is not None:
                raise failure
            self._done = True
            return True
        # Checked after the kinds every stream sends: a regex match per event costs.
        elif isinstance(kind, str) and (phase := PROGRESS_EVENT.fullmatch(kind)) is not None:
            key = _key(event.get("item_id"), event.get("output_index"))
            self._calls.progress(key, progress_message(phase.group(2)))
        elif kind == "error":
            message = str(event.get("message") or event.get("code") or "error")
            code = str(event.get("code") or "")
            raise ProviderError(
                f"{API}: the stream reported an error: {message}",
                api=API,
                retryable=code in ("server_error", "rate_limit_exceeded", "overloaded"),
                provider_message=message,
            )
        return False

    def _item_added(self, item: Mapping[str, Any], index: Any) -> None:
        key = _key(item.get("id"), index)
        kind = item.get("type")
        if kind == "function_call":
            self._calls.begin(
                key,
                call_id=item.get("call_id") or None,
                name=item.get("name") or None,
                provider_data={"item_id": item["id"]} if item.get("id") else None,
            )
        elif kind in PROVIDER_TOOL_ITEMS:
            self._calls.begin(
                key,
                call_id=str(item.get("id") or ""),
                name=str(item.get("name") or str(kind).removesuffix("_call")),
                provider_executed=True,
            )

    def _item_done(self, event: Mapping[str, Any]) -> None:
        item = event.get("item") or {}
        index = event.get("output_index")
        if not isinstance(index, int):
            index = len(self._items)
        self._items[index] = item
        item_id = item.get("id")
        key = _key(item_id, index)
        kind = item.get("type")
        if kind == "function_call":
            if not item.get("call_id"):
                raise _missing_call_id(item)
            if not self._calls.has(key):
                self._item_added(item, index)
            call = self._calls.complete(key, final_arguments=item.get("arguments"), use_final=True)
        elif kind in PROVIDER_TOOL_ITEMS:
            if not self._calls.has(key):
                self._item_added(item, index)
            call = self._calls.complete(
                key,
                final_arguments=provider_call_from_item(item).arguments,
                use_final=True,
                provider_data={"item": dict(item)},
            )
            if call is not None:
                self._calls.provider_result(call, result_of_item(item, call.name))
        else:
            return
        if call is not None and isinstance(item_id, str):
            self._completed[item_id] = call

    def result(self) -> AssistantMessage:
        """The assistant turn; calls left open (the stream was cut) end invalid."""
        response = self._response or {}
        if isinstance(response.get("output"), list) and response["output"]:
            return parse_response(response, calls=self._completed)
        # No final response with its output: build the turn from the items that completed.
        cut = [] if self._done else self._calls.finish("the stream ended before the response")
        partial = {
            **self._started,
            **response,
            "output": [self._items[i] for i in sorted(self._items)],
        }
        message = parse_response(partial, calls=self._completed)
        if not cut:
            return message
        return attrs.evolve(message, parts=(*message.parts, *cut), finish_reason="incomplete")


# -- the adapter -------------------------------------------------------------------------------


class OpenAIResponsesAdapter(OpenAIAdapter):
    """``openai-responses``: the Responses API at ``{base_url}/responses``."""

    api: ClassVar[str] = API
    path: ClassVar[str] = "/responses"

    @functools.cached_property
    def _messages(self) -> RenderedMessages[list[dict[str, Any]]]:
        """Each message's input items, kept while the message lives."""
        return RenderedMessages(_items)

    @functools.cached_property
    def _history(self) -> RenderedHistory[tuple[str | None, list[dict[str, Any]]]]:
        """Each run's ``(instructions, input)`` up to its last request."""
        render = self._messages.get
        return RenderedHistory(lambda: _Input(render))

    def wire_tools(
        self, functions: Sequence[FunctionSpec], *, binds_strict: bool
    ) -> list[dict[str, Any]]:
        return render_responses_tools(functions, binds_strict=binds_strict)

    def request_body(
        self, request: ModelRequest, tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        rendered = self._history.get(request.run_id, request.messages)
        return render_responses_request(
            request, self.config, profile=self.profile, tools=tools, rendered_input=rendered
        )

    # The parser itself, not a method that calls it (it runs every unstreamed round).
    parse = staticmethod(parse_response)

    def reported(self, request: ModelRequest, message: AssistantMessage) -> list[Event]:
        """The provider-run calls of a whole answer, and what each came to (its item says)."""
        results = {
            call.id: result_of_item(item, call.name)
            for call in message.tool_calls
            if call.provider_executed
            and isinstance(item := (call.provider_data or {}).get("item"), Mapping)
        }
        return provider_call_events(request, message, results)

    def stream_reader(self, request: ModelRequest, emit: EmitEvent) -> ResponsesStream:
        return ResponsesStream(request, emit)
