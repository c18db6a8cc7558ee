"""The provider transport: retries, Retry-After, timeouts, keys, streams; and adapter plumbing."""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.adapters import (
    ANTHROPIC_KEY_HEADER,
    CallAssembler,
    ModelRequest,
    ProviderError,
    ToolsNotSupportedError,
    parse_arguments,
    tools_not_supported,
)
from toolwire.adapters._errors import is_tools_unsupported_message
from toolwire.config import ProviderConfig
from toolwire.events import Event, ProviderRetry, ToolCallArgumentsDelta, ToolCallCompleted
from toolwire.http import _transport
from toolwire.http._sse import SSEEvent
from toolwire.http._transport import ProviderRequest, Transport, provider_message

KEY = "sk-test-0123456789-very-secret"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Server:
    """A loopback server answering with one handler per request (the last one repeats)."""

    def __init__(self, *handlers: Handler) -> None:
        self.handlers = list(handlers)
        self.requests: list[tuple[dict[str, str], Any]] = []
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def __aenter__(self) -> Server:
        app = web.Application()
        app.router.add_post("/v1/endpoint", self.handle)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}/v1/endpoint"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.runner is not None
        await self.runner.cleanup()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.requests.append((dict(request.headers), json.loads(body) if body else None))
        handler = self.handlers.pop(0) if len(self.handlers) > 1 else self.handlers[0]
        return await handler(request)


def reply(status: int = 200, body: Any = None, headers: dict[str, str] | None = None) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        payload = {"ok": True} if body is None else body
        return web.json_response(payload, status=status, headers=headers)

    return handler


def slow(seconds: float) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(seconds)
        return web.json_response({"late": True})

    return handler


def sse(*events: str, drop_after: int | None = None) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for index, event in enumerate(events):
            if drop_after is not None and index >= drop_after:
                assert request.transport is not None
                request.transport.abort()
                return response
            await response.write(f"data: {event}\n\n".encode())
        await response.write_eof()
        return response

    return handler


