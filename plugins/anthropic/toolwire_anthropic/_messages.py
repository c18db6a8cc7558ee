"""The ``anthropic-messages`` adapter: Anthropic's Messages API.

The assistant turn is its content blocks, and they go back unchanged: text, thinking with its
signature, redacted thinking, ``tool_use`` with any extra fields, provider-run tool blocks and
blocks of kinds this adapter does not know. All results of a round go back in one user message.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit

from toolwire import FunctionSpec
from toolwire.adapters import (
    ANTHROPIC_KEY_HEADER,
    AdapterCapabilities,
    CallAssembler,
    EmitEvent,
    HTTPProviderAdapter,
    ModelRequest,
    NamedToolChoice,
    ProviderError,
    RenderedHistory,
    RenderedMessages,
    RenderedTools,
    canonical_message,
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
    wire_request,
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
from toolwire.usage import Usage

from ._server_tools import is_result_block, message_results, result_of_block
from ._strict import StrictMode, strict_mode, strict_problems, wants_strict

__all__ = [
    "API",
    "DEFAULT_MAX_TOKENS",
    "AnthropicMessagesAdapter",
    "MessagesStream",
    "parse_message",
    "render_messages",
    "render_messages_request",
    "render_tools",
]

API: Final = "anthropic-messages"
ANTHROPIC_BASE_URL: Final = "https://api.anthropic.com"
ANTHROPIC_KEY_ENV: Final = "ANTHROPIC_API_KEY"
ANTHROPIC_VERSION: Final = "2023-06-01"
_HEADERS: Final[Mapping[str, str]] = MappingProxyType({"anthropic-version": ANTHROPIC_VERSION})
DEFAULT_MAX_TOKENS: Final = 4096
"""``max_tokens`` when the config sets none: the API requires it, and every current model
accepts this many."""

# Blocks of tools the provider runs itself: reported as calls, never run locally.
PROVIDER_CALL_BLOCKS: Final = frozenset({"server_tool_use", "mcp_tool_use"})
_TOOL_USE_FIELDS: Final = frozenset({"type", "id", "name", "input"})

STOP_REASONS: Final = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}

# Error types of stream `error` events worth sending again (when nothing was delivered).
_RETRYABLE_ERRORS: Final = frozenset({"overloaded_error", "api_error", "rate_limit_error"})


# -- rendering ---------------------------------------------------------------------------------


def render_tools(
    functions: Sequence[FunctionSpec], *, strict: StrictMode = "off"
) -> list[dict[str, Any]]:
    """The ``tools`` array: ``{name, description, input_schema}``, schemas as written, with
    ``"strict": true`` on the tools ``strict`` selects whose schemas fit the strict subset."""
    tools: list[dict[str, Any]] = []
    for f in functions:
        tool: dict[str, Any] = {
            "name": f.name,
            "description": f.description,
            "input_schema": dict(f.parameters),
        }
        if wants_strict(f.strict, strict) and not strict_problems(f.parameters):
            tool["strict"] = True
        tools.append(tool)
    return tools


def _user_content(message: UserMessage) -> str | list[dict[str, Any]]:
    if isinstance(message.content, str):
        return message.content
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, OpaquePart) and part.api == API:
            blocks.append(dict(part.data))
    return blocks


def _tool_use(call: ToolCall) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_use",
        "id": wire_call_id(call),
        "name": call.name,
        "input": dict(call.arguments) if call.arguments is not None else {},
    }
    extra = (call.provider_data or {}).get("extra")
    # None, nearly always, is told apart before the Mapping check, which runs in Python.
    if extra is not None and isinstance(extra, Mapping):
        for key, value in extra.items():
            block.setdefault(key, value)
    return block


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    own = message.api == API
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text:  # the API refuses empty text blocks
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ThinkingPart):
            # Thinking goes back only to the API that signed it.
            if not own:
                continue
            if part.redacted:
                data = (part.provider_data or {}).get("data")
                if data is not None:
                    blocks.append({"type": "redacted_thinking", "data": data})
            elif part.signature is not None:
                blocks.append(
                    {"type": "thinking", "thinking": part.text, "signature": part.signature}
                )
        elif isinstance(part, ToolCall):
            if part.provider_executed:
                block = (part.provider_data or {}).get("block")
                if own and isinstance(block, Mapping):
                    blocks.append(dict(block))
            else:
                blocks.append(_tool_use(part))
        elif isinstance(part, OpaquePart) and part.api == API:
            blocks.append(dict(part.data))
    return blocks


def _tool_result(message: ToolResultMessage, wire_id: Any) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": wire_id}
    text = message.result.model_text()
    if text:
        block["content"] = text
    if message.result.is_failure:
        block["is_error"] = True
    return block


def _wire(message: Message, wire_id: Any) -> dict[str, Any] | None:
    """One message on the wire: a user or assistant message (None for one the API does not
    receive, and for a system message, which goes to ``system``), or the ``tool_result`` block
    of a result (``wire_id``: the id its call has on the wire)."""
    if isinstance(message, ToolResultMessage):
        return _tool_result(message, wire_id)
    if isinstance(message, UserMessage):
        return {"role": "user", "content": _user_content(message)}
    if isinstance(message, AssistantMessage):
        blocks = _assistant_blocks(message)
        # The API refuses an assistant message without content.
        return {"role": "assistant", "content": blocks} if blocks else None
    return None


def render_messages(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system, messages)``: system messages joined into the top-level ``system``; the results
    of a round gathered into one user message of ``tool_result`` blocks."""
    return _render_messages(messages, _wire)


