"""The HTTP transport of provider adapters: one aiohttp session, timeouts, retries and SSE.

aiohttp is imported here only, and the host imports this module lazily, so commands that never
talk to a provider do not pay for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import os
import random as _random
import re
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Mapping,
)
from functools import partial
from typing import TYPE_CHECKING, Any, Final, TypeVar
from urllib.parse import urlsplit

import aiohttp
import attrs

from .._json.fast import json_bytes, json_value_of_bytes
from .._redact import escapes_may_hide, redact_json, redact_raw, redact_text
from ..config import ProviderConfig
from ..events import Event, ProviderRetry, RequestBody
from ._errors import ProviderError
from ._keys import ANTHROPIC_KEY_HEADER, BEARER_KEY_HEADER, ApiKeyHeader
from ._request import ProviderRequest
from ._sse import SSEDecoder, SSEEvent, SSELimitExceeded
from ._watchdog import SILENCE, TOTAL, Watchdog

if TYPE_CHECKING:
    from ..events import EmitEvent

__all__ = [
    "ANTHROPIC_KEY_HEADER",
    "ApiKeyHeader",
    "BEARER_KEY_HEADER",
    "RETRYABLE_STATUSES",
    "ProviderRequest",
    "Transport",
    "body_retry_delay",
    "provider_message",
]

T = TypeVar("T")

RETRYABLE_STATUSES: Final = frozenset({429, 500, 502, 503, 504})
"""HTTP statuses worth sending again: rate limits and transient server failures."""

_log = logging.getLogger("toolwire.transport")
_ERROR_BODY_LIMIT: Final = 64 * 1024
_TAIL_WAIT: Final = 0.25
"""Seconds a stream's end is waited for after its last event, so the connection is kept."""
_TAIL_BYTES: Final = 64 * 1024
"""Bytes read after a stream's last event, at most, before its connection is closed instead."""


StreamConsumer = Callable[[AsyncIterator[SSEEvent], "EmitEvent"], Awaitable[T]]


