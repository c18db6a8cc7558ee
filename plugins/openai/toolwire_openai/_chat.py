"""The ``openai-chat`` adapter: OpenAI Chat Completions and every host that copies it.

Rendering and parsing are plain functions of JSON values, testable without a server; the adapter
class only adds the sending.
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
    ToolChoice,
    check_tool_choice,
    event_object,
    extra_fields,
    new_call_id,
    parse_arguments,
    provider_tools,
    unique_call_ids,
    wire_call_id,
    wire_call_ids,
    wire_objects,
)
from toolwire.messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    OpaquePart,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

from ._common import (
    HostProfile,
    OpenAIAdapter,
    WireFunction,
    arguments_text,
    chat_usage,
    check_output_options,
    error_in_body,
    finish_reason,
    host_profile,
    output_schema,
    response_id,
    wire_function,
)
from ._patterns import bounded_strings, server_schema

SERVER_STRING_LENGTH: Final = 200
"""The ``maxLength`` given to string arguments without one, for a grammar-building server."""

__all__ = [
    "API",
    "ChatStream",
    "OpenAIChatAdapter",
    "parse_chat_completion",
    "render_chat_messages",
    "render_chat_request",
    "render_chat_tools",
]

API: Final = "openai-chat"
_CALL_FIELDS: Final = frozenset({"id", "type", "function", "index"})


# -- rendering ---------------------------------------------------------------------------------


def _tool(function: WireFunction, *, binds_strict: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": function.name,
        "description": function.description,
        "parameters": function.parameters,
    }
    if binds_strict:
        # Said either way to a host that binds output: a tool sent as written is plainly
        # non-strict. Other hosts get no flag, which means the same and is understood by all.
        body["strict"] = function.strict
    return {"type": "function", "function": body}


def render_chat_tools(
    functions: Sequence[FunctionSpec],
    *,
    binds_strict: bool = False,
    anchored_patterns: bool = False,
) -> list[dict[str, Any]]:
    """The ``tools`` array: ``{"type": "function", "function": {name, description, parameters}}``,
    projected to strict form (``"strict": true``) when the host binds output; a tool it cannot
    project goes to such a host as written, with ``"strict": false``. With
    ``anchored_patterns`` every ``pattern`` is written as a grammar-building server takes it
    (see :func:`~toolwire_openai._patterns.server_schema`), and strings without a ``maxLength``
    get one of 200 characters (that server writes arguments without a token limit)."""
    tools = []
    for spec in functions:
        function = wire_function(spec, binds_strict=binds_strict)
        if anchored_patterns:
            parameters = bounded_strings(server_schema(function.parameters), SERVER_STRING_LENGTH)
            function = attrs.evolve(function, parameters=parameters)
        tools.append(_tool(function, binds_strict=binds_strict))
    return tools


def _user_content(message: UserMessage) -> str | list[dict[str, Any]]:
    if isinstance(message.content, str):
        return message.content
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": part.text})
        elif isinstance(part, OpaquePart) and part.api == API:
            parts.append(dict(part.data))
    return parts


def _tool_call(call: ToolCall) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": wire_call_id(call),
        "type": "function",
        "function": {"name": call.name, "arguments": arguments_text(call)},
    }
    extra = (call.provider_data or {}).get("extra")
    # None, nearly always, is told apart before the Mapping check, which runs in Python.
    if extra is not None and isinstance(extra, Mapping):
        # Fields some hosts attach to a call and want back (Gemini's thought signatures).
        for key, value in extra.items():
            item.setdefault(key, value)
    return item


def _assistant(message: AssistantMessage) -> dict[str, Any] | None:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ToolCall) and not part.provider_executed:
            calls.append(_tool_call(part))
    text = "".join(texts)
    if not text and not calls:
        return None
    # `content` is always a string, "" beside calls: OpenAI accepts both null and "", but hosts
    # that read the history with a chat template (llama-cpp-python) fail on a missing or null one.
    out: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        out["tool_calls"] = calls
    return out


def _message(message: Message, wire_id: Any) -> dict[str, Any] | None:
    """One message on the wire (None for one the API does not receive); ``wire_id`` is the id
    a result's call has on the wire."""
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, UserMessage):
        return {"role": "user", "content": _user_content(message)}
    if isinstance(message, AssistantMessage):
        return _assistant(message)
    if isinstance(message, ToolResultMessage):
        return {"role": "tool", "tool_call_id": wire_id, "content": message.result.model_text()}
    return None