def _render_messages(
    messages: Sequence[Message], render: Callable[[Message, Any], dict[str, Any] | None]
) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system, messages)``, each message rendered by ``render`` (:func:`_wire`, or a
    :class:`RenderedMessages` of it)."""
    fold = _Messages(render)
    for message in messages:
        fold.feed(message)
    return fold.result()


class _Messages:
    """``(system, messages)`` built one message at a time, so a run's next request adds only
    its new messages (a fold of :class:`RenderedHistory`)."""

    __slots__ = ("_out", "_render", "_results", "_system", "_wire_ids")

    def __init__(self, render: Callable[[Message, Any], dict[str, Any] | None]) -> None:
        self._render = render
        self._system: list[str] = []
        self._out: list[dict[str, Any]] = []
        self._results: list[dict[str, Any]] = []
        self._wire_ids: dict[str, str] = {}

    def feed(self, message: Message) -> None:
        if isinstance(message, ToolResultMessage):
            block = self._render(message, self._wire_ids.get(message.call_id, message.call_id))
            if block is not None:
                self._results.append(block)
            return
        if self._results:
            self._out.append({"role": "user", "content": self._results})
            self._results = []
        if isinstance(message, SystemMessage):
            if message.content:
                self._system.append(message.content)
            return
        if isinstance(message, AssistantMessage):
            self._wire_ids.update(wire_call_ids((message,)))
        rendered = self._render(message, None)
        if rendered is not None:
            self._out.append(rendered)

    def copy(self) -> _Messages:
        # Made without __init__: a fold is copied every request.
        other = _Messages.__new__(_Messages)
        other._render = self._render
        other._system = list(self._system)
        other._out = list(self._out)
        other._results = list(self._results)
        other._wire_ids = dict(self._wire_ids)
        return other

    def result(self) -> tuple[str | None, list[dict[str, Any]]]:
        """A new list (a request may add to it), of the kept renderings."""
        out = list(self._out)
        if self._results:
            out.append({"role": "user", "content": list(self._results)})
        return ("\n\n".join(self._system) if self._system else None), out


def _tool_choice(request: ModelRequest, accepts_parallel: bool) -> dict[str, Any]:
    choice = request.tool_choice
    if isinstance(choice, NamedToolChoice):
        mapped: dict[str, Any] = {"type": "tool", "name": choice.name}
    elif choice == "required":
        mapped = {"type": "any"}
    elif choice == "none":
        return {"type": "none"}
    else:
        mapped = {"type": "auto"}
    if request.parallel_tool_calls is False and accepts_parallel:
        mapped["disable_parallel_tool_use"] = True
    return mapped


def render_messages_request(
    request: ModelRequest,
    config: Any,
    *,
    tools: list[dict[str, Any]] | None = None,
    rendered: tuple[str | None, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The whole request body for ``request`` under the ``[provider]`` config ``config``.

    ``tools`` is the rendered ``tools`` array when the caller has it already, and ``rendered``
    the ``(system, messages)`` of :func:`render_messages`.

    ``max_tokens`` is always sent (``[provider] max_tokens``, else :data:`DEFAULT_MAX_TOKENS`);
    Anthropic's server tools (``[provider] provider_tools``) follow the local tools; ``[provider]
    options`` and the request's options are merged in last (``thinking``, ``metadata`` …), never
    the tool fields the loop decides.
    """
    if not config.model:
        raise ProviderError(
            f"{API}: no model is configured; set provider.model (for example 'claude-sonnet-4-5')",
            api=API,
        )
    check_tool_choice(request, API)
    system, messages = rendered if rendered is not None else render_messages(request.messages)
    body: dict[str, Any] = {
        "model": config.model,
        "max_tokens": config.max_tokens if config.max_tokens is not None else DEFAULT_MAX_TOKENS,
        "messages": messages,
    }
    if system is not None:
        body["system"] = system
    if request.functions:
        body["tools"] = (
            tools
            if tools is not None
            else render_tools(request.functions, strict=strict_mode(config, ANTHROPIC_BASE_URL))
        )
        accepts = config.accepts_parallel_tool_calls is not False
        choice = _tool_choice(request, accepts)
        if choice != {"type": "auto"}:
            body["tool_choice"] = choice
    hosted = provider_tools(config)
    if hosted:
        body["tools"] = [*body.get("tools", ()), *hosted]
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if request.stream:
        body["stream"] = True
    body.update(extra_fields(config, request, API))
    return body