class _Failure(Exception):
    """One failed attempt: the error to raise if no retry follows, and the server's wish."""

    def __init__(self, error: ProviderError, *, retry_after: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


@attrs.frozen
class _Sending:
    """A request made ready to send: what every attempt of it shares, resolved once. Its repr
    leaves out the key and the headers that carry it (a traceback or a log may show it)."""

    request: ProviderRequest
    config: ProviderConfig
    key: str | None = attrs.field(repr=False)
    data: bytes
    headers: dict[str, str] = attrs.field(repr=False)
    timeout: aiohttp.ClientTimeout
    emit: EmitEvent


class Transport:
    """Sends provider requests over one aiohttp session per host.

    The session is created on the first request and closed by :meth:`aclose` (the host closes its
    transport when it closes). Every request:

    - reads the API key from the environment variable the provider config names, when the request
      is made; the key goes into one header and nowhere else (errors, events and logs never hold
      it, and a provider message that echoes it is redacted);
    - uses the config's ``connect_timeout`` and ``read_timeout`` per attempt and ``total_timeout``
      for all attempts together, streaming included (a silence of the server ends an attempt
      after between ``read_timeout`` and 1.5 times it: see :class:`Watchdog`);
    - is sent again, up to ``max_retries`` times, after HTTP 429, 500, 502, 503 or 504 or a
      connection failure, waiting as the server's ``Retry-After`` (seconds or an HTTP date) or
      ``retry-after-ms`` says (or, without those headers, a ``google.rpc.RetryInfo`` in the error
      body), else an exponential backoff with jitter; ``x-should-retry`` from the
      server overrides the status; each retry is announced as a :class:`ProviderRetry` event; a
      500 that repeats the previous attempt's message word for word is not sent again;
    - for streams, is sent again only while nothing was delivered: once the consumer has emitted
      an event, a failure ends the request with a :class:`ProviderError`.
    - never follows a redirect (the request carries the key): a 3xx is an error naming the
      Location;
    - reads at most ``max_response_bytes`` of a JSON answer after decompression, and stream lines
      and events of at most ``max_sse_line_chars`` and ``max_sse_event_chars``; the key is redacted
      from every answer and event before anyone reads them.

    Each request is one :class:`ProviderRequest`, handed whole down the send stack (prepare once,
    then attempts under the retry policy).

    :param config: the provider config used when a request does not name its own.
    :param emit: where :class:`ProviderRetry` events go when a request does not name its own.
    :param sleep: the coroutine used to wait between attempts (tests pass a fake one).
    :param random: a source of floats in [0, 1) for the jitter.
    :param environ: where API keys are looked up (default ``os.environ``).
    :param backoff_base: the first backoff delay in seconds; it doubles per attempt.
    :param backoff_cap: the longest backoff delay in seconds (Retry-After may ask for more).
    :param request_bodies: emit every request body (key and ``secrets`` redacted) as a
        :class:`RequestBody` event before it is sent (``[trace] request_bodies``).
    """

    def __init__(
        self,
        config: ProviderConfig | None = None,
        *,
        emit: Callable[[Event], None] | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        random: Callable[[], float] = _random.random,
        environ: Mapping[str, str] | None = None,
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
        request_bodies: bool = False,
    ) -> None:
        self.config = config if config is not None else ProviderConfig()
        self.request_bodies = request_bodies
        self._emit = emit
        self._sleep = sleep
        self._random = random
        self._environ = environ
        self._backoff_base = backoff_base
        self._backoff_cap = backoff_cap
        self._session: aiohttp.ClientSession | None = None
        self._closed = False
        # The per-attempt timeouts of the last config used: the same config every request.
        self._timeouts: tuple[ProviderConfig, aiohttp.ClientTimeout] | None = None

    # -- session ------------------------------------------------------------------------------

    def _get_session(self) -> aiohttp.ClientSession:
        if self._closed:
            raise RuntimeError("this Transport was closed; the host creates a new one on demand")
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=None),
                raise_for_status=False,
            )
        return self._session

    async def aclose(self) -> None:
        """Close the session (idempotent)."""
        self._closed = True
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    async def __aenter__(self) -> Transport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- keys ---------------------------------------------------------------------------------

    def api_key(self, env_name: str | None, *, api: str) -> str | None:
        """The API key from the environment variable ``env_name`` (None when no name is given).

        :raises ProviderError: when the variable is named but not set (the message names the
            variable, never a value).
        """
        if not env_name:
            return None
        environ = os.environ if self._environ is None else self._environ
        key = environ.get(env_name, "").strip()
        if not key:
            raise ProviderError(
                f"{api}: the environment variable {env_name} (named by provider.api_key_env) is "
                "not set or empty; set it to your API key, or remove api_key_env for a host that "
                "needs no key",
                api=api,
            )
        return key

    # -- public requests ----------------------------------------------------------------------

    async def post_json(self, request: ProviderRequest) -> Any:
        """Send ``request`` and return the parsed JSON answer.

        :raises ProviderError: for a 4xx answer, for failures left after the retries, for a
            total timeout, and for an answer that is not JSON.
        """
        sending = self._prepare(request, stream=False)
        return await self._with_retries(partial(self._json_attempt, sending), sending)

    async def consume_sse(self, request: ProviderRequest, consume: StreamConsumer[T]) -> T:
        """Send ``request`` and hand the server-sent events of the answer to ``consume``.

        ``consume(events, emit)`` reads the events and returns the result of this call; it must
        send every event it produces through the ``emit`` it is given, which is how the transport
        knows whether anything was delivered. A failure before that (a connection cut, a read
        timeout, or a :class:`ProviderError` with ``retryable=True`` raised by ``consume`` for an
        error event) sends the request again with a fresh ``consume`` call; a failure after it
        raises a :class:`ProviderError` saying the stream broke after delivering content.

        :raises ProviderError: as :meth:`post_json` does, and for a broken or oversized stream.
        """
        sending = self._prepare(request, stream=True)
        return await self._with_retries(partial(self._stream_attempt, sending, consume), sending)

    async def stream_sse(self, request: ProviderRequest) -> AsyncIterator[SSEEvent]:
        """Send ``request`` and yield the server-sent events of the answer.

        The simple form of :meth:`consume_sse`: the request is sent again only while no event has
        been yielded; after the first event, a failure raises :class:`ProviderError`.
        """
        queue: asyncio.Queue[SSEEvent | BaseException | None] = asyncio.Queue(maxsize=1)
        target = request.emit or self._emit or _discard

        async def consume(events: AsyncIterator[SSEEvent], mark: EmitEvent) -> None:
            first = True
            async for event in events:
                if first:
                    first = False
                    mark(_DELIVERED)
                await queue.put(event)
            await queue.put(None)

        def forward(event: Event) -> None:
            if event is not _DELIVERED:
                target(event)

        async def run() -> None:
            try:
                await self.consume_sse(attrs.evolve(request, emit=forward), consume)
            except Exception as exc:
                await queue.put(exc)

        task = asyncio.ensure_future(run())
        try:
            while True:
                item = await queue.get()
                if item is None:
                    break
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    # -- one attempt --------------------------------------------------------------------------

    def _prepare(self, request: ProviderRequest, *, stream: bool) -> _Sending:
        """What every attempt of ``request`` shares: its config, key, encoded body and headers.

        The key is read and the body encoded once, before the first attempt; with
        ``request_bodies`` on, the body is announced here, key and secrets redacted.
        """
        key = self.api_key(request.key_env, api=request.api) if request.key_env else None
        headers = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream" if stream else "application/json",
        }
        if request.headers:
            headers.update(request.headers)
        if key is not None:
            key_header = request.key_header or BEARER_KEY_HEADER
            headers[key_header.name] = key_header.prefix + key
        config = request.config or self.config
        timeouts = self._timeouts
        if timeouts is None or timeouts[0] is not config:
            timeouts = self._timeouts = (config, _timeout(config))
        sending = _Sending(
            request=request,
            config=config,
            key=key,
            data=json_bytes(request.body),
            headers=headers,
            timeout=timeouts[1],
            emit=request.emit or self._emit or _discard,
        )
        if self.request_bodies:
            _capture(sending, stream=stream)
        return sending

    def _open(
        self, sending: _Sending
    ) -> contextlib.AbstractAsyncContextManager[aiohttp.ClientResponse]:
        """One attempt's response, to enter with ``async with``; the caller turns any status but
        2xx into a :class:`_Failure` with :func:`_status_failure`. (A plain method, not a context
        manager of its own: that would cost a generator and two more awaits every request.)"""
        request = sending.request
        return self._get_session().request(
            request.method,
            request.url,
            data=sending.data,
            headers=sending.headers,
            timeout=sending.timeout,
            allow_redirects=False,
        )

    async def _json_attempt(self, sending: _Sending, watch: Watchdog) -> Any:
        try:
            async with self._open(sending) as response:
                watch.response = response
                if response.status >= 300:
                    raise await _status_failure(response, sending)
                raw = await _read_capped(response, sending)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _connection_failure(exc, sending.request) from None
        except asyncio.CancelledError:
            if not watch.caused(SILENCE):
                raise
            raise _connection_failure(TimeoutError(), sending.request) from None
        return _parse_json(raw, sending)

    async def _stream_attempt(
        self, sending: _Sending, consume: StreamConsumer[T], watch: Watchdog
    ) -> T:
        delivered = False

        def tracking_emit(event: Event) -> None:
            nonlocal delivered
            delivered = True
            sending.emit(event)

        request, cfg = sending.request, sending.config
        try:
            async with self._open(sending) as response:
                watch.response = response
                if response.status >= 300:
                    raise await _status_failure(response, sending)
                _check_event_stream(response, request)
                decoder = SSEDecoder(
                    max_line=cfg.max_sse_line_chars, max_event=cfg.max_sse_event_chars
                )
                # Closed here, not left to the garbage collector: a consumer that stops at the
                # last event would otherwise have the event loop close the generator later,
                # with a wake-up and a task of its own, every streamed answer. (A plain
                # try/finally: contextlib.aclosing costs three more calls and awaits.)
                events = _checked_events(response.content, decoder, sending)
                try:
                    result = await consume(events, tracking_emit)
                finally:
                    await events.aclose()
                if not response.content.at_eof():
                    await _finish_body(response.content)
                return result
        except _Failure:
            raise
        except ProviderError as exc:
            if delivered or not exc.retryable:
                raise
            raise _Failure(exc) from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _broken_stream(exc, request, delivered) from None
        except asyncio.CancelledError:
            if not watch.caused(SILENCE):
                raise
            raise _broken_stream(TimeoutError(), request, delivered) from None

    # -- retries ------------------------------------------------------------------------------

    async def _with_retries(
        self, attempt: Callable[[Watchdog], Awaitable[T]], sending: _Sending
    ) -> T:
        """Run ``attempt`` until it succeeds, a failure is final, or the total timeout passes."""
        request, cfg = sending.request, sending.config
        loop = asyncio.get_running_loop()
        watch = Watchdog(loop, cfg)
        attempts = 1 + max(0, cfg.max_retries)
        number = 1
        previous: ProviderError | None = None
        while True:
            if _log.isEnabledFor(logging.DEBUG):
                _log.debug(
                    "%s: %s %s (attempt %d)",
                    request.api,
                    request.method,
                    _where(request.url),
                    number,
                )
            watch.start()
            try:
                return await attempt(watch)
            except _Failure as failure:
                watch.stop()
                error = failure.error
                final = _final_error(failure, request, previous, number, attempts)
                if final is not None:
                    raise final from None
                previous = error
                delay = self._delay(number, failure.retry_after)
                if loop.time() + delay > watch.deadline:
                    raise _with_message(
                        error,
                        f"{error} (not sent again: waiting {delay:.1f} s would pass the total "
                        f"timeout of {cfg.total_timeout:g} s)",
                    ) from None
                _announce_retry(sending, error, delay, number + 1, attempts)
                await self._sleep(delay)
                number += 1
            except asyncio.CancelledError:
                if not watch.caused(TOTAL):
                    raise
                raise ProviderError(
                    f"{request.api}: no complete answer from {_where(request.url)} within the "
                    f"total timeout of {cfg.total_timeout:g} s (provider.total_timeout)",
                    api=request.api,
                ) from None
            finally:
                watch.stop()

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, retry_after)
        delay: float = min(self._backoff_cap, self._backoff_base * 2.0 ** (attempt - 1))
        return delay * (1.0 - 0.25 * self._random())