class Sleeps:
    """A fake sleep that records the delays asked for."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def config(**fields: Any) -> ProviderConfig:
    values: dict[str, Any] = {"max_retries": 3, "read_timeout": 5.0, "total_timeout": 30.0}
    values.update(fields)
    return ProviderConfig(**values)


def transport(
    events: list[Event] | None = None, *, random: float = 0.0, **fields: Any
) -> tuple[Transport, Sleeps]:
    sleeps = Sleeps()
    sink = events.append if events is not None else None
    made = Transport(
        config(**fields),
        emit=sink,
        sleep=sleeps,
        random=lambda: random,
        environ={"MY_KEY": KEY},
    )
    return made, sleeps


# -- requests and retries ----------------------------------------------------------------------


async def test_post_json_returns_the_answer_and_sends_the_key() -> None:
    async with Server(reply(body={"answer": "é"})) as server:
        client, _ = transport()
        async with client:
            result = await client.post_json(
                ProviderRequest(server.url, {"text": "ü"}, api="test-api", key_env="MY_KEY")
            )
    assert result == {"answer": "é"}
    headers, body = server.requests[0]
    assert body == {"text": "ü"}
    assert headers["Authorization"] == f"Bearer {KEY}"
    assert headers["Content-Type"] == "application/json"


async def test_the_key_header_is_chosen_by_the_adapter() -> None:
    async with Server(reply()) as server:
        client, _ = transport()
        async with client:
            await client.post_json(
                ProviderRequest(
                    server.url, {}, api="t", key_env="MY_KEY", key_header=ANTHROPIC_KEY_HEADER
                )
            )
    headers, _ = server.requests[0]
    assert headers["x-api-key"] == KEY
    assert "Authorization" not in headers


async def test_a_prepared_request_does_not_show_its_key() -> None:
    client, _ = transport()
    async with client:
        sending = client._prepare(
            ProviderRequest("http://127.0.0.1:9/v1", {}, api="t", key_env="MY_KEY"), stream=False
        )
    assert sending.key == KEY
    assert sending.headers["Authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(sending)


async def test_no_key_env_sends_no_key() -> None:
    async with Server(reply()) as server:
        client, _ = transport()
        async with client:
            await client.post_json(ProviderRequest(server.url, {}, api="t"))
    assert "Authorization" not in server.requests[0][0]


async def test_a_missing_key_variable_is_named_not_guessed() -> None:
    client, _ = transport()
    async with client:
        with pytest.raises(ProviderError, match="NOT_SET_ANYWHERE") as info:
            await client.post_json(
                ProviderRequest("http://127.0.0.1:9/x", {}, api="t", key_env="NOT_SET_ANYWHERE")
            )
    assert info.value.retryable is False


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
async def test_retryable_statuses_are_sent_again(status: int) -> None:
    events: list[Event] = []
    async with Server(reply(status, {"error": {"message": "busy"}}), reply()) as server:
        client, sleeps = transport(events)
        async with client:
            result = await client.post_json(
                ProviderRequest(server.url, {}, api="t", run_id="run-1", round=2)
            )
    assert result == {"ok": True}
    assert len(server.requests) == 2
    assert sleeps.delays == [0.5]
    assert events == [
        ProviderRetry(
            run_id="run-1", round=2, api="t", status=status, delay=0.5, attempt=2, reason="busy"
        )
    ]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_not_sent_again(status: int) -> None:
    body = {"error": {"message": "you did it wrong", "type": "invalid_request_error"}}
    async with Server(reply(status, body)) as server:
        client, sleeps = transport()
        async with client:
            with pytest.raises(ProviderError) as info:
                await client.post_json(ProviderRequest(server.url, {}, api="test-api"))
    error = info.value
    assert len(server.requests) == 1
    assert sleeps.delays == []
    assert error.status == status
    assert error.provider_message == "you did it wrong"
    assert error.retryable is False
    assert str(error).startswith(f"test-api: HTTP {status} ")
    assert "you did it wrong" in str(error)
    assert "127.0.0.1" in str(error)


async def test_retry_after_seconds_is_honoured() -> None:
    async with Server(reply(429, headers={"Retry-After": "7"}), reply()) as server:
        client, sleeps = transport()
        async with client:
            await client.post_json(ProviderRequest(server.url, {}, api="t"))
    assert sleeps.delays == [7.0]


async def test_retry_after_http_date_is_honoured() -> None:
    when = email.utils.formatdate(time.time() + 20, usegmt=True)
    async with Server(reply(503, headers={"Retry-After": when}), reply()) as server:
        client, sleeps = transport()
        async with client:
            await client.post_json(ProviderRequest(server.url, {}, api="t"))
    assert len(sleeps.delays) == 1
    assert 17.0 <= sleeps.delays[0] <= 20.5


async def test_retry_after_ms_wins_over_retry_after() -> None:
    headers = {"retry-after-ms": "250", "Retry-After": "9"}
    async with Server(reply(429, headers=headers), reply()) as server:
        client, sleeps = transport()
        async with client:
            await client.post_json(ProviderRequest(server.url, {}, api="t"))
    assert sleeps.delays == [0.25]


async def test_retry_info_in_a_google_error_body_is_honoured() -> None:
    body = {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"},
            ],
        }
    }
    async with Server(reply(429, body), reply()) as server:
        client, sleeps = transport()
        async with client:
            await client.post_json(ProviderRequest(server.url, {}, api="t"))
    assert sleeps.delays == [1.5]


async def test_a_retry_after_header_wins_over_the_body() -> None:
    body = {
        "error": {
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"}]
        }
    }
    async with Server(reply(503, body, headers={"Retry-After": "2"}), reply()) as server:
        client, sleeps = transport()
        async with client:
            await client.post_json(ProviderRequest(server.url, {}, api="t"))
    assert sleeps.delays == [2.0]


@pytest.mark.parametrize(
    "detail",
    [
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "soon"},
        {"@type": "type.googleapis.com/google.rpc.Help", "retryDelay": "9s"},
        "RetryInfo 9s",
    ],
)
def test_a_body_without_a_readable_retry_info_asks_for_no_wait(detail: Any) -> None:
    from toolwire.http._transport import body_retry_delay

    assert body_retry_delay({"error": {"details": [detail]}}) is None
    assert body_retry_delay({"error": "busy"}) is None
    assert body_retry_delay(["not", "an", "object"]) is None


async def test_backoff_doubles_with_jitter_and_gives_up() -> None:
    async with Server(reply(503, {"error": {"message": "down"}})) as server:
        client, sleeps = transport(random=1.0, max_retries=3)
        async with client:
            with pytest.raises(ProviderError, match="gave up after 4 attempts") as info:
                await client.post_json(ProviderRequest(server.url, {}, api="t"))
    assert len(server.requests) == 4
    assert sleeps.delays == [0.375, 0.75, 1.5]
    assert info.value.status == 503
    assert info.value.retryable is True


async def test_a_500_that_repeats_itself_is_not_sent_a_third_time() -> None:
    same = {"error": {"message": "'dict object' has no attribute 'content'"}}
    async with Server(reply(500, same)) as server:
        client, sleeps = transport(max_retries=3)
        async with client:
            with pytest.raises(ProviderError, match="failed the same way twice") as info:
                await client.post_json(ProviderRequest(server.url, {}, api="t"))
    assert len(server.requests) == 2
    assert len(sleeps.delays) == 1
    assert info.value.status == 500
    assert info.value.retryable is False
    assert "has no attribute 'content'" in str(info.value)


async def test_a_500_that_changes_is_sent_again() -> None:
    replies = [reply(500, {"error": {"message": f"worker {n} crashed"}}) for n in range(3)]
    async with Server(*replies, reply()) as server:
        client, _ = transport(max_retries=3)
        async with client:
            assert await client.post_json(ProviderRequest(server.url, {}, api="t")) == {"ok": True}
    assert len(server.requests) == 4


async def test_should_retry_header_overrides_the_status() -> None:
    async with Server(reply(503, headers={"x-should-retry": "false"})) as server:
        client, _ = transport()
        async with client:
            with pytest.raises(ProviderError):
                await client.post_json(ProviderRequest(server.url, {}, api="t"))
    assert len(server.requests) == 1
    async with Server(reply(409, headers={"x-should-retry": "true"}), reply()) as server:
        client, _ = transport()
        async with client:
            assert await client.post_json(ProviderRequest(server.url, {}, api="t")) == {"ok": True}
    assert len(server.requests) == 2


async def test_give_up_stops_retrying_a_permanent_failure() -> None:
    body = {"error": {"message": "tools param requires --jinja flag", "type": "server_error"}}
    async with Server(reply(500, body)) as server:
        client, _ = transport()
        async with client:
            with pytest.raises(ProviderError) as info:
                await client.post_json(
                    ProviderRequest(
                        server.url,
                        {},
                        api="t",
                        give_up=lambda e: is_tools_unsupported_message(e.provider_message),
                    )
                )
    assert len(server.requests) == 1
    assert info.value.retryable is False
    assert isinstance(tools_not_supported(info.value), ToolsNotSupportedError)


async def test_retry_after_past_the_total_timeout_is_not_waited_for() -> None:
    async with Server(reply(429, headers={"Retry-After": "120"})) as server:
        client, sleeps = transport(total_timeout=10.0)
        async with client:
            with pytest.raises(ProviderError, match="would pass the total timeout"):
                await client.post_json(ProviderRequest(server.url, {}, api="t"))
    assert sleeps.delays == []


async def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client, sleeps = transport(max_retries=2)
    async with client:
        with pytest.raises(ProviderError, match="cannot connect") as info:
            await client.post_json(ProviderRequest(f"http://127.0.0.1:{port}/v1/x", {}, api="t"))
    assert len(sleeps.delays) == 2
    assert info.value.status is None


async def test_read_timeout_is_retried() -> None:
    async with Server(slow(0.4), reply()) as server:
        client = Transport(config(read_timeout=0.1, max_retries=1), sleep=Sleeps())
        async with client:
            assert await client.post_json(ProviderRequest(server.url, {}, api="t")) == {"ok": True}
    assert len(server.requests) == 2


async def test_each_request_gets_the_timeouts_of_its_own_config() -> None:
    """The per-attempt timeouts are made once per config, not once for the transport: a
    request naming another config, between requests that name none, still gets its own."""
    short = config(read_timeout=0.1, max_retries=0)
    async with Server(slow(0.4)) as server:
        client = Transport(config(read_timeout=10.0, max_retries=0), sleep=Sleeps())
        async with client:
            for _ in range(2):
                with pytest.raises(ProviderError, match="timed out"):
                    await client.post_json(ProviderRequest(server.url, {}, api="t", config=short))
                answer = await client.post_json(ProviderRequest(server.url, {}, api="t"))
                assert answer == {"late": True}


async def test_total_timeout_bounds_all_attempts() -> None:
    async with Server(slow(0.6)) as server:
        client = Transport(config(read_timeout=10.0, total_timeout=0.2), sleep=Sleeps())
        async with client:
            with pytest.raises(ProviderError, match=r"total timeout of 0\.2 s"):
                await client.post_json(ProviderRequest(server.url, {}, api="t"))
    assert len(server.requests) == 1


def dribble(*pieces: bytes, gap: float, content_type: str = "application/json") -> Handler:
    """The answer's headers, then ``pieces`` written ``gap`` seconds apart (a body that stalls
    is a gap longer than the read timeout)."""

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": content_type})
        await response.prepare(request)
        for index, piece in enumerate(pieces):
            if index:
                await asyncio.sleep(gap)
            await response.write(piece)
        with contextlib.suppress(ConnectionError):  # the client may have given up
            await response.write_eof()
        return response

    return handler


async def test_a_body_that_stalls_times_out() -> None:
    """The read timeout covers the answer's body too, not only the wait for its headers; the
    task is left with no cancellation pending."""
    async with Server(dribble(b'{"ok":', b" true}", gap=1.5)) as server:
        client = Transport(config(read_timeout=0.2, max_retries=0), sleep=Sleeps())
        async with client:
            with pytest.raises(ProviderError, match="timed out") as info:
                await client.post_json(ProviderRequest(server.url, {}, api="t"))
    assert info.value.retryable is True
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0
    await asyncio.sleep(0)  # no cancellation left to hit the next await


async def test_an_error_body_that_stalls_still_gives_the_status() -> None:
    """A silence while an error answer's body is read ends that read, as aiohttp's read timeout
    did: the error is the status's (a 400, not sent again), not a timeout to retry."""

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(status=400, headers={"Content-Type": "application/json"})
        await response.prepare(request)  # the headers, then nothing for a while
        await asyncio.sleep(1.5)
        with contextlib.suppress(ConnectionError):
            await response.write(b'{"error": {"message": "bad request"}}')
            await response.write_eof()
        return response

    async with Server(handler) as server:
        client, sleeps = transport(read_timeout=0.2)
        async with client:
            with pytest.raises(ProviderError, match="HTTP 400") as info:
                await client.post_json(ProviderRequest(server.url, {}, api="t"))
    assert info.value.retryable is False
    assert len(server.requests) == 1
    assert sleeps.delays == []