# -- parsing -----------------------------------------------------------------------------------


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _response_id(message: Any) -> str | None:
    """The message's ``id`` (``msg_…``), when it is a non-empty string."""
    # Parsed JSON holds dicts: the exact type check spares the ABC's (run in Python).
    mapping = type(message) is dict or isinstance(message, Mapping)
    value = message.get("id") if mapping else None
    return value if isinstance(value, str) and value else None


def _usage(payload: Any) -> Usage | None:
    """``usage``: Anthropic counts input read from and written to the prompt cache apart from
    ``input_tokens``; the canonical input counts all three. Thinking is inside ``output_tokens``
    (``output_tokens_details.thinking_tokens`` says how much)."""
    # Parsed JSON holds dicts: the exact type check spares the ABC's (run in Python).
    if type(payload) is not dict and not isinstance(payload, Mapping):
        return None
    # The counts given as integers (booleans are not counts), picked out in one pass.
    counts = {k: v for k, v in payload.items() if isinstance(v, int) and not isinstance(v, bool)}
    read = counts.get("cache_read_input_tokens")
    written = counts.get("cache_creation_input_tokens")
    fresh = counts.get("input_tokens")
    outputs = counts.get("output_tokens")
    inputs = None if fresh is None else fresh + (read or 0) + (written or 0)
    details = payload.get("output_tokens_details")
    thinking = None
    if details is not None and isinstance(details, Mapping):
        thinking = _int(details.get("thinking_tokens"))
    total = None
    if inputs is not None and outputs is not None:
        total = inputs + outputs
    return Usage(
        input_tokens=inputs,
        output_tokens=outputs,
        cache_read_tokens=read,
        total_tokens=total,
        cache_write_tokens=written,
        reasoning_tokens=thinking,
    )


def _finish(stop_reason: Any) -> str | None:
    if stop_reason is None:
        return None
    return STOP_REASONS.get(str(stop_reason), str(stop_reason))


def _extra(block: Mapping[str, Any]) -> dict[str, Any] | None:
    if block.keys() <= _TOOL_USE_FIELDS:
        return None  # nearly always
    extra = {k: v for k, v in block.items() if k not in _TOOL_USE_FIELDS}
    return {"extra": extra} if extra else None