# -- helpers ----------------------------------------------------------------------------------


class _Delivered(Event):
    pass


_DELIVERED: Final = _Delivered(run_id="")


def _discard(event: Event) -> None:
    return None


def _timeout(cfg: ProviderConfig) -> aiohttp.ClientTimeout:
    """aiohttp's timeouts of one attempt: connecting only (the rest is the :class:`Watchdog`'s)."""
    return aiohttp.ClientTimeout(total=None, sock_connect=cfg.connect_timeout)


def _where(url: str) -> str:
    """Host and path of a URL, without query or credentials."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return host + parts.path


_redact = redact_text


def _capture(sending: _Sending, *, stream: bool) -> None:
    """Announce the body about to be sent, with the key and the secrets redacted."""
    from ._capture import redact_body

    request, key = sending.request, sending.key
    hidden = [*request.secrets, key] if key else request.secrets
    sending.emit(
        RequestBody(
            run_id=request.run_id,
            round=request.round,
            api=request.api,
            url=_where(request.url),
            body=redact_body(request.body, hidden),
            stream=stream,
        )
    )


def _announce_retry(
    sending: _Sending, error: ProviderError, delay: float, attempt: int, attempts: int
) -> None:
    """Log and emit (as :class:`ProviderRetry`) that attempt ``attempt`` follows in ``delay`` s."""
    request = sending.request
    _log.info(
        "%s: retrying %s in %.2f s after %s (attempt %d of %d)",
        request.api,
        _where(request.url),
        delay,
        f"HTTP {error.status}" if error.status else "a connection failure",
        attempt,
        attempts,
    )
    sending.emit(
        ProviderRetry(
            run_id=request.run_id,
            round=request.round,
            api=request.api,
            status=error.status,
            delay=delay,
            attempt=attempt,
            reason=error.provider_message or str(error),
        )
    )


def _final_error(
    failure: _Failure,
    request: ProviderRequest,
    previous: ProviderError | None,
    number: int,
    attempts: int,
) -> ProviderError | None:
    """The error that ends the request after attempt ``number`` failed, or None to try again."""
    error = failure.error
    if error.retryable and request.give_up is not None and request.give_up(error):
        return _with_message(error, str(error), retryable=False)
    if error.retryable and failure.retry_after is None and _same_internal_error(error, previous):
        return _with_message(
            error,
            f"{error} (not sent again: the server failed the same way twice, so the request "
            "itself is the cause, not a passing fault)",
            retryable=False,
        )
    if not error.retryable or number >= attempts:
        if error.retryable and attempts > 1:
            return _with_message(error, f"{error} (gave up after {attempts} attempts)")
        return error
    return None


def _parse_json(raw: bytes, sending: _Sending) -> Any:
    """The JSON answer ``raw``, with the key redacted from its bytes and, where escapes may spell
    it, from its strings: the parsed value is encoded again only then."""
    api, url, key = sending.request.api, sending.request.url, sending.key
    if key is not None:
        raw = redact_raw(raw, key)
    try:
        value = json_value_of_bytes(raw)
        if key is None or not escapes_may_hide(raw, key):
            return value
        return redact_json(value, key)
    except RecursionError:
        raise _Failure(
            ProviderError(
                f"{api}: the answer from {_where(url)} is JSON nested too deep to read",
                api=api,
                status=200,
            )
        ) from None
    except ValueError:
        text = _redact(raw[:200].decode("utf-8", "replace"), sending.key)
        raise _Failure(
            ProviderError(
                f"{api}: the answer from {_where(url)} is not JSON: {text!r}",
                api=api,
                status=200,
            )
        ) from None


async def _read_capped(response: aiohttp.ClientResponse, sending: _Sending) -> bytes:
    """The body of ``response`` after decompression, refused past ``max_response_bytes``.

    aiohttp decompresses a bounded amount per chunk, so counting the chunks bounds memory even
    for a small compressed body that expands to gigabytes.
    """
    api, url, limit = sending.request.api, sending.request.url, sending.config.max_response_bytes
    chunks: list[bytes] = []
    size = 0
    content = response.content
    # readany() as iter_any() calls it, without the iterator's coroutine and StopAsyncIteration.
    while chunk := await content.readany():
        size += len(chunk)
        if size > limit:
            response.close()
            raise _Failure(
                ProviderError(
                    f"{api}: the answer from {_where(url)} is larger than {limit} bytes after "
                    "decompression (provider.max_response_bytes); it was not read further",
                    api=api,
                    status=response.status,
                )
            )
        chunks.append(chunk)
    return b"".join(chunks)


async def _finish_body(content: aiohttp.StreamReader) -> None:
    """Read what follows a stream's last event when the body has not ended with it, so that its
    connection is kept for the next request. A consumer stops at its API's final event
    (``[DONE]``, ``message_stop``, ``response.completed``), and the end of the body (the chunked
    encoding's last, empty chunk) often arrives a moment later: released before it, the response
    closes the connection, and the next request opens another (with TLS, a handshake). A body
    that goes on past ``_TAIL_BYTES`` or ``_TAIL_WAIT``, or falls silent past ``read_timeout``,
    is left, and its connection closed as before; nothing read here is used."""
    size = 0
    with contextlib.suppress(aiohttp.ClientError, TimeoutError):
        async with asyncio.timeout(_TAIL_WAIT):
            while chunk := await content.readany():
                size += len(chunk)
                if size > _TAIL_BYTES:
                    return


async def _checked_events(
    content: aiohttp.StreamReader, decoder: SSEDecoder, sending: _Sending
) -> AsyncGenerator[SSEEvent, None]:
    """The events of a stream's body, decoded chunk by chunk (as ``content.iter_any()`` yields
    them), with the API key redacted from their data, and limits explained.

    This is where every streamed provider text enters the host, so an error event that echoes
    the key (escaped or not) cannot carry it into messages, events or traces.
    """
    api, url, key = sending.request.api, sending.request.url, sending.key
    try:
        while chunk := await content.readany():
            for event in decoder.feed(chunk):
                yield _redacted_event(event, key) if key else event
        for event in decoder.close():
            yield _redacted_event(event, key) if key else event
    except SSELimitExceeded as exc:
        setting = "max_sse_line_chars" if exc.what == "line" else "max_sse_event_chars"
        raise ProviderError(
            f"{api}: the stream from {_where(url)} has {'an' if exc.what == 'event' else 'a'} "
            f"{exc.what} longer than {exc.limit} "
            f"characters (provider.{setting}); it was stopped",
            api=api,
            status=200,
        ) from None


def _redacted_event(event: SSEEvent, key: str) -> SSEEvent:
    """``event`` with ``key`` redacted from its data (the same event when the key is absent)."""
    data = event.data
    # Substring tests spare the calls for most events: an event rarely holds the key, and
    # only one with a backslash can hide it behind escapes.
    redacted = redact_text(data, key) if key in data else data
    if "\\" in redacted and escapes_may_hide(redacted, key):
        redacted = _redacted_json_text(redacted, key)
    return event if redacted is data else attrs.evolve(event, data=redacted)


def _redacted_json_text(data: str, key: str) -> str:
    """JSON text with ``key`` redacted even where the sender spelled it with escapes."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return data
    redacted = redact_json(value, key)
    return data if redacted is value else json.dumps(redacted, ensure_ascii=False)