async def test_a_stream_that_stalls_after_delivery_is_not_sent_again() -> None:
    async with Server(
        dribble(b"data: one\n\n", b"data: two\n\n", gap=1.5, content_type="text/event-stream")
    ) as server:
        client, sleeps = transport(read_timeout=0.2)
        async with client:
            with pytest.raises(ProviderError, match=r"after content was delivered \(timed out"):
                await client.consume_sse(ProviderRequest(server.url, {}, api="t"), collect)
    assert len(server.requests) == 1
    assert sleeps.delays == []


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
async def test_a_slow_but_steady_answer_does_not_time_out(stream: bool) -> None:
    """Pieces a twentieth of a second apart: the answer takes longer than 1.5 times the read
    timeout, but the server is never silent for long."""
    if stream:
        pieces = [b"data: %d\n\n" % index for index in range(24)]
        handler = dribble(*pieces, gap=0.05, content_type="text/event-stream")
    else:
        handler = dribble(b"[", *[b"%d, " % index for index in range(22)], b"22]", gap=0.05)
    async with Server(handler) as server:
        client, _ = transport(read_timeout=0.6, max_retries=0)
        async with client:
            request = ProviderRequest(server.url, {}, api="t")
            if stream:
                seen = await client.consume_sse(request, collect)
                assert seen == [str(index) for index in range(24)]
            else:
                assert await client.post_json(request) == list(range(23))