def part_from_block(block: Mapping[str, Any]) -> AssistantPart | None:
    """The canonical part of one content block (None for an empty text block)."""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text") or ""
        return TextPart(text) if text else None
    if kind == "thinking":
        return ThinkingPart(text=block.get("thinking") or "", signature=block.get("signature"))
    if kind == "redacted_thinking":
        return ThinkingPart(redacted=True, provider_data={"data": block.get("data")})
    if kind == "tool_use":
        arguments, reason = parse_arguments(block.get("input"))
        return ToolCall(
            id=str(block.get("id") or ""),
            name=str(block.get("name") or ""),
            arguments=arguments,
            invalid_reason=reason,
            provider_data=_extra(block),
        )
    if kind in PROVIDER_CALL_BLOCKS:
        arguments, reason = parse_arguments(block.get("input"))
        return ToolCall(
            id=str(block.get("id") or ""),
            name=str(block.get("name") or ""),
            arguments=arguments,
            invalid_reason=reason,
            provider_executed=True,
            provider_data={"block": dict(block)},
        )
    return OpaquePart(api=API, data=dict(block))


def _error(payload: Mapping[str, Any], where: str) -> ProviderError:
    error = payload.get("error") or {}
    kind = str(error.get("type") or "error") if isinstance(error, Mapping) else "error"
    message = str(error.get("message") or kind) if isinstance(error, Mapping) else str(error)
    return ProviderError(
        f"{API}: {where} reported {kind}: {message}",
        api=API,
        retryable=kind in _RETRYABLE_ERRORS,
        provider_message=message,
    )


def parse_message(payload: Mapping[str, Any]) -> AssistantMessage:
    """The assistant turn of a (non-streamed) ``message`` answer, one part per content block.

    :raises ProviderError: when the answer is an error object.
    """
    if payload.get("type") == "error":
        raise _error(payload, "the answer")
    parts: list[AssistantPart] = []
    for block in wire_objects(payload.get("content"), "content", API):
        part = part_from_block(block)
        if part is not None:
            parts.append(part)
    return AssistantMessage(
        parts=unique_call_ids(parts),
        api=API,
        model=payload.get("model"),
        finish_reason=_finish(payload.get("stop_reason")),
        usage=_usage(payload.get("usage")),
        response_id=_response_id(payload),
    )


