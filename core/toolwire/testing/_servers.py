"""Fake provider servers: loopback aiohttp servers speaking the real wire formats.

Each server plays a script of turns (the same turns :class:`ScriptedModel` takes: a text, a
:class:`~toolwire.messages.ToolCall` from :func:`tool_call`, a list of calls, an assistant
message or the mapping form), answering streamed or not as the request asks, and records every
request it gets. Scripts may also hold :class:`Reply` (a turn with a delay, a finish reason, a
dropped connection) and :class:`ErrorReply` (an HTTP error, e.g. 429 with ``Retry-After``).

Servers listen on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, TypeAlias

import attrs
from aiohttp import web

from ..messages import AssistantMessage, TextPart, ThinkingPart, ToolCall
from ..usage import Usage
from ..utf8 import utf8_json
from ._scripted import ScriptTurn, _turn_from_config

__all__ = [
    "ErrorReply",
    "FakeAnthropicServer",
    "FakeOpenAIChatServer",
    "FakeOpenAIResponsesServer",
    "FakeProviderServer",
    "RecordedRequest",
    "Reply",
    "ScriptItem",
    "ServerCall",
    "ServerTurn",
    "json_schema_format_problems",
    "strict_schema_problems",
]


@attrs.frozen(kw_only=True)
class RecordedRequest:
    """One request a fake server received: method, path, query string, headers (lower-case
    names), body."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    raw: bytes = attrs.field(repr=False)
    query: str = ""

    @property
    def stream(self) -> bool:
        """Whether the request asked for a streamed answer."""
        return isinstance(self.body, Mapping) and self.body.get("stream") is True


@attrs.frozen(kw_only=True)
class Reply:
    """A scripted turn with how to deliver it.

    :ivar turn: the turn (see the module documentation).
    :ivar delay: seconds to wait before answering (to test read timeouts).
    :ivar finish_reason: ``length`` to end the turn as cut off by the token limit (Chat
        ``length``, Responses ``incomplete``, Messages ``max_tokens``); ``None`` for the natural
        reason (calls or stop).
    :ivar drop_after: streamed: close the connection after this many events (0: right after the
        headers; negative: that many events before the end, so -1 drops the stream just before
        its last event); not streamed: close it without answering.
    :ivar headers: extra response headers.
    :ivar pace: streamed: seconds to wait between events, so that a client sees a long argument
        arrive slowly (user interfaces, cancellation in the middle of a stream).
    :ivar usage: the token counts to report, in canonical terms (the server writes them in its
        API's own fields); None for made-up counts (see :meth:`FakeProviderServer.usage`).
    """

    turn: ScriptTurn
    delay: float = 0.0
    finish_reason: str | None = None
    drop_after: int | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    pace: float = 0.0
    usage: Usage | None = None


@attrs.frozen(kw_only=True)
class ErrorReply:
    """An HTTP error answer in the API's own error format.

    :ivar status: the HTTP status (429, 500, 400 …).
    :ivar message: the provider message in the body.
    :ivar retry_after: a ``Retry-After`` header value (seconds, or an HTTP date as text).
    :ivar headers: more response headers (``x-should-retry`` …).
    :ivar body: a raw JSON body to send instead of the API's error shape.
    """

    status: int
    message: str = "scripted error"
    retry_after: float | str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    body: Any = None


ScriptItem: TypeAlias = "ScriptTurn | Reply | ErrorReply"
"""What a fake server's script holds."""

Responder: TypeAlias = Callable[[RecordedRequest], ScriptItem]
"""A function of the request returning the answer, for servers that answer every request."""


@attrs.frozen(kw_only=True)
class ServerCall:
    """A call as the server sends it: its id (None: the server makes one), name, argument text."""

    id: str | None
    name: str
    arguments: str