async def test_a_reader_that_falls_behind_is_not_a_silent_server() -> None:
    """A consumer that stops reading for longer than the read timeout, while more of the answer
    waits (aiohttp stops reading the socket), does not time the server out."""
    big = "x" * (4 * 1024 * 1024)

    async def slow_reader(events: AsyncIterator[SSEEvent], emit: Callable[[Event], None]) -> int:
        sizes = []
        async for event in events:
            if not sizes:
                await asyncio.sleep(1.0)
            sizes.append(len(event.data))
        return len(sizes)

    handler = dribble(
        b"data: one\n\n",
        f"data: {big}\n\n".encode(),
        b"data: [DONE]\n\n",
        gap=0.0,
        content_type="text/event-stream",
    )
    async with Server(handler) as server:
        client, _ = transport(read_timeout=0.2, max_retries=0)
        async with client:
            assert (
                await client.consume_sse(ProviderRequest(server.url, {}, api="t"), slow_reader) == 3
            )


async def test_total_timeout_bounds_a_steady_stream() -> None:
    pieces = [b"data: %d\n\n" % index for index in range(100)]
    handler = dribble(*pieces, gap=0.05, content_type="text/event-stream")
    async with Server(handler) as server:
        client, _ = transport(read_timeout=5.0, total_timeout=0.5, max_retries=0)
        async with client:
            with pytest.raises(ProviderError, match=r"total timeout of 0\.5 s"):
                await client.consume_sse(ProviderRequest(server.url, {}, api="t"), collect)