class MessagesStream:
    """Reads the events of a streamed Messages answer, emitting events as they come.

    Blocks are keyed by their ``index``; ``tool_use`` arguments stream as ``input_json_delta``
    and complete at ``content_block_stop``. A stream that ends with a block still open (cut off at
    ``max_tokens`` inside the arguments) ends that call invalid, its raw text kept.
    """

    def __init__(self, request: ModelRequest, emit: EmitEvent) -> None:
        self._calls = CallAssembler(request, emit)
        self._blocks: dict[int, dict[str, Any]] = {}
        self._parts: dict[int, AssistantPart | None] = {}
        self._texts: dict[int, list[str]] = {}
        self._call_input: dict[int, Any] = {}
        self._with_arguments: set[int] = set()
        self._provider_calls: dict[str, ToolCall] = {}  # by the wire id of their block
        self._message: dict[str, Any] = {}
        self._usage: dict[str, Any] = {}
        self._stop_reason: Any = None
        self._done = False

    def feed(self, data: str) -> bool:
        """Take the data of one event; True at ``message_stop``."""
        event = event_object(data, API)
        kind = event.get("type")
        if kind == "content_block_delta":
            self._delta(event.get("index"), event.get("delta") or {})
        elif kind == "content_block_start":
            self._start(event.get("index"), event.get("content_block") or {})
        elif kind == "content_block_stop":
            self._stop(event.get("index"))
        elif kind == "message_start":
            self._message = dict(event.get("message") or {})
            self._usage.update(self._message.get("usage") or {})
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if "stop_reason" in delta:
                self._stop_reason = delta["stop_reason"]
            self._usage.update(event.get("usage") or {})
        elif kind == "message_stop":
            self._done = True
            return True
        elif kind == "error":
            raise _error(event, "the stream")
        return False

    def _start(self, index: Any, block: Mapping[str, Any]) -> None:
        if not isinstance(index, int):
            index = len(self._blocks)
        kind = block.get("type")
        self._blocks[index] = dict(block)
        if kind == "text":
            text = block.get("text") or ""
            self._texts[index] = [text] if text else []
            self._calls.text(text)
        elif kind == "thinking":
            text = block.get("thinking") or ""
            self._texts[index] = [text] if text else []
            self._calls.thinking(text)
        elif kind == "tool_use" or kind in PROVIDER_CALL_BLOCKS:
            self._call_input[index] = block.get("input")
            self._calls.begin(
                index,
                call_id=block.get("id") or None,
                name=block.get("name") or None,
                provider_executed=kind in PROVIDER_CALL_BLOCKS,
                provider_data=_extra(block) if kind == "tool_use" else None,
            )

    def _delta(self, index: Any, delta: Mapping[str, Any]) -> None:
        if not isinstance(index, int) or index not in self._blocks:
            return
        kind = delta.get("type")
        block = self._blocks[index]
        if kind == "text_delta":
            text = delta.get("text") or ""
            self._texts.setdefault(index, []).append(text)
            self._calls.text(text)
        elif kind == "thinking_delta":
            text = delta.get("thinking") or ""
            self._texts.setdefault(index, []).append(text)
            self._calls.thinking(text)
        elif kind == "signature_delta":
            block["signature"] = block.get("signature", "") + (delta.get("signature") or "")
        elif kind == "input_json_delta":
            text = delta.get("partial_json") or ""
            if text:
                self._with_arguments.add(index)
                self._calls.arguments(index, text)
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))
        else:
            # A delta of a kind this adapter does not know: merge its fields into the block
            # (text fields are appended), so the block still goes back whole.
            for key, value in delta.items():
                if key == "type":
                    continue
                current = block.get(key)
                if isinstance(value, str) and isinstance(current, str):
                    block[key] = current + value
                else:
                    block[key] = value

    def _stop(self, index: Any) -> None:
        if not isinstance(index, int) or index not in self._blocks or index in self._parts:
            return
        self._parts[index] = self._finish_block(index, cut=None)

    def _finish_block(self, index: int, cut: str | None) -> AssistantPart | None:
        block = self._blocks[index]
        kind = block.get("type")
        if kind in ("text", "thinking"):
            field = "text" if kind == "text" else "thinking"
            block[field] = "".join(self._texts.get(index, ()))
            return part_from_block(block)
        if kind == "tool_use" or kind in PROVIDER_CALL_BLOCKS:
            if cut is not None:
                calls = self._calls.finish(cut, key=index)
                return calls[0] if calls else None
            provider_data = {"block": block} if kind in PROVIDER_CALL_BLOCKS else None
            if index in self._with_arguments:
                call = self._calls.complete(index, provider_data=provider_data)
            else:
                call = self._calls.complete(
                    index,
                    final_arguments=self._call_input.get(index) or {},
                    use_final=True,
                    provider_data=provider_data,
                )
            if call is not None and provider_data is not None:
                if call.arguments is not None:
                    block["input"] = dict(call.arguments)
                self._provider_calls[str(block.get("id") or call.id)] = call
                self._calls.progress(index, "running at the provider")
            return call
        if cut is None and is_result_block(block):
            ran = self._provider_calls.get(str(block["tool_use_id"]))
            if ran is not None:
                self._calls.provider_result(ran, result_of_block(block, ran.name))
        return part_from_block(block)

    def result(self) -> AssistantMessage:
        """The assistant turn; a block left open (the stream was cut) ends invalid."""
        reason = _finish(self._stop_reason)
        for index in sorted(self._blocks):
            if index not in self._parts:
                why = f"stop reason: {self._stop_reason}" if self._stop_reason else "cut off"
                self._parts[index] = self._finish_block(index, cut=why)
        parts: list[AssistantPart] = []
        for index in sorted(self._parts):
            part = self._parts[index]
            if part is not None:
                parts.append(part)
        return AssistantMessage(
            parts=parts,
            api=API,
            model=self._message.get("model"),
            finish_reason=reason,
            usage=_usage(self._usage) if self._usage else None,
            response_id=_response_id(self._message),
        )


# -- the adapter -------------------------------------------------------------------------------


