"""A hostile provider: redirects, keys echoed back, compression bombs and endless streams."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

from toolwire._redact import (
    REDACTED,
    escapes_may_hide,
    redact_json,
    redact_raw,
    redact_text,
)
from toolwire.adapters import ANTHROPIC_KEY_HEADER, ProviderError
from toolwire.config import ProviderConfig
from toolwire.events import Event
from toolwire.http._sse import SSEDecoder, SSEEvent, SSELimitExceeded
from toolwire.http._transport import ProviderRequest, Transport

KEY = "sk-hostile-0123456789-secret"
ESCAPED_KEY = "".join(f"\\u{ord(c):04x}" for c in KEY)  # the key as JSON escapes
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Site:
    """A loopback server with a few paths; it records the headers of every request."""

    def __init__(self, routes: dict[str, Handler]) -> None:
        self.routes = routes
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.runner: web.AppRunner | None = None
        self.base = ""

    async def __aenter__(self) -> Site:
        app = web.Application()
        for path, handler in self.routes.items():
            app.router.add_route("*", path, self._recording(handler))
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.base = f"http://127.0.0.1:{self.runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.runner is not None
        await self.runner.cleanup()

    def _recording(self, handler: Handler) -> Handler:
        async def record(request: web.Request) -> web.StreamResponse:
            self.seen.append((request.path, dict(request.headers)))
            return await handler(request)

        return record


def client(**fields: Any) -> Transport:
    values: dict[str, Any] = {"max_retries": 0, "read_timeout": 10.0, "total_timeout": 30.0}
    values.update(fields)

    async def no_sleep(delay: float) -> None:
        return None

    return Transport(ProviderConfig(**values), sleep=no_sleep, environ={"MY_KEY": KEY})


async def _events(transport: Transport, url: str) -> list[SSEEvent]:
    collected: list[SSEEvent] = []

    async def consume(events: AsyncIterator[SSEEvent], emit: Callable[[Event], None]) -> None:
        async for event in events:
            collected.append(event)

    await transport.consume_sse(ProviderRequest(url, {}, api="test-api", key_env="MY_KEY"), consume)
    return collected


# -- redirects ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("stream", [False, True])
async def test_a_redirect_is_an_error_naming_the_location_and_the_key_stays_home(
    status: int, stream: bool
) -> None:
    async def elsewhere(request: web.Request) -> web.StreamResponse:
        return web.json_response({"stolen": True})

    async with Site({"/collect": elsewhere}) as other:
        target = f"{other.base}/collect?from=provider"

        async def moved(request: web.Request) -> web.StreamResponse:
            return web.Response(status=status, headers={"Location": target})

        async with Site({"/v1/messages": moved}) as provider, client() as transport:
            endpoint = f"{provider.base}/v1/messages"
            sending = (
                _events(transport, endpoint)
                if stream
                else transport.post_json(
                    ProviderRequest(
                        endpoint,
                        {},
                        api="test-api",
                        key_env="MY_KEY",
                        key_header=ANTHROPIC_KEY_HEADER,
                    )
                )
            )
            with pytest.raises(ProviderError) as caught:
                await sending
    message = str(caught.value)
    assert f"answered HTTP {status}, a redirect to {target}" in message
    assert "provider.base_url" in message
    assert caught.value.status == status
    assert other.seen == []  # the other origin never saw a request, nor the key


# -- keys echoed back --------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", [KEY, ESCAPED_KEY], ids=["plain", "escaped"])
async def test_a_key_echoed_in_a_json_answer_is_redacted(spelling: str) -> None:
    body = f'{{"type": "error", "error": {{"message": "invalid key: {spelling}"}}}}'

    async def echo(request: web.Request) -> web.StreamResponse:
        return web.Response(text=body, content_type="application/json")

    async with Site({"/v1/messages": echo}) as provider, client() as transport:
        answer = await transport.post_json(
            ProviderRequest(f"{provider.base}/v1/messages", {}, api="test-api", key_env="MY_KEY")
        )
    assert answer == {"type": "error", "error": {"message": f"invalid key: {REDACTED}"}}


@pytest.mark.parametrize("spelling", [KEY, ESCAPED_KEY], ids=["plain", "escaped"])
async def test_a_key_echoed_in_a_stream_event_is_redacted(spelling: str) -> None:
    async def stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b'data: {"choices": []}\n\n')
        await response.write(
            (f'event: error\ndata: {{"error": {{"message": "bad key {spelling}"}}}}\n\n').encode()
        )
        await response.write_eof()
        return response

    async with Site({"/v1/chat": stream}) as provider, client() as transport:
        events = await _events(transport, f"{provider.base}/v1/chat")
    assert [event.event for event in events] == ["message", "error"]
    assert KEY not in events[1].data
    assert json.loads(events[1].data) == {"error": {"message": f"bad key {REDACTED}"}}


SLASHED_KEY = "sk-hostile/0123456789+secret"  # base64 keys hold "/", which JSON may escape


async def test_a_key_with_a_slash_echoed_escaped_in_a_stream_event_is_redacted() -> None:
    spelled = SLASHED_KEY.replace("/", "\\/")

    async def stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(f'data: {{"error": "bad key {spelled}"}}\n\n'.encode())
        await response.write_eof()
        return response

    async with Site({"/v1/chat": stream}) as provider:
        transport = Transport(ProviderConfig(max_retries=0), environ={"MY_KEY": SLASHED_KEY})
        async with transport:
            events = await _events(transport, f"{provider.base}/v1/chat")
    assert json.loads(events[0].data) == {"error": f"bad key {REDACTED}"}


async def test_a_json_answer_is_encoded_again_only_when_escapes_may_hide_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import toolwire.http._transport as transport_module

    encoded: list[Any] = []

    def counting(value: Any, secret: str | None) -> Any:
        encoded.append(value)
        return redact_json(value, secret)

    monkeypatch.setattr(transport_module, "redact_json", counting)
    bodies = iter(
        [
            f'{{"text": "a line\\nand the key {KEY}"}}',  # escapes, but none that spell a key
            f'{{"text": "the key {ESCAPED_KEY}"}}',
        ]
    )

    async def answer(request: web.Request) -> web.StreamResponse:
        return web.Response(text=next(bodies), content_type="application/json")

    async with Site({"/v1/messages": answer}) as provider, client() as transport:
        request = ProviderRequest(f"{provider.base}/v1/messages", {}, api="t", key_env="MY_KEY")
        first = await transport.post_json(request)
        second = await transport.post_json(request)
    assert first == {"text": f"a line\nand the key {REDACTED}"}
    assert second == {"text": f"the key {REDACTED}"}
    assert encoded == [{"text": f"the key {KEY}"}]


def test_escapes_may_hide_a_key_only_where_json_could_spell_it_so() -> None:
    assert not escapes_may_hide(b'{"a": "b\\n"}', KEY)  # no escape spells "sk-hostile..."
    assert escapes_may_hide(b'{"a": "\\u0073k"}', KEY)
    assert escapes_may_hide('{"a": "b\\n"}', SLASHED_KEY)  # its "/" may be written "\\/"
    assert not escapes_may_hide('{"a": "b"}', SLASHED_KEY)
    assert not escapes_may_hide('{"a": "\\u0073"}', None)


def test_redaction_helpers_leave_text_without_the_key_alone() -> None:
    value = {"a": ["x", {"b": "y"}]}
    assert redact_json(value, KEY) is value
    assert redact_text("nothing here", KEY) == "nothing here"
    assert redact_raw(b"key=" + KEY.encode(), KEY) == b"key=" + REDACTED.encode()
    # A "key" too short to be a secret is not replaced all over the text.
    assert redact_text("a b c", "b") == "a b c"
    assert redact_json({KEY: KEY}, KEY) == {REDACTED: REDACTED}


# -- bombs -------------------------------------------------------------------------------------


def _gzip_of_zeros(size: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b"0" * (1024 * 1024)
    parts = [compressor.compress(b'{"pad": "')]
    for _ in range(size // len(block)):
        parts.append(compressor.compress(block))
    parts.append(compressor.compress(b'"}'))
    parts.append(compressor.flush())
    return b"".join(parts)


async def test_a_compression_bomb_stops_at_the_decompressed_cap() -> None:
    bomb = _gzip_of_zeros(256 * 1024 * 1024)  # 256 MiB of JSON in about 250 KB
    assert len(bomb) < 1024 * 1024

    async def explode(request: web.Request) -> web.StreamResponse:
        return web.Response(
            body=bomb,
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
        )

    capped = client(max_response_bytes=4 * 1024 * 1024)
    async with Site({"/v1/chat": explode}) as provider, capped as transport:
        with pytest.raises(ProviderError, match=r"larger than 4194304 bytes after decomp"):
            await transport.post_json(
                ProviderRequest(f"{provider.base}/v1/chat", {}, api="test-api")
            )


async def test_an_answer_under_the_cap_is_read_whole() -> None:
    async def small(request: web.Request) -> web.StreamResponse:
        return web.Response(
            body=gzip.compress(b'{"ok": "' + b"x" * 5000 + b'"}'),
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
        )

    async with Site({"/v1/chat": small}) as provider, client(max_response_bytes=6000) as transport:
        answer = await transport.post_json(
            ProviderRequest(f"{provider.base}/v1/chat", {}, api="test-api")
        )
    assert answer == {"ok": "x" * 5000}


@pytest.mark.parametrize(
    ("what", "setting", "body"),
    [
        ("line", "max_sse_line_chars", "data: " + "a" * 4096),  # never ends its line
        ("event", "max_sse_event_chars", "data: abcdefgh\n" * 4096),  # never ends its event
    ],
)
async def test_an_endless_stream_line_or_event_stops_at_its_cap(
    what: str, setting: str, body: str
) -> None:
    async def endless(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        try:
            for _ in range(10_000):  # about 40 MiB, unless the client stops reading first
                await response.write(body.encode())
        except (ConnectionError, RuntimeError):
            pass
        return response

    capped = client(max_sse_line_chars=65536, max_sse_event_chars=65536)
    async with Site({"/v1/chat": endless}) as provider, capped as transport:
        with pytest.raises(ProviderError) as caught:
            await _events(transport, f"{provider.base}/v1/chat")
    article = "an" if what == "event" else "a"
    assert f"has {article} {what} longer than 65536 characters (provider.{setting})" in str(
        caught.value
    )


def test_the_decoder_counts_a_line_across_chunks() -> None:
    decoder = SSEDecoder(max_line=10)
    assert decoder.feed(b"data: ab") == []
    with pytest.raises(SSELimitExceeded, match="line is longer than 10 characters"):
        decoder.feed(b"cdefg")
    decoder = SSEDecoder(max_line=10, max_event=12)
    events = decoder.feed(b"data: abcd\n\ndata: efgh\n\n")
    assert [event.data for event in events] == ["abcd", "efgh"]
    with pytest.raises(SSELimitExceeded, match="event is longer than 12 characters"):
        decoder.feed(b"data: 1234\ndata: 5678\ndata: 90\n")