async def test_a_request_cancelled_from_outside_is_cancelled_not_timed_out() -> None:
    async with Server(slow(1.0)) as server:
        client, _ = transport(read_timeout=5.0, max_retries=0)
        async with client:
            task = asyncio.ensure_future(client.post_json(ProviderRequest(server.url, {}, api="t")))
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task


async def test_an_answer_that_is_not_json_is_an_error() -> None:
    async def text(request: web.Request) -> web.StreamResponse:
        return web.Response(text="<html>proxy error</html>", content_type="text/html")

    async with Server(text) as server:
        client, _ = transport()
        async with client:
            with pytest.raises(ProviderError, match="not JSON"):
                await client.post_json(ProviderRequest(server.url, {}, api="t"))


# -- secrets -----------------------------------------------------------------------------------


async def test_the_key_is_redacted_from_errors_events_and_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolwire.transport")
    events: list[Event] = []
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}"}}
    async with Server(reply(503, echo), reply(401, echo)) as server:
        client, _ = transport(events)
        async with client:
            with pytest.raises(ProviderError) as info:
                await client.post_json(ProviderRequest(server.url, {}, api="t", key_env="MY_KEY"))
    assert server.requests[0][0]["Authorization"] == f"Bearer {KEY}"
    error = info.value
    assert KEY not in str(error)
    assert KEY not in (error.provider_message or "")
    assert "[redacted]" in str(error)
    assert events
    assert all(KEY not in repr(event) for event in events)
    assert caplog.records
    assert all(KEY not in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"error": {"message": "openai style", "type": "x"}}, "openai style"),
        (
            {"type": "error", "error": {"type": "overloaded_error", "message": "anthropic"}},
            "anthropic",
        ),
        ({"error": "llama3 does not support tools"}, "llama3 does not support tools"),
        ({"object": "error", "message": "vllm style"}, "vllm style"),
        ({"detail": [{"msg": "field required"}]}, "field required"),
        ({"unrelated": 1}, None),
    ],
)
def test_provider_message_shapes(payload: Any, expected: str | None) -> None:
    assert provider_message(payload) == expected


# -- streams -----------------------------------------------------------------------------------