@attrs.frozen(kw_only=True)
class ServerTurn:
    """A turn in the form the servers render: thinking, text, calls, finish reason, and the
    usage to report (None: made up from the request and the turn)."""

    thinking: str = ""
    text: str = ""
    calls: tuple[ServerCall, ...] = ()
    finish_reason: str | None = None
    usage: Usage | None = None

    @classmethod
    def of(cls, turn: ScriptTurn, *, finish_reason: str | None = None) -> ServerTurn:
        """Read a script turn."""
        if isinstance(turn, str):
            return cls(text=turn, finish_reason=finish_reason)
        if isinstance(turn, ToolCall):
            message = AssistantMessage(parts=(turn,))
        elif isinstance(turn, AssistantMessage):
            message = turn
        elif isinstance(turn, Mapping):
            message = _turn_from_config(turn, "turn")
        elif isinstance(turn, Sequence) and all(isinstance(c, ToolCall) for c in turn):
            message = AssistantMessage(parts=tuple(turn))
        else:
            raise TypeError(
                f"fake server: turn {turn!r} is not a text, a ToolCall, a list of ToolCalls, an "
                "AssistantMessage, a mapping, a Reply or an ErrorReply"
            )
        calls = []
        for call in message.tool_calls:
            if call.raw_arguments is not None and (
                call.arguments is None or call.invalid_reason is not None
            ):
                text = call.raw_arguments
            else:
                text = _dumps(call.arguments if call.arguments is not None else {})
            calls.append(ServerCall(id=call.id or None, name=call.name, arguments=text))
        thinking = "".join(p.text for p in message.parts if isinstance(p, ThinkingPart))
        text = "".join(p.text for p in message.parts if isinstance(p, TextPart))
        return cls(
            thinking=thinking,
            text=text,
            calls=tuple(calls),
            finish_reason=finish_reason or message.finish_reason,
        )