def _with_message(
    error: ProviderError, message: str, *, retryable: bool | None = None
) -> ProviderError:
    copy = type(error)(
        message,
        api=error.api,
        status=error.status,
        retryable=error.retryable if retryable is None else retryable,
        provider_message=error.provider_message,
    )
    return copy


def provider_message(payload: Any) -> str | None:
    """The human message inside a provider's error body, whatever its shape.

    Understands ``{"error": {"message": …}}`` (OpenAI, Anthropic), ``{"error": "…"}`` (Ollama,
    llama.cpp), ``{"message": …}`` and ``{"detail": …}`` (vLLM, FastAPI servers) and lists of
    those; returns None when nothing fits.
    """
    if isinstance(payload, str):
        return payload.strip() or None
    if isinstance(payload, list):
        for item in payload:
            found = provider_message(item)
            if found:
                return found
        return None
    if not isinstance(payload, dict):
        return None
    for field in ("error", "message", "detail", "msg"):
        if field in payload:
            found = provider_message(payload[field])
            if found:
                return found
    return None


async def _status_failure(response: aiohttp.ClientResponse, sending: _Sending) -> _Failure:
    api, url, key = sending.request.api, sending.request.url, sending.key
    status = response.status
    if status < 400:
        return _redirect_failure(response, sending.request)
    try:
        raw = await response.content.read(_ERROR_BODY_LIMIT)
    except (aiohttp.ClientError, TimeoutError):
        raw = b""
    text = raw.decode("utf-8", "replace")
    payload: Any = None
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        message = None
    else:
        message = provider_message(payload)
    if message is None:
        message = " ".join(text.split())[:500] or None
    if message is not None:
        message = _redact(message, key)
    should_retry = response.headers.get("x-should-retry", "").strip().lower()
    retryable = status in RETRYABLE_STATUSES
    if should_retry == "true":
        retryable = True
    elif should_retry == "false":
        retryable = False
    reason = response.reason or ""
    text_out = f"{api}: HTTP {status}{' ' + reason if reason else ''} from {_where(url)}"
    if message:
        text_out += f": {message}"
    error = ProviderError(
        text_out, api=api, status=status, retryable=retryable, provider_message=message
    )
    retry_after = _retry_after(response.headers)
    if retry_after is None:
        retry_after = body_retry_delay(payload)
    return _Failure(error, retry_after=retry_after)