async def collect(events: AsyncIterator[SSEEvent], emit: Callable[[Event], None]) -> list[str]:
    seen = []
    async for event in events:
        seen.append(event.data)
        emit(ProviderRetry(run_id="", api="x", status=None, delay=0, attempt=0, reason="mark"))
    return seen


async def test_consume_sse_reads_every_event() -> None:
    async with Server(sse("one", "two", "[DONE]")) as server:
        client, _ = transport()
        async with client:
            seen = await client.consume_sse(
                ProviderRequest(server.url, {"stream": True}, api="t"), collect
            )
    assert seen == ["one", "two", "[DONE]"]
    assert server.requests[0][0]["Accept"] == "text/event-stream"


async def test_a_stream_dropped_before_delivery_is_sent_again() -> None:
    async with Server(sse("one", drop_after=0), sse("again", "[DONE]")) as server:
        client, sleeps = transport()
        async with client:
            seen = await client.consume_sse(ProviderRequest(server.url, {}, api="t"), collect)
    assert seen == ["again", "[DONE]"]
    assert len(sleeps.delays) == 1


async def test_a_stream_dropped_after_delivery_is_not_sent_again() -> None:
    async with Server(sse("one", "two", "three", drop_after=2), sse("never")) as server:
        client, sleeps = transport()
        async with client:
            with pytest.raises(ProviderError, match="after content was delivered") as info:
                await client.consume_sse(ProviderRequest(server.url, {}, api="t"), collect)
    assert len(server.requests) == 1
    assert sleeps.delays == []
    assert info.value.retryable is False


async def test_a_retryable_stream_error_before_delivery_is_sent_again() -> None:
    attempts = 0

    async def consume(events: AsyncIterator[SSEEvent], emit: Callable[[Event], None]) -> str:
        nonlocal attempts
        attempts += 1
        async for event in events:
            if event.data == "overloaded":
                raise ProviderError("overloaded", api="t", retryable=True)
            return event.data
        return ""

    async with Server(sse("overloaded"), sse("fine")) as server:
        client, _ = transport()
        async with client:
            assert (
                await client.consume_sse(ProviderRequest(server.url, {}, api="t"), consume)
                == "fine"
            )
    assert attempts == 2


async def test_a_stream_answered_with_json_is_refused_clearly() -> None:
    async with Server(reply(body={"choices": []})) as server:
        client, _ = transport()
        async with client:
            with pytest.raises(ProviderError, match="instead of an event stream"):
                await client.consume_sse(ProviderRequest(server.url, {}, api="t"), collect)


async def test_a_consumer_that_stops_early_leaves_no_event_reader_to_the_collector() -> None:
    """The events a consumer stops reading at its last event are closed when it returns, not
    later by the event loop's finalizer (a wake-up and a task every streamed answer)."""
    kept: list[Any] = []

    async def first(events: AsyncIterator[SSEEvent], emit: Callable[[Event], None]) -> str:
        kept.append(events)
        async for event in events:
            return event.data
        return ""

    async with Server(sse("one", "two", "[DONE]")) as server:
        client, _ = transport()
        async with client:
            seen = await client.consume_sse(ProviderRequest(server.url, {}, api="t"), first)
    assert seen == "one"
    assert kept[0].ag_frame is None  # closed


def sse_with_tail(*events: str, tail: bytes = b"", end: asyncio.Event | None = None) -> Handler:
    """The events, then ``tail`` (comments) a moment later, then the body's end: at once, or
    when ``end`` is set; each request's client port is noted in ``PORTS``."""

    async def handler(request: web.Request) -> web.StreamResponse:
        assert request.transport is not None
        PORTS.append(request.transport.get_extra_info("peername")[1])
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for event in events:
            await response.write(f"data: {event}\n\n".encode())
        await asyncio.sleep(0.05)  # after the last event: in a packet of its own
        if tail:
            await response.write(tail)
        if end is not None:
            await end.wait()
        with contextlib.suppress(ConnectionError):  # the client may have closed it
            await response.write_eof()
        return response

    return handler


PORTS: list[int] = []