def render_chat_messages(
    messages: Sequence[Message], *, results_as_user: bool = False
) -> list[dict[str, Any]]:
    """The ``messages`` array: system, user, assistant (``tool_calls``) and one ``role: "tool"``
    message per result, its ``tool_call_id`` naming the call.

    With ``results_as_user`` (a server whose template has no turn for ``role: "tool"``) the
    results of a round go in one user message instead, each in a ``<tool_result>`` envelope
    naming its call (see :func:`toolwire.prompted.render_tool_results`).
    """
    return _chat_messages(messages, _message, results_as_user=results_as_user)


def _chat_messages(
    messages: Sequence[Message],
    render: Callable[[Message, Any], dict[str, Any] | None],
    *,
    results_as_user: bool = False,
) -> list[dict[str, Any]]:
    """The ``messages`` array, each message rendered by ``render`` (:func:`_message`, or a
    :class:`RenderedMessages` of it); with ``results_as_user``, a round's results folded into
    one user turn."""
    fold = _ChatMessages(render, results_as_user=results_as_user)
    for message in messages:
        fold.feed(message)
    return fold.result()


class _ChatMessages:
    """The ``messages`` array built one message at a time, so a run's next request adds only
    its new messages (a fold of :class:`RenderedHistory`)."""

    __slots__ = ("_out", "_pending", "_render", "_results_as_user", "_wire_ids")

    def __init__(
        self,
        render: Callable[[Message, Any], dict[str, Any] | None],
        *,
        results_as_user: bool,
    ) -> None:
        self._render = render
        self._results_as_user = results_as_user
        self._out: list[dict[str, Any]] = []
        self._pending: list[ToolResultMessage] = []
        self._wire_ids: dict[str, str] = {}

    def feed(self, message: Message) -> None:
        if isinstance(message, AssistantMessage):
            self._wire_ids.update(wire_call_ids((message,)))
        if self._results_as_user:
            if isinstance(message, ToolResultMessage):
                self._pending.append(message)
                return
            if self._pending:
                self._out.append(_results_turn(self._pending, self._wire_ids))
                self._pending = []
        wire_id = None
        if isinstance(message, ToolResultMessage):
            wire_id = self._wire_ids.get(message.call_id, message.call_id)
        rendered = self._render(message, wire_id)
        if rendered is not None:
            self._out.append(rendered)

    def copy(self) -> _ChatMessages:
        # Made without __init__: a fold is copied every request.
        other = _ChatMessages.__new__(_ChatMessages)
        other._render, other._results_as_user = self._render, self._results_as_user
        other._out = list(self._out)
        other._pending = list(self._pending)
        other._wire_ids = dict(self._wire_ids)
        return other

    def result(self) -> list[dict[str, Any]]:
        """A new list (a request may add to it), of the kept renderings."""
        if self._pending:
            return [*self._out, _results_turn(self._pending, self._wire_ids)]
        return list(self._out)


def _results_turn(
    results: Sequence[ToolResultMessage], wire_ids: Mapping[str, str]
) -> dict[str, Any]:
    from toolwire.prompted import render_tool_results

    named = [attrs.evolve(r, call_id=wire_ids.get(r.call_id, r.call_id)) for r in results]
    return {"role": "user", "content": render_tool_results(named)}


SYSTEM_TURN: Final = "Answer the user. When one of the functions helps, call it."
"""The system turn sent with tools to a server whose template shows them only inside one
(``system_turn`` of the profile), when the conversation has none."""


def sent_tool_choice(request: ModelRequest, profile: HostProfile) -> ToolChoice:
    """The tool choice the request is sent with: the loop's, except that a server which cannot
    write a text answer under ``auto`` (``answers_under_auto`` False) is asked for the answer
    with ``none`` once the results it answers all succeeded."""
    choice = request.tool_choice
    if choice != "auto" or profile.answers_under_auto or not request.functions:
        return choice
    results = []
    for message in reversed(request.messages):
        if not isinstance(message, ToolResultMessage):
            break
        results.append(message.result)
    if results and all(result.is_ok for result in results):
        return "none"
    return choice


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, NamedToolChoice):
        return {"type": "function", "function": {"name": choice.name}}
    return choice