def _same_internal_error(error: ProviderError, previous: ProviderError | None) -> bool:
    """True when an HTTP 500 repeats the previous attempt's word for word: a deterministic fault.

    Overloads and gateways answer 502, 503 or 504 and are always sent again; a 500 with the same
    message twice (a template that cannot read the request, a validation error) will not pass.
    """
    return (
        previous is not None
        and error.status == 500
        and previous.status == 500
        and error.provider_message is not None
        and error.provider_message == previous.provider_message
    )


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait the server asked for: ``retry-after-ms``, else ``Retry-After`` (seconds or date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("Retry-After")
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


_RETRY_INFO: Final = "type.googleapis.com/google.rpc.RetryInfo"
_DURATION: Final = re.compile(r"\s*(\d+(?:\.\d+)?)s\s*")


def body_retry_delay(payload: Any) -> float | None:
    """The wait an error body asks for, for APIs that say it there rather than in a header:
    Google's ``google.rpc.RetryInfo`` detail (``{"error": {"details": [{"@type":
    "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "38s"}]}}``). None when absent."""
    error = payload.get("error") if isinstance(payload, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    if not isinstance(details, list):
        return None
    for detail in details:
        if isinstance(detail, dict) and detail.get("@type") == _RETRY_INFO:
            delay = detail.get("retryDelay")
            found = _DURATION.fullmatch(delay) if isinstance(delay, str) else None
            if found is not None:
                return float(found.group(1))
    return None


def _broken_stream(
    exc: BaseException, request: ProviderRequest, delivered: bool
) -> _Failure | ProviderError:
    """A stream's connection failure: to retry while nothing was delivered, else final."""
    failure = _connection_failure(exc, request)
    if not delivered:
        return failure
    return ProviderError(
        f"{request.api}: the stream from {_where(request.url)} broke after content "
        f"was delivered ({failure.error.provider_message}); the turn is incomplete "
        "and is not sent again",
        api=request.api,
        status=200,
    )


def _connection_failure(exc: BaseException, request: ProviderRequest) -> _Failure:
    if isinstance(exc, TimeoutError):
        what = "timed out (provider.connect_timeout / provider.read_timeout)"
    elif isinstance(exc, aiohttp.ClientPayloadError):
        what = "the answer was cut off"
    elif isinstance(exc, aiohttp.ServerDisconnectedError):
        what = "the server closed the connection"
    elif isinstance(exc, aiohttp.ClientConnectorError):
        what = f"cannot connect ({exc.os_error.strerror or type(exc.os_error).__name__})"
    elif isinstance(exc, aiohttp.ClientConnectionError):
        what = f"connection failed ({type(exc).__name__})"
    else:
        what = f"request failed ({type(exc).__name__}: {exc})"
    api = request.api
    message = f"{api}: {_where(request.url)}: {what}"
    return _Failure(ProviderError(message, api=api, retryable=True, provider_message=what))


def _redirect_failure(response: aiohttp.ClientResponse, request: ProviderRequest) -> _Failure:
    """A redirect, refused: provider requests carry the API key and never follow one."""
    from ..net._errors import shown_url

    location = response.headers.get("Location")
    where = f"to {shown_url(location)}" if location else "without a Location"
    return _Failure(
        ProviderError(
            f"{request.api}: {_where(request.url)} answered HTTP {response.status}, a redirect "
            f"{where}; provider requests do not follow redirects (they carry the API key): set "
            "provider.base_url to the final address",
            api=request.api,
            status=response.status,
        )
    )


def _check_event_stream(response: aiohttp.ClientResponse, request: ProviderRequest) -> None:
    content_type = response.headers.get("Content-Type", "")
    if content_type and "json" in content_type.lower():
        raise _Failure(
            ProviderError(
                f"{request.api}: {_where(request.url)} answered a streaming request with "
                f"{content_type} instead of an event stream; set provider.stream = false for "
                "this host",
                api=request.api,
                status=response.status,
            )
        )