async def until_done(events: AsyncIterator[SSEEvent], emit: Callable[[Event], None]) -> list[str]:
    """A consumer that stops at its API's last event, as the adapters do."""
    seen = []
    async for event in events:
        if event.data == "[DONE]":
            break
        seen.append(event.data)
    return seen


async def test_a_stream_whose_end_follows_its_last_event_keeps_the_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The body's end arriving a moment after ``[DONE]`` is waited for: the next request goes
    on the same connection instead of a new one (a TLS handshake with a real provider)."""
    monkeypatch.setattr(_transport, "_TAIL_WAIT", 30.0)  # however slow the machine
    PORTS.clear()
    async with Server(sse_with_tail("one", "[DONE]")) as server:
        client, _ = transport()
        async with client:
            for _ in range(3):
                seen = await client.consume_sse(
                    ProviderRequest(server.url, {}, api="t"), until_done
                )
                assert seen == ["one"]
    assert len(PORTS) == 3
    assert len(set(PORTS)) == 1


@pytest.mark.parametrize("tail", [b"", b": more\n\n" * 100_000], ids=["stays-open", "goes-on"])
async def test_a_stream_that_does_not_end_after_its_last_event_is_closed(
    tail: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body that stays open past the wait, or goes on past the bytes read after the last
    event, is not waited for to its end: the answer comes back, the connection is closed, the
    next request opens another. (With a tail, only the byte limit can end the wait.)"""
    if tail:
        monkeypatch.setattr(_transport, "_TAIL_WAIT", 30.0)
    PORTS.clear()
    end = asyncio.Event()  # the body ends only after both answers came back
    async with Server(sse_with_tail("one", "[DONE]", tail=tail, end=end)) as server:
        client, _ = transport()
        async with client:
            for _ in range(2):
                seen = await asyncio.wait_for(
                    client.consume_sse(ProviderRequest(server.url, {}, api="t"), until_done),
                    timeout=10,
                )
                assert seen == ["one"]
        end.set()
    assert len(set(PORTS)) == 2