def _check_server_choice(request: ModelRequest, profile: HostProfile) -> None:
    """Refuse a tool choice the named server profile does not honour, before sending."""
    if not request.functions:
        return
    choice = request.tool_choice
    kind = "named" if isinstance(choice, NamedToolChoice) else str(choice)
    if kind in profile.tool_choices:
        return
    valid = ", ".join(sorted(profile.tool_choices))
    raise ProviderError(
        f"{API}: tool_choice {kind!r} is not honoured by the {profile.server} server profile "
        f"([providers.openai] profile = {profile.server!r}); it honours {valid}",
        api=API,
    )


def render_chat_request(
    request: ModelRequest,
    config: Any,
    *,
    profile: HostProfile | None = None,
    tools: list[dict[str, Any]] | None = None,
    messages: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The whole request body for ``request`` under the ``[provider]`` config ``config``.

    ``tool_choice`` is sent whenever tools are, ``auto`` included: some hosts (llama-cpp-python's
    server) read a missing one as "no tools". ``parallel_tool_calls: false`` is sent when the loop
    runs calls one by one and the host accepts the flag. ``[provider] options`` and the request's
    options are merged in last, so any other body field (``seed``, ``reasoning_effort`` …) can be
    set, but never the tool fields the loop decides. ``tools`` is the rendered ``tools`` array
    when the caller has it already, and ``messages`` the ``messages`` array. A run's typed
    output (``request.output``) goes out as ``response_format`` of type ``json_schema``, strict
    where the host binds output.
    """
    profile = profile or host_profile(config)
    if not config.model:
        raise ProviderError(
            f"{API}: no model is configured; set provider.model (for example 'gpt-4o-mini')",
            api=API,
        )
    check_tool_choice(request, API)
    _check_server_choice(request, profile)
    choice = sent_tool_choice(request, profile)
    if messages is None:
        messages = render_chat_messages(request.messages, results_as_user=profile.results_as_user)
    body: dict[str, Any] = {"model": config.model, "messages": messages}
    # A server that takes no `tool_choice` honours "none" only by not being sent the tools.
    if request.functions and (profile.sends_tool_choice or choice != "none"):
        if tools is None:
            tools = render_chat_tools(
                request.functions,
                binds_strict=profile.binds_strict,
                anchored_patterns=profile.anchored_patterns,
            )
        body["tools"] = tools
        if profile.sends_tool_choice:
            body["tool_choice"] = _tool_choice(choice)
        if profile.system_turn and not (messages and messages[0]["role"] == "system"):
            messages.insert(0, {"role": "system", "content": SYSTEM_TURN})
        if request.parallel_tool_calls is False and profile.accepts_parallel:
            body["parallel_tool_calls"] = False
    if config.max_tokens is not None:
        body[profile.max_tokens_field] = config.max_tokens
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if request.stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    if provider_tools(config):
        raise ProviderError(
            f"{API}: [provider] provider_tools lists tools the provider runs itself, and Chat "
            "Completions has none; use the adapter 'openai-responses' for them",
            api=API,
        )
    if request.output is not None:
        schema, strict = output_schema(request.output, binds_strict=profile.binds_strict)
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": request.output.name,
                "description": request.output.description,
                "schema": schema,
                "strict": strict,
            },
        }
    extra = extra_fields(config, request, API)
    check_output_options(request, extra, API)
    body.update(extra)
    return body


# -- parsing -----------------------------------------------------------------------------------


def _text_of(content: Any) -> str:
    if type(content) is str:
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                pieces.append(part["text"])
            elif isinstance(part, str):
                pieces.append(part)
        return "".join(pieces)
    return ""


def _reasoning_of(mapping: Mapping[str, Any]) -> str:
    # DeepSeek and vLLM send `reasoning_content`; OpenRouter and Ollama send `reasoning`.
    value = mapping.get("reasoning_content") or mapping.get("reasoning")
    return value if type(value) is str else ""


def _extra(call: Mapping[str, Any]) -> dict[str, Any] | None:
    if call.keys() <= _CALL_FIELDS:
        return None
    extra = {k: v for k, v in call.items() if k not in _CALL_FIELDS}
    return {"extra": extra} if extra else None


def _call_from_wire(call: Mapping[str, Any], id_factory: Callable[[], str]) -> ToolCall:
    function = call.get("function") or {}
    name = str(function.get("name") or "")
    raw = function.get("arguments")
    arguments, reason = parse_arguments(raw)
    raw_text = raw if type(raw) is str else (None if raw is None else json.dumps(raw))
    return ToolCall(
        id=str(call.get("id") or "") or id_factory(),
        name=name,
        arguments=arguments,
        raw_arguments=raw_text,
        invalid_reason=reason,
        provider_data=_extra(call),
    )


def parse_chat_completion(
    payload: Mapping[str, Any],
    *,
    id_factory: Callable[[], str] = new_call_id,
) -> AssistantMessage:
    """The assistant turn of a (non-streamed) ``chat.completion`` answer.

    Parts in order: reasoning (``reasoning_content`` / ``reasoning``), text (or the refusal), tool
    calls; a call without an id gets one; a legacy ``function_call`` counts as one call.

    :raises ProviderError: when the answer holds an error or no choice.
    """
    error = error_in_body(payload, API)
    if error is not None:
        raise error
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ProviderError(f"{API}: the answer has no choices: {str(payload)[:200]}", api=API)
    choice = choices[0]
    message = choice.get("message") or {}
    parts: list[AssistantPart] = []
    reasoning = _reasoning_of(message)
    if reasoning:
        parts.append(ThinkingPart(text=reasoning))
    text = _text_of(message.get("content")) or _text_of(message.get("refusal"))
    if text:
        parts.append(TextPart(text))
    for call in wire_objects(message.get("tool_calls"), "message.tool_calls", API):
        parts.append(_call_from_wire(call, id_factory))
    legacy = message.get("function_call")
    # None, nearly always, is told apart before the Mapping check, which runs in Python.
    if legacy is not None and isinstance(legacy, Mapping) and not message.get("tool_calls"):
        parts.append(_call_from_wire({"function": legacy}, id_factory))
    return AssistantMessage(
        parts=unique_call_ids(parts, id_factory),
        api=API,
        model=payload.get("model"),
        finish_reason=finish_reason(choice.get("finish_reason")),
        usage=chat_usage(payload.get("usage")),
        response_id=response_id(payload),
    )


class ChatStream:
    """Reads the chunks of a streamed Chat Completions answer, emitting events as they come.

    Feed every server-sent event to :meth:`feed` (it returns True at ``[DONE]``), then call
    :meth:`result`. Calls are keyed by their ``index``; a host that leaves the index out gets its
    calls keyed by id, or by arrival. Calls complete when the finish reason arrives (or when the
    stream ends), so parallel calls may interleave.
    """

    def __init__(
        self,
        request: ModelRequest,
        emit: EmitEvent,
        *,
        id_factory: Callable[[], str] = new_call_id,
    ) -> None:
        self._calls = CallAssembler(request, emit, id_factory=id_factory)
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._finish: str | None = None
        self._model: str | None = None
        self._id: str | None = None
        self._usage: Any = None
        self._last_key: Hashable | None = None
        self._done = False

    def feed(self, data: str) -> bool:
        """Take the data of one event; True once the stream said ``[DONE]``."""
        if data == "[DONE]":
            self._done = True
            return True
        chunk = event_object(data, API)
        if "error" in chunk:  # checked here first: every chunk passes
            error = error_in_body(chunk, API)
            if error is not None:
                raise error
        if self._model is None and chunk.get("model"):
            self._model = chunk["model"]
        if self._id is None:
            self._id = response_id(chunk)
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        for choice in wire_objects(chunk.get("choices"), "choices", API):
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            reasoning = _reasoning_of(delta)
            if reasoning:
                self._thinking.append(reasoning)
                self._calls.thinking(reasoning)
            content, refusal = delta.get("content"), delta.get("refusal")
            # The deltas of a call and the finish carry neither (nothing falsy holds text).
            if content or refusal:
                text = _text_of(content) or _text_of(refusal)
                if text:
                    self._text.append(text)
                    self._calls.text(text)
            tool_calls = delta.get("tool_calls")
            if tool_calls is not None:
                for call in wire_objects(tool_calls, "delta.tool_calls", API):
                    self._call_delta(call)
            legacy = delta.get("function_call")
            # llama-cpp-python's server sends each call delta twice, as `tool_calls` and as the
            # legacy `function_call`: the legacy field counts only on its own. (None, nearly
            # always, is told apart before the Mapping check, which runs in Python.)
            if legacy is not None and isinstance(legacy, Mapping) and not tool_calls:
                self._call_delta({"index": 0, "function": legacy})
            if choice.get("finish_reason"):
                self._finish = choice["finish_reason"]
                self._calls.complete_open()
        return False

    def _key(self, call: Mapping[str, Any]) -> Hashable:
        index = call.get("index")
        if isinstance(index, int):
            return index
        # A host without indexes: a new id starts a new call, a delta without one continues.
        call_id = call.get("id")
        if call_id:
            return ("id", call_id)
        return 0 if self._last_key is None else self._last_key

    def _call_delta(self, call: Mapping[str, Any]) -> None:
        key = self._key(call)
        self._last_key = key
        function = call.get("function") or {}
        self._calls.begin(
            key,
            call_id=call.get("id") or None,
            name=function.get("name") or None,
            provider_data=_extra(call),
        )
        arguments = function.get("arguments")
        if type(arguments) is not str and isinstance(arguments, Mapping):
            arguments = json.dumps(arguments, ensure_ascii=False)
        if isinstance(arguments, str) and arguments:
            self._calls.arguments(key, arguments)

    def result(self) -> AssistantMessage:
        """The assistant turn; calls still open (the stream ended early) end invalid."""
        if self._finish is None:
            self._calls.finish("the stream ended without a finish reason")
        else:
            self._calls.complete_open()
        parts: list[AssistantPart] = []
        if self._thinking:
            parts.append(ThinkingPart(text="".join(self._thinking)))
        if self._text:
            parts.append(TextPart("".join(self._text)))
        parts.extend(self._calls.calls)
        return AssistantMessage(
            parts=parts,
            api=API,
            model=self._model,
            finish_reason=finish_reason(self._finish),
            usage=chat_usage(self._usage),
            response_id=self._id,
        )


# -- the adapter -------------------------------------------------------------------------------


class OpenAIChatAdapter(OpenAIAdapter):
    """``openai-chat``: Chat Completions at ``{base_url}/chat/completions``.

    ``base_url`` (default ``https://api.openai.com/v1``) makes it serve every OpenAI-compatible
    host: Ollama, vLLM, llama.cpp server, LM Studio, OpenRouter, Groq …; see
    :class:`~toolwire_openai._common.HostProfile` for the per-host defaults.
    """

    api: ClassVar[str] = API
    path: ClassVar[str] = "/chat/completions"

    @functools.cached_property
    def _messages(self) -> RenderedMessages[dict[str, Any] | None]:
        """Each message's rendering, kept while the message lives."""
        return RenderedMessages(_message)

    @functools.cached_property
    def _history(self) -> RenderedHistory[list[dict[str, Any]]]:
        """Each run's ``messages`` array up to its last request."""
        render, as_user = self._messages.get, self.profile.results_as_user
        return RenderedHistory(lambda: _ChatMessages(render, results_as_user=as_user))

    def wire_tools(
        self, functions: Sequence[FunctionSpec], *, binds_strict: bool
    ) -> list[dict[str, Any]]:
        return render_chat_tools(
            functions,
            binds_strict=binds_strict,
            anchored_patterns=self.profile.anchored_patterns,
        )

    def streams(self, request: ModelRequest) -> bool:
        """Streamed unless the server cannot stream an answer under tool choice ``auto``."""
        if not request.stream:
            return False
        if self.profile.streams_auto_choice or not request.functions:
            return True
        return sent_tool_choice(request, self.profile) != "auto"

    def request_body(
        self, request: ModelRequest, tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        messages = self._history.get(request.run_id, request.messages)
        return render_chat_request(
            request, self.config, profile=self.profile, tools=tools, messages=messages
        )

    # The parser itself, not a method that calls it (it runs every unstreamed round).
    parse = staticmethod(parse_chat_completion)

    def stream_reader(self, request: ModelRequest, emit: EmitEvent) -> ChatStream:
        return ChatStream(request, emit)