def _dumps(value: Any) -> str:
    # A lone surrogate goes out as its escape, as a provider's JSON would carry it.
    return utf8_json(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _chunks(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


class FakeProviderServer:
    """A loopback HTTP server playing a script in one API's wire format.

    Use it as an async context manager (or :meth:`start` / :meth:`close`); :attr:`base_url` is what
    ``[provider] base_url`` should be. Subclasses set ``api``, ``path`` and ``base_path`` and render
    turns and errors; third-party adapter packages subclass it for their own API.

    :param script: the answers in order, one per request, or a :data:`Responder` answering every
        request. A request past the end of the script gets HTTP 418 naming the request number.
    :param chunk_size: characters per text or argument delta in streamed answers.
    :param interleave: stream the argument deltas of several calls round-robin (by index), as some
        hosts do.
    :param api_key: when set, requests must carry this key (else an error of status
        ``bad_key_status``, 401 by default, whose message echoes the key received, to prove that
        clients redact it).
    :param omit_call_ids: send calls without ids (``""``, or no id field where the API makes it
        optional), as some OpenAI-compatible hosts and older Gemini models do.

    What differs between APIs beyond the rendering is said by class attributes:
    ``retry_after_header`` (False: the API says how long to wait in its error body only, as
    Google's ``RetryInfo`` does, never in a ``Retry-After`` header), ``streams_call_arguments``
    (False: a call arrives whole in one event, so no stream can break inside its arguments) and
    ``bad_key_status`` (the status of an answer to a wrong key).
    """

    api: ClassVar[str] = ""
    path: ClassVar[str] = ""
    base_path: ClassVar[str] = ""
    retry_after_header: ClassVar[bool] = True
    streams_call_arguments: ClassVar[bool] = True
    bad_key_status: ClassVar[int] = 401

    def __init__(
        self,
        script: Sequence[ScriptItem] | Responder = (),
        *,
        chunk_size: int = 8,
        interleave: bool = False,
        api_key: str | None = None,
        omit_call_ids: bool = False,
    ) -> None:
        self._responder: Responder | None = None
        self._script: list[ScriptItem] = []
        if callable(script):
            self._responder = script
        else:
            self._script = list(script)
        self.chunk_size = max(1, chunk_size)
        self.interleave = interleave
        self.api_key = api_key
        self.omit_call_ids = omit_call_ids
        self.requests: list[RecordedRequest] = []
        self.answered: dict[int, ServerTurn] = {}
        """The turns answered so far, by answer number (from 1)."""
        self._position = 0
        self._ids = itertools.count(1)
        self._call_ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> FakeProviderServer:
        """Start listening on 127.0.0.1 (a free port)."""
        app = web.Application()
        app.router.add_post(self.path, self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = int(self._runner.addresses[0][1])
        return self

    async def close(self) -> None:
        """Stop the server."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def __aenter__(self) -> FakeProviderServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def base_url(self) -> str:
        """The ``base_url`` of this server as the API's SDK means it."""
        if self._port is None:
            raise RuntimeError("the fake server is not started; use `async with server:`")
        return f"http://127.0.0.1:{self._port}{self.base_path}"

    @property
    def url(self) -> str:
        """The full URL of the endpoint."""
        if self._port is None:
            raise RuntimeError("the fake server is not started; use `async with server:`")
        return f"http://127.0.0.1:{self._port}{self.path}"

    def add(self, *items: ScriptItem) -> None:
        """Append answers to the script."""
        self._script.extend(items)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the requests received so far."""
        return [r.body for r in self.requests]

    # -- handling -----------------------------------------------------------------------------

    def _next(self, recorded: RecordedRequest) -> ScriptItem:
        if self._responder is not None:
            return self._responder(recorded)
        if self._position >= len(self._script):
            return ErrorReply(
                status=418,
                message=(
                    f"the fake {self.api} server's script has {len(self._script)} answer(s) and "
                    f"this is request {len(self.requests)}"
                ),
            )
        item = self._script[self._position]
        self._position += 1
        return item

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        recorded = RecordedRequest(
            method=request.method,
            path=request.path,
            headers={k.lower(): v for k, v in request.headers.items()},
            body=body,
            raw=raw,
            query=request.query_string,
        )
        self.requests.append(recorded)
        if self.api_key is not None:
            sent = self.sent_key(recorded)
            if sent != self.api_key:
                return self._error_response(
                    ErrorReply(
                        status=self.bad_key_status, message=f"Incorrect API key provided: {sent}"
                    )
                )
        if not isinstance(body, Mapping):
            return self._error_response(ErrorReply(status=400, message="the body is not JSON"))
        refused = self.check_request(recorded)
        if refused is not None:
            return self._error_response(refused)
        item = self._next(recorded)
        if isinstance(item, ErrorReply):
            return self._error_response(item)
        reply = item if isinstance(item, Reply) else Reply(turn=item)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        turn = ServerTurn.of(reply.turn, finish_reason=reply.finish_reason)
        turn = attrs.evolve(self._with_ids(turn), usage=reply.usage)
        number = next(self._ids)
        self.answered[number] = turn
        if self.wants_stream(recorded):
            return await self._stream(request, turn, body, number, reply)
        if reply.drop_after is not None:
            _drop(request)
            return web.Response(status=200)
        return web.json_response(
            self.render(turn, body, number), headers=dict(reply.headers), dumps=_dumps
        )

    def _with_ids(self, turn: ServerTurn) -> ServerTurn:
        calls = []
        for call in turn.calls:
            call_id = "" if self.omit_call_ids else call.id or self.new_call_id()
            calls.append(attrs.evolve(call, id=call_id))
        return attrs.evolve(turn, calls=tuple(calls))

    async def _stream(
        self,
        request: web.Request,
        turn: ServerTurn,
        body: Mapping[str, Any],
        number: int,
        reply: Reply,
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            status=200,
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                **reply.headers,
            },
        )
        await response.prepare(request)
        events = self.render_stream(turn, body, number)
        drop = reply.drop_after
        if drop is not None and drop < 0:
            drop = max(0, len(events) + drop)
        for sent, event in enumerate(events):
            if drop is not None and sent >= drop:
                _drop(request)
                return response
            if reply.pace and sent:
                await asyncio.sleep(reply.pace)
            await response.write(event.encode("utf-8"))
        await response.write_eof()
        return response

    def _error_response(self, error: ErrorReply) -> web.Response:
        headers = dict(error.headers)
        # A date can only be said in the header; seconds go where the API says them.
        if error.retry_after is not None and (
            self.retry_after_header or isinstance(error.retry_after, str)
        ):
            value = error.retry_after
            headers["Retry-After"] = value if isinstance(value, str) else f"{value:g}"
        payload = error.body if error.body is not None else self.render_error(error)
        return web.json_response(payload, status=error.status, headers=headers, dumps=_dumps)

    # -- per API ------------------------------------------------------------------------------

    def wants_stream(self, request: RecordedRequest) -> bool:
        """Whether ``request`` asks for a streamed answer (``"stream": true`` in the body by
        default; an API that streams by URL says so here)."""
        return request.stream

    def check_request(self, request: RecordedRequest) -> ErrorReply | None:
        """The error the API answers a request it refuses (a malformed history, say) before
        any scripted answer; None to answer it. Nothing is refused by default."""
        return None

    def turn_tokens(self, turn: ServerTurn, number: int) -> list[str]:
        """The opaque values the server put into its answer ``number`` (thinking signatures,
        reasoning item ids) that a client must send back unchanged in its later requests."""
        return []

    def sent_key(self, request: RecordedRequest) -> str:
        """The API key a request carried (``Authorization: Bearer`` by default)."""
        header = request.headers.get("authorization", "")
        return header.removeprefix("Bearer ")

    def new_call_id(self) -> str:
        """A call id in the API's style."""
        return f"call_{next(self._call_ids)}"

    def render(self, turn: ServerTurn, body: Mapping[str, Any], number: int) -> Any:
        """The JSON answer for ``turn``."""
        raise NotImplementedError

    def render_stream(self, turn: ServerTurn, body: Mapping[str, Any], number: int) -> list[str]:
        """The server-sent events (each with its blank line) answering ``turn``."""
        raise NotImplementedError

    def render_error(self, error: ErrorReply) -> Any:
        """The JSON body of an error answer."""
        return {"error": {"message": error.message, "type": _error_type(error.status)}}

    def usage_numbers(self, turn: ServerTurn, body: Mapping[str, Any]) -> tuple[int, int]:
        """Made-up but deterministic token counts: (input, output)."""
        size = len(_dumps(body))
        out = len(turn.text) + len(turn.thinking) + sum(len(c.arguments) for c in turn.calls)
        return max(1, size // 4), max(1, out // 4)

    def usage(self, turn: ServerTurn, body: Mapping[str, Any]) -> Usage:
        """The usage to report for ``turn``, in canonical terms: the scripted one, else counts
        made up from the sizes (:meth:`usage_numbers`), nothing cached, the thinking's share
        of the output as reasoning. Each server writes it in its API's fields."""
        if turn.usage is not None:
            return turn.usage
        prompt, completion = self.usage_numbers(turn, body)
        return Usage(
            input_tokens=prompt,
            output_tokens=completion,
            cache_read_tokens=0,
            cache_write_tokens=0,
            reasoning_tokens=min(completion, len(turn.thinking) // 4),
            total_tokens=prompt + completion,
        )


def _drop(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()


def _error_type(status: int) -> str:
    if status == 429:
        return "rate_limit_error"
    if status == 401:
        return "authentication_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


_SCHEMA_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def strict_schema_problems(schema: Any, where: str = "") -> list[str]:
    """What OpenAI refuses in a schema sent with ``"strict": true``: an object whose
    ``additionalProperties`` is not false, or whose ``required`` leaves a property out
    (in its own words)."""
    problems: list[str] = []
    if not isinstance(schema, Mapping):
        return problems
    context = f"context=({where})"
    properties = schema.get("properties")
    if schema.get("type") == "object" or isinstance(properties, Mapping):
        if schema.get("additionalProperties") is not False:
            problems.append(
                f"In {context}, 'additionalProperties' is required to be supplied and to be false."
            )
        keys = list(properties or {})
        missing = [key for key in keys if key not in (schema.get("required") or ())]
        if missing:
            problems.append(
                f"In {context}, 'required' is required to be supplied and to be an array "
                f"including every key in properties. Missing '{missing[0]}'."
            )
        for key, sub in (properties or {}).items():
            problems.extend(strict_schema_problems(sub, f"{where}, 'properties', '{key}'"))
    items = schema.get("items")
    if isinstance(items, Mapping):
        problems.extend(strict_schema_problems(items, f"{where}, 'items'"))
    for word in ("anyOf", "$defs", "definitions"):
        group = schema.get(word)
        subs = group.values() if isinstance(group, Mapping) else group or ()
        for index, sub in enumerate(subs):
            problems.extend(strict_schema_problems(sub, f"{where}, '{word}', {index}"))
    return problems


def json_schema_format_problems(fmt: Any, field: str) -> list[str]:
    """What OpenAI refuses in a ``json_schema`` answer format (``response_format.json_schema``
    of Chat Completions, ``text.format`` of Responses): a missing or malformed name, a schema
    that is not an object, a strict schema outside the strict subset."""
    if not isinstance(fmt, Mapping):
        return [f"Invalid type for '{field}': expected an object."]
    name = fmt.get("name")
    if not isinstance(name, str) or not _SCHEMA_NAME.fullmatch(name):
        return [
            f"Invalid '{field}.name': {name!r}. Expected a string that matches the pattern "
            "'^[a-zA-Z0-9_-]+$' of at most 64 characters."
        ]
    schema = fmt.get("schema")
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return [
            f"Invalid schema for response_format '{name}': schema must be a JSON Schema of "
            "'type: \"object\"'."
        ]
    if fmt.get("strict") is True:
        return [
            f"Invalid schema for response_format '{name}': {problem}"
            for problem in strict_schema_problems(schema)
        ]
    return []


def format_refusal(fmt: Any, field: str, nested: str | None = None) -> ErrorReply | None:
    """The 400 OpenAI answers an answer format ``fmt`` (at ``field`` of the body) with: a type
    it does not know, or a ``json_schema`` format it refuses (its name and schema under
    ``nested``, or in ``fmt`` itself); None for a format it takes, or none."""
    if fmt is None:
        return None
    kind = fmt.get("type") if isinstance(fmt, Mapping) else None
    if kind in ("text", "json_object"):
        return None
    if kind != "json_schema":
        return ErrorReply(
            status=400,
            message=f"Invalid value for '{field}.type': {kind!r}. Supported values are: "
            "'text', 'json_object' and 'json_schema'.",
        )
    fields = fmt.get(nested) if nested is not None else fmt
    problems = json_schema_format_problems(fields, f"{field}.{nested}" if nested else field)
    return ErrorReply(status=400, message=problems[0]) if problems else None


def _without_none(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` without the fields (and details) whose count is not reported."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(item, dict):
            item = _without_none(item)
            if item:
                out[key] = item
        elif item is not None:
            out[key] = item
    return out


def _sse(data: Any, event: str | None = None) -> str:
    text = data if isinstance(data, str) else _dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n"


# -- OpenAI Chat Completions --------------------------------------------------------------------


class FakeOpenAIChatServer(FakeProviderServer):
    """Chat Completions at ``/v1/chat/completions`` (``base_url`` ends in ``/v1``).

    Thinking is sent as ``reasoning_content``; streams end with a usage chunk whose ``choices``
    is empty and ``data: [DONE]``, as OpenAI sends them.
    """

    api = "openai-chat"
    path = "/v1/chat/completions"
    base_path = "/v1"

    def check_request(self, request: RecordedRequest) -> ErrorReply | None:
        """Refuse a ``response_format`` OpenAI would refuse (400)."""
        return format_refusal(request.body.get("response_format"), "response_format", "json_schema")

    def _finish(self, turn: ServerTurn) -> str:
        if turn.finish_reason == "length":
            return "length"
        if turn.finish_reason:
            return turn.finish_reason
        return "tool_calls" if turn.calls else "stop"

    def _usage(self, turn: ServerTurn, body: Mapping[str, Any]) -> dict[str, Any]:
        usage = self.usage(turn, body)
        return _without_none(
            {
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "total_tokens": usage.total_tokens,
                "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
                "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
            }
        )

    def render(self, turn: ServerTurn, body: Mapping[str, Any], number: int) -> Any:
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        if turn.thinking:
            message["reasoning_content"] = turn.thinking
        if turn.calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in turn.calls
            ]
        return {
            "id": f"chatcmpl-fake{number}",
            "object": "chat.completion",
            "created": 1700000000 + number,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish(turn)}],
            "usage": self._usage(turn, body),
        }

    def render_stream(self, turn: ServerTurn, body: Mapping[str, Any], number: int) -> list[str]:
        base = {
            "id": f"chatcmpl-fake{number}",
            "object": "chat.completion.chunk",
            "created": 1700000000 + number,
            "model": body.get("model"),
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return _sse({**base, "choices": [choice]})

        events = [chunk({"role": "assistant", "content": ""})]
        size = self.chunk_size
        events.extend(chunk({"reasoning_content": piece}) for piece in _chunks(turn.thinking, size))
        events.extend(chunk({"content": piece}) for piece in _chunks(turn.text, size))
        starts = [
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
            for index, call in enumerate(turn.calls)
        ]
        pieces = [
            [
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                for piece in _chunks(call.arguments, size)
            ]
            for index, call in enumerate(turn.calls)
        ]
        if self.interleave:
            events.extend(starts)
            for group in itertools.zip_longest(*pieces):
                events.extend(e for e in group if e is not None)
        else:
            for start, rest in zip(starts, pieces, strict=True):
                events.append(start)
                events.extend(rest)
        events.append(chunk({}, self._finish(turn)))
        options = body.get("stream_options")
        if isinstance(options, Mapping) and options.get("include_usage") is True:
            # As OpenAI: a usage chunk with no choices, only when the request asked for it.
            events.append(_sse({**base, "choices": [], "usage": self._usage(turn, body)}))
        events.append(_sse("[DONE]"))
        return events


# -- OpenAI Responses ---------------------------------------------------------------------------


class FakeOpenAIResponsesServer(FakeProviderServer):
    """The Responses API at ``/v1/responses`` (``base_url`` ends in ``/v1``).

    Thinking is sent as a reasoning item with a summary; text as a message item; calls as
    ``function_call`` items with ``call_id``.
    """

    api = "openai-responses"
    path = "/v1/responses"
    base_path = "/v1"

    def check_request(self, request: RecordedRequest) -> ErrorReply | None:
        """Refuse a ``text.format`` OpenAI would refuse (400)."""
        text = request.body.get("text")
        return format_refusal(
            text.get("format") if isinstance(text, Mapping) else None, "text.format"
        )

    def turn_tokens(self, turn: ServerTurn, number: int) -> list[str]:
        """The reasoning item's id: the whole output goes back, reasoning included."""
        return [f"rs_fake{number}"] if turn.thinking else []

    def _items(self, turn: ServerTurn, number: int) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if turn.thinking:
            items.append(
                {
                    "type": "reasoning",
                    "id": f"rs_fake{number}",
                    "summary": [{"type": "summary_text", "text": turn.thinking}],
                }
            )
        if turn.text:
            items.append(
                {
                    "type": "message",
                    "id": f"msg_fake{number}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
                }
            )
        for index, call in enumerate(turn.calls):
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_fake{number}_{index}",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": call.arguments,
                    "status": "completed",
                }
            )
        return items

    def _response(
        self,
        turn: ServerTurn,
        body: Mapping[str, Any],
        number: int,
        output: list[dict[str, Any]],
        status: str,
    ) -> dict[str, Any]:
        usage = self.usage(turn, body)
        incomplete = turn.finish_reason == "length"
        return {
            "id": f"resp_fake{number}",
            "object": "response",
            "created_at": 1700000000 + number,
            "status": "incomplete" if incomplete and status == "completed" else status,
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
            "model": body.get("model"),
            "output": output,
            "usage": _without_none(
                {
                    "input_tokens": usage.input_tokens,
                    "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
                    "output_tokens": usage.output_tokens,
                    "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
                    "total_tokens": usage.total_tokens,
                }
            ),
        }

    def render(self, turn: ServerTurn, body: Mapping[str, Any], number: int) -> Any:
        return self._response(turn, body, number, self._items(turn, number), "completed")

    def render_stream(self, turn: ServerTurn, body: Mapping[str, Any], number: int) -> list[str]:
        items = self._items(turn, number)
        sequence = itertools.count()

        def event(kind: str, **fields: Any) -> str:
            return _sse({"type": kind, "sequence_number": next(sequence), **fields}, kind)

        size = self.chunk_size
        created = self._response(turn, body, number, [], "in_progress")
        events = [event("response.created", response=created)]
        deferred: list[list[str]] = []
        for index, item in enumerate(items):
            kind = item["type"]
            if kind == "function_call":
                added = {**item, "arguments": "", "status": "in_progress"}
            elif kind == "message":
                added = {**item, "content": [], "status": "in_progress"}
            else:
                added = {**item, "summary": []}
            events.append(event("response.output_item.added", output_index=index, item=added))
            body_events: list[str] = []
            if kind == "reasoning":
                for piece in _chunks(turn.thinking, size):
                    body_events.append(
                        event(
                            "response.reasoning_summary_text.delta",
                            item_id=item["id"],
                            output_index=index,
                            summary_index=0,
                            delta=piece,
                        )
                    )
            elif kind == "message":
                for piece in _chunks(turn.text, size):
                    body_events.append(
                        event(
                            "response.output_text.delta",
                            item_id=item["id"],
                            output_index=index,
                            content_index=0,
                            delta=piece,
                        )
                    )
            else:
                for piece in _chunks(item["arguments"], size):
                    body_events.append(
                        event(
                            "response.function_call_arguments.delta",
                            item_id=item["id"],
                            output_index=index,
                            delta=piece,
                        )
                    )
                body_events.append(
                    event(
                        "response.function_call_arguments.done",
                        item_id=item["id"],
                        output_index=index,
                        arguments=item["arguments"],
                    )
                )
            body_events.append(event("response.output_item.done", output_index=index, item=item))
            if self.interleave and kind == "function_call":
                deferred.append(body_events)
            else:
                events.extend(body_events)
        for group in itertools.zip_longest(*deferred):
            events.extend(e for e in group if e is not None)
        final = self._response(turn, body, number, items, "completed")
        done_kind = (
            "response.incomplete" if final["status"] == "incomplete" else "response.completed"
        )
        events.append(event(done_kind, response=final))
        return events


# -- Anthropic Messages -------------------------------------------------------------------------


class FakeAnthropicServer(FakeProviderServer):
    """The Messages API at ``/v1/messages`` (``base_url`` is the host root).

    The key is expected in ``x-api-key``. Thinking is sent as a signed thinking block. Arguments
    that are not a JSON object cannot be sent in a non-streamed ``tool_use`` (its ``input`` is an
    object), so there they are sent as ``{}``; streamed, they go out as written.
    """

    api = "anthropic-messages"
    path = "/v1/messages"
    base_path = ""

    def sent_key(self, request: RecordedRequest) -> str:
        return request.headers.get("x-api-key", "")

    def turn_tokens(self, turn: ServerTurn, number: int) -> list[str]:
        """The thinking block's signature."""
        return [f"sig-fake-{number}"] if turn.thinking else []

    def new_call_id(self) -> str:
        return f"toolu_{next(self._call_ids):024d}"

    def render_error(self, error: ErrorReply) -> Any:
        kind = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error"}
        name = kind.get(
            error.status, "api_error" if error.status >= 500 else "invalid_request_error"
        )
        return {"type": "error", "error": {"type": name, "message": error.message}}

    def _stop(self, turn: ServerTurn) -> str:
        if turn.finish_reason == "length":
            return "max_tokens"
        if turn.finish_reason:
            return turn.finish_reason
        return "tool_use" if turn.calls else "end_turn"

    def _blocks(self, turn: ServerTurn, number: int) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if turn.thinking:
            blocks.append(
                {"type": "thinking", "thinking": turn.thinking, "signature": f"sig-fake-{number}"}
            )
        if turn.text:
            blocks.append({"type": "text", "text": turn.text})
        for call in turn.calls:
            try:
                value = json.loads(call.arguments) if call.arguments.strip() else {}
            except ValueError:
                value = {}
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": value if isinstance(value, dict) else {},
                }
            )
        return blocks

    def _usage(self, usage: Usage, *, output: int | None) -> dict[str, Any]:
        """Anthropic's ``usage``: input read from or written to the cache counted apart."""
        read = usage.cache_read_tokens or 0
        written = usage.cache_write_tokens or 0
        fresh = None if usage.input_tokens is None else usage.input_tokens - read - written
        wire: dict[str, Any] = {
            "input_tokens": fresh,
            "cache_creation_input_tokens": usage.cache_write_tokens,
            "cache_read_input_tokens": usage.cache_read_tokens,
            "output_tokens": output,
        }
        if usage.reasoning_tokens:
            wire["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
        return _without_none(wire)

    def render(self, turn: ServerTurn, body: Mapping[str, Any], number: int) -> Any:
        usage = self.usage(turn, body)
        return {
            "id": f"msg_fake{number}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": self._blocks(turn, number),
            "stop_reason": self._stop(turn),
            "stop_sequence": None,
            "usage": self._usage(usage, output=usage.output_tokens),
        }

    def render_stream(self, turn: ServerTurn, body: Mapping[str, Any], number: int) -> list[str]:
        usage = self.usage(turn, body)
        size = self.chunk_size
        message: dict[str, Any] = {
            "id": f"msg_fake{number}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            # As Anthropic streams it: the input at the start, the output so far (1) …
            "usage": self._usage(attrs.evolve(usage, reasoning_tokens=None), output=1),
        }
        events = [_sse({"type": "message_start", "message": message}, "message_start")]

        def block_event(kind: str, **fields: Any) -> str:
            return _sse({"type": kind, **fields}, kind)

        index = 0
        if turn.thinking:
            start: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
            events.append(block_event("content_block_start", index=index, content_block=start))
            for piece in _chunks(turn.thinking, size):
                delta: dict[str, Any] = {"type": "thinking_delta", "thinking": piece}
                events.append(block_event("content_block_delta", index=index, delta=delta))
            delta = {"type": "signature_delta", "signature": f"sig-fake-{number}"}
            events.append(block_event("content_block_delta", index=index, delta=delta))
            events.append(block_event("content_block_stop", index=index))
            index += 1
        if turn.text:
            start = {"type": "text", "text": ""}
            events.append(block_event("content_block_start", index=index, content_block=start))
            events.append(_sse({"type": "ping"}, "ping"))
            for piece in _chunks(turn.text, size):
                delta = {"type": "text_delta", "text": piece}
                events.append(block_event("content_block_delta", index=index, delta=delta))
            events.append(block_event("content_block_stop", index=index))
            index += 1
        for call in turn.calls:
            start = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
            events.append(block_event("content_block_start", index=index, content_block=start))
            events.append(
                block_event(
                    "content_block_delta",
                    index=index,
                    delta={"type": "input_json_delta", "partial_json": ""},
                )
            )
            for piece in _chunks(call.arguments, size):
                delta = {"type": "input_json_delta", "partial_json": piece}
                events.append(block_event("content_block_delta", index=index, delta=delta))
            if turn.finish_reason != "length":
                events.append(block_event("content_block_stop", index=index))
            index += 1
        stop = {"stop_reason": self._stop(turn), "stop_sequence": None}
        # … and the final output count in the message delta.
        final = {
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"thinking_tokens": usage.reasoning_tokens or None},
        }
        events.append(block_event("message_delta", delta=stop, usage=_without_none(final)))
        events.append(_sse({"type": "message_stop"}, "message_stop"))
        return events