class AnthropicMessagesAdapter(HTTPProviderAdapter):
    """``anthropic-messages``: the Messages API at ``{base_url}/v1/messages``.

    ``base_url`` is the host root (default ``https://api.anthropic.com``); the key comes from
    ``provider.api_key_env`` (default ``ANTHROPIC_API_KEY`` for api.anthropic.com) and is sent as
    ``x-api-key``.
    """

    api: ClassVar[str] = API
    key_header = ANTHROPIC_KEY_HEADER

    @functools.cached_property
    def capabilities(self) -> AdapterCapabilities:
        """Native tools (unless configured off), every tool choice, streaming; no strict binding;
        the parallel flag (``disable_parallel_tool_use``) unless configured off. Made once: the
        config does not change."""
        return AdapterCapabilities(
            native_tools=self.config.native_tools is not False,
            tool_choice=frozenset({"auto", "none", "required", "named"}),
            streaming=True,
            binds_strict_schemas=False,
            accepts_parallel_tool_calls=self.config.accepts_parallel_tool_calls is not False,
            max_tool_name_length=64,
        )

    def render_tools(self, functions: tuple[FunctionSpec, ...]) -> list[dict[str, Any]]:
        """Exactly the ``tools`` array the Messages API receives (names it refuses under their
        aliases)."""
        return self._tools.get(functions).tools

    @functools.cached_property
    def _messages(self) -> RenderedMessages[dict[str, Any] | None]:
        """Each message's rendering, kept while the message lives."""
        return RenderedMessages(_wire)

    @functools.cached_property
    def _history(self) -> RenderedHistory[tuple[str | None, list[dict[str, Any]]]]:
        """Each run's ``(system, messages)`` up to its last request."""
        render = self._messages.get
        return RenderedHistory(lambda: _Messages(render))

    @functools.cached_property
    def _tools(self) -> RenderedTools:
        strict = strict_mode(self.config, ANTHROPIC_BASE_URL)
        return RenderedTools(lambda functions: render_tools(functions, strict=strict))

    @functools.cached_property
    def endpoint(self) -> str:
        """The URL requests go to (made once: the config does not change)."""
        base = (self.config.base_url or ANTHROPIC_BASE_URL).rstrip("/")
        # The SDK's base_url is the host root; a trailing /v1 is a common slip, tolerated here.
        if urlsplit(base).path.endswith("/v1"):
            base = base[: -len("/v1")]
        return base + "/v1/messages"

    @functools.cached_property
    def key_env(self) -> str | None:
        """The variable holding the key: ``provider.api_key_env``, else ``ANTHROPIC_API_KEY`` for
        api.anthropic.com (other hosts, such as local proxies, may need none). Made once."""
        if self.config.api_key_env:
            return self.config.api_key_env
        host = urlsplit(self.endpoint).hostname or ""
        return ANTHROPIC_KEY_ENV if host == "api.anthropic.com" else None

    async def complete(self, request: ModelRequest, emit: EmitEvent) -> AssistantMessage:
        """Send the request (streamed when ``request.stream``) and return the assistant turn.

        Tool names the API refuses (``math.factorial``) go out under their aliases, and the calls
        of the answer come back under the canonical names.
        """
        # The offer's rendering (aliases included) is kept while the loop offers the same
        # functions; only the history is rendered every round.
        wire = self._tools.get(request.functions) if request.functions else None
        request = wire_request(request, names=wire.names if wire is not None else None)
        body = render_messages_request(
            request,
            self.config,
            tools=wire.tools if wire is not None else None,
            rendered=self._history.get(request.run_id, request.messages),
        )
        key_env = self.key_env
        headers = _HEADERS
        tools_offered = bool(request.functions)
        if request.stream:

            async def consume(events: AsyncIterator[Any], sink: EmitEvent) -> AssistantMessage:
                stream = MessagesStream(request, sink)
                async for event in events:
                    if stream.feed(event.data):
                        break
                return canonical_message(stream.result(), request)

            return await self.stream(
                self.endpoint,
                body,
                request,
                emit,
                consume,
                key_env=key_env,
                headers=headers,
                tools_offered=tools_offered,
            )
        payload = await self.post(
            self.endpoint,
            body,
            request,
            emit,
            key_env=key_env,
            headers=headers,
            tools_offered=tools_offered,
        )
        message = canonical_message(parse_message(payload), request)
        for event in provider_call_events(request, message, message_results(message)):
            emit(event)
        return message