async def test_a_silence_after_the_last_event_ends_only_the_wait_for_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A read timeout while the body's end is waited for, after the last event, leaves the
    answer as it is (the connection is closed, as for a body that stays open)."""
    monkeypatch.setattr(_transport, "_TAIL_WAIT", 30.0)  # only the silence can end the wait
    PORTS.clear()
    end = asyncio.Event()
    async with Server(sse_with_tail("one", "[DONE]", end=end)) as server:
        client, _ = transport(read_timeout=0.2)
        async with client:
            for _ in range(2):
                seen = await client.consume_sse(
                    ProviderRequest(server.url, {}, api="t"), until_done
                )
                assert seen == ["one"]
        end.set()
    assert len(set(PORTS)) == 2


async def test_stream_sse_yields_events() -> None:
    async with Server(sse("a", "b")) as server:
        client, _ = transport()
        async with client:
            seen = [
                e.data async for e in client.stream_sse(ProviderRequest(server.url, {}, api="t"))
            ]
    assert seen == ["a", "b"]


# -- session -----------------------------------------------------------------------------------


async def test_one_session_is_created_lazily_reused_and_closed() -> None:
    async with Server(reply()) as server:
        client, _ = transport()
        assert client._session is None
        await client.post_json(ProviderRequest(server.url, {}, api="t"))
        session = client._session
        assert session is not None
        await client.post_json(ProviderRequest(server.url, {}, api="t"))
        assert client._session is session
        await client.aclose()
        assert session.closed
        await client.aclose()
        with pytest.raises(RuntimeError, match="closed"):
            await client.post_json(ProviderRequest(server.url, {}, api="t"))


# -- tools-unsupported answers -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "registry.ollama.ai/library/gemma3:4b does not support tools"),
        (500, "tools param requires --jinja flag"),
        (500, "Unsupported param: tools"),
        (400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser'),
        (404, "No endpoints found that support tool use. Try disabling tools."),
        (400, "This model does not support function calling"),
        (400, "Tool calling is not supported for this model"),
    ],
)
def test_tools_unsupported_messages_are_recognised(status: int, message: str) -> None:
    error = ProviderError(
        f"x: HTTP {status}: {message}", api="x", status=status, provider_message=message
    )
    refined = tools_not_supported(error)
    assert isinstance(refined, ToolsNotSupportedError)
    assert refined.status == status
    assert message in str(refined)


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "messages: at least one message is required"),
        (429, "model does not support tools right now, slow down"),
        (401, "invalid api key"),
    ],
)
def test_other_errors_are_not_tools_unsupported(status: int, message: str) -> None:
    error = ProviderError(message, api="x", status=status, provider_message=message)
    assert tools_not_supported(error) is None


# -- call assembly -----------------------------------------------------------------------------


def request() -> ModelRequest:
    return ModelRequest(run_id="run-9", round=3, messages=())


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, {}),
        ("", {}),
        ("  ", {}),
        ("null", {}),
        ('{"a": 1}', {"a": 1}),
        ({"a": 1}, {"a": 1}),
    ],
)
def test_parse_arguments_treats_empty_as_no_arguments(raw: Any, expected: Any) -> None:
    assert parse_arguments(raw) == (expected, None)


@pytest.mark.parametrize(
    ("raw", "reason"), [("[1, 2]", "array"), ('"x"', "string"), ('{"a": ', "not valid JSON")]
)
def test_parse_arguments_refuses_what_is_not_an_object(raw: str, reason: str) -> None:
    arguments, why = parse_arguments(raw)
    assert arguments is None
    assert why is not None
    assert reason in why


def test_the_assembler_interleaves_calls_and_stamps_events() -> None:
    events: list[Event] = []
    calls = CallAssembler(request(), events.append, id_factory=lambda: "generated")
    calls.begin(0, call_id="a", name="first")
    calls.begin(1, name="second")
    calls.arguments(0, '{"x": ')
    calls.arguments(1, '{"y": "é')
    calls.arguments(0, "1}")
    calls.arguments(1, '"}')
    done = calls.complete_open()
    assert [(c.id, c.name, c.arguments) for c in done] == [
        ("a", "first", {"x": 1}),
        ("generated", "second", {"y": "é"}),
    ]
    assert all(e.run_id == "run-9" and e.round == 3 for e in events)
    deltas = [e for e in events if isinstance(e, ToolCallArgumentsDelta)]
    assert [d.call_id for d in deltas] == ["a", "generated", "a", "generated"]
    assert [e.call.id for e in events if isinstance(e, ToolCallCompleted)] == ["a", "generated"]


def test_a_call_cut_off_ends_invalid_with_its_raw_text() -> None:
    calls = CallAssembler(request(), lambda event: None)
    calls.begin("k", call_id="c1", name="write")
    calls.arguments("k", '{"text": "half of it')
    (call,) = calls.finish("stop reason: max_tokens")
    assert call.arguments is None
    assert call.raw_arguments == '{"text": "half of it'
    assert call.invalid_reason is not None
    assert "max_tokens" in call.invalid_reason


def test_argument_text_arriving_before_the_name_is_delivered_once_it_starts() -> None:
    events: list[Event] = []
    calls = CallAssembler(request(), events.append)
    calls.arguments(0, '{"a"')
    calls.begin(0, call_id="late", name="tool")
    calls.arguments(0, ": 2}")
    (call,) = calls.complete_open()
    assert call.arguments == {"a": 2}
    deltas = [e.delta for e in events if isinstance(e, ToolCallArgumentsDelta)]
    assert deltas == ['{"a"', ": 2}"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(st.text(), json_values, max_size=4),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=40),
)
def test_any_split_of_the_arguments_assembles_to_the_same_object(
    value: dict[str, Any], sizes: list[int]
) -> None:
    text = json.dumps(value, ensure_ascii=False)
    calls = CallAssembler(request(), lambda event: None)
    calls.begin(0, call_id="c", name="t")
    position, turn = 0, 0
    while position < len(text):
        size = sizes[turn % len(sizes)]
        calls.arguments(0, text[position : position + size])
        position += size
        turn += 1
    (call,) = calls.complete_open()
    assert call.arguments == value
    assert call.raw_arguments == text or (text == "{}" and call.raw_arguments == "{}")
