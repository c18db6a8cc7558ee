"""Tests of the server-sent events decoder."""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.http._sse import DONE_SENTINEL, SSEDecoder, SSEEvent, SSELimitExceeded, aiter_sse

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def decode(body: bytes, chunk_sizes: list[int] | None = None) -> list[SSEEvent]:
    """Decode a body in one piece, or in chunks of the given sizes (cycled)."""
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    if chunk_sizes is None:
        events += decoder.feed(body)
    else:
        position = 0
        index = 0
        while position < len(body):
            size = chunk_sizes[index % len(chunk_sizes)]
            events += decoder.feed(body[position : position + size])
            position += size
            index += 1
    return events + decoder.close()


def every_two_way_split(body: bytes) -> list[list[SSEEvent]]:
    results = []
    for i in range(len(body) + 1):
        decoder = SSEDecoder()
        results.append(decoder.feed(body[:i]) + decoder.feed(body[i:]) + decoder.close())
    return results


# -- fields ----------------------------------------------------------------------------------------


def test_event_with_every_field() -> None:
    body = b'event: tool\ndata: {"a": 1}\nid: 7\nretry: 1500\n\n'
    assert decode(body) == [SSEEvent(data='{"a": 1}', event="tool", id="7", retry=1500)]


def test_data_lines_are_joined_with_newlines() -> None:
    body = b"data: first\ndata:\ndata:  third with a space\ndata:fourth\n\n"
    assert decode(body) == [SSEEvent(data="first\n\n third with a space\nfourth")]


def test_only_one_leading_space_is_stripped_and_colons_in_values_stay() -> None:
    assert decode(b"data:   x: y \n\n") == [SSEEvent(data="  x: y ")]


def test_field_without_colon_has_an_empty_value() -> None:
    assert decode(b"data\n\n") == [SSEEvent(data="")]
    assert decode(b"event\ndata: x\n\n") == [SSEEvent(data="x", event="message")]


def test_comments_and_unknown_fields_are_ignored() -> None:
    body = b": keep-alive\n:\nfoo: bar\nData: no\ndata : no\ndata: yes\n\n"
    assert decode(body) == [SSEEvent(data="yes")]


def test_event_without_data_is_not_dispatched_and_its_type_does_not_leak() -> None:
    body = b"event: ping\n\ndata: x\n\n"
    assert decode(body) == [SSEEvent(data="x", event="message")]


def test_last_event_id_carries_over_and_can_be_reset() -> None:
    body = b"id: 1\ndata: a\n\ndata: b\n\nid: 2\n\ndata: c\n\nid\ndata: d\n\nid: x\0y\ndata: e\n\n"
    decoder = SSEDecoder()
    events = decoder.feed(body)
    assert [(e.data, e.id) for e in events] == [
        ("a", "1"),
        ("b", "1"),
        ("c", "2"),  # set by a block without data
        ("d", ""),
        ("e", ""),  # an id containing NUL is ignored
    ]
    assert decoder.last_event_id == ""


def test_retry_needs_ascii_digits_and_is_reported_once() -> None:
    decoder = SSEDecoder()
    body = "retry: 10s\ndata: a\n\nretry: 250\n\ndata: b\n\ndata: c\n\nretry: ١٢\n"
    events = decoder.feed(body.encode())
    assert [(e.data, e.retry) for e in events] == [("a", None), ("b", 250), ("c", None)]
    assert decoder.retry == 250


def test_done_sentinel() -> None:
    events = decode(b"data: {}\n\ndata: [DONE]\n\ndata: [DONE] \n\n")
    assert [e.is_done for e in events] == [False, True, False]
    assert DONE_SENTINEL == "[DONE]"


def test_json_data() -> None:
    event = SSEEvent(data='{"type": "ping"}', event="ping")
    assert event.json() == {"type": "ping"}
    with pytest.raises(ValueError, match=r"the data of the server-sent event 'oops' is not JSON"):
        SSEEvent(data="{nope", event="oops").json()


# -- line endings and encoding ---------------------------------------------------------------------


@pytest.mark.parametrize("ending", [b"\n", b"\r", b"\r\n"])
def test_every_line_ending(ending: bytes) -> None:
    body = ending.join([b"event: e", b"data: a", b"data: b", b"", b"data: c", b"", b""])
    expected = [SSEEvent(data="a\nb", event="e"), SSEEvent(data="c")]
    assert decode(body) == expected
    assert all(events == expected for events in every_two_way_split(body))


def test_crlf_split_across_chunks_ends_one_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\n") == []  # the LF completes the CRLF: no blank line yet
    assert decoder.feed(b"data: b\r") == []
    assert decoder.feed(b"\n\r") == [SSEEvent(data="a\nb")]
    assert decoder.feed(b"\ndata: c\r\r") == [SSEEvent(data="c")]


def test_cr_then_cr_is_a_blank_line_even_across_chunks() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\r") == [SSEEvent(data="a")]


def test_multibyte_characters_split_across_chunks() -> None:
    body = "data: 東京 😀 é\n\n".encode()
    expected = [SSEEvent(data="東京 😀 é")]
    assert all(events == expected for events in every_two_way_split(body))
    assert decode(body, [1]) == expected


def test_invalid_utf8_becomes_replacement_characters() -> None:
    assert decode(b"data: a\xffb\xc3\n\n") == [SSEEvent(data="a\ufffdb\ufffd")]


def test_one_leading_byte_order_mark_is_dropped() -> None:
    body = b"\xef\xbb\xbfdata: a\n\ndata: \xef\xbb\xbfb\n\n"
    assert decode(body, [1]) == [SSEEvent(data="a"), SSEEvent(data="\ufeffb")]
    assert decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n") == []  # the second one is a field name


# -- end of stream ---------------------------------------------------------------------------------


def test_last_event_without_blank_line_is_dispatched_at_close() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\ndata: b\n") == [SSEEvent(data="a")]
    assert decoder.close() == [SSEEvent(data="b")]
    assert decoder.discarded == ""


def test_clean_end_also_ends_an_unterminated_last_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'event: message_stop\ndata: {"type":"message_stop"}') == []
    assert decoder.close() == [SSEEvent(data='{"type":"message_stop"}', event="message_stop")]


def test_body_cut_inside_a_character_drops_the_last_event() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\ndata: b\ndata: \xe6\x9d") == [SSEEvent(data="a")]
    assert decoder.close() == []
    assert decoder.discarded == "data: \ufffd"


def test_close_without_pending_event_and_twice() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a\n\n: comment\nevent: x\n")
    assert decoder.close() == []
    assert decoder.close() == []
    with pytest.raises(RuntimeError, match=r"feed\(\) called after close\(\)"):
        decoder.feed(b"data: late\n\n")


def test_feed_refuses_text() -> None:
    with pytest.raises(TypeError, match="takes bytes, got str"):
        SSEDecoder().feed("data: x\n\n")  # type: ignore[arg-type]


# -- async -----------------------------------------------------------------------------------------


async def test_aiter_sse_over_an_async_iterable() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for chunk in (b"data: a\r", b"\n\r\nid: 9\ndata: b", b"\n\n", b"data: [DONE]"):
            yield chunk

    decoder = SSEDecoder()
    events = [event async for event in aiter_sse(chunks(), decoder)]
    assert events == [
        SSEEvent(data="a"),
        SSEEvent(data="b", id="9"),
        SSEEvent(data="[DONE]", id="9"),
    ]
    assert decoder.last_event_id == "9"


async def test_aiter_sse_passes_on_a_cut_connection_without_the_pending_event() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'data: whole\n\ndata: {"half'
        raise ConnectionResetError("peer went away")

    events = aiter_sse(chunks())
    assert await anext(events) == SSEEvent(data="whole")
    with pytest.raises(ConnectionResetError, match="peer went away"):
        await anext(events)


async def test_aiter_sse_reading_a_loopback_server() -> None:
    pieces = [
        b": hello\r",
        b'\nevent: delta\r\ndata: {"text": "\xe6\x9d',
        b'\xb1\xe4\xba\xac"}\r',
        b"\n\r",
        b"\ndata: [DONE]\r\n\r\n",
    ]

    async def stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for piece in pieces:
            await response.write(piece)
            await asyncio.sleep(0.01)  # separate TCP writes, so the client sees the splits
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/events", stream)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/events") as response,
        ):
            events = [event async for event in aiter_sse(response.content.iter_any())]
    finally:
        await runner.cleanup()
    assert events == [SSEEvent(data='{"text": "東京"}', event="delta"), SSEEvent(data="[DONE]")]
    assert events[0].json() == {"text": "東京"}
    assert events[1].is_done


# -- properties ------------------------------------------------------------------------------------

values = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=12)


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[SSEEvent]]:
    """A stream written with random line endings, and the events it must decode to."""
    lines: list[str] = []
    expected: list[SSEEvent] = []
    last_id = ""
    retry: int | None = None
    for _ in range(draw(st.integers(0, 6))):
        for comment in draw(st.lists(values, max_size=1)):
            lines.append(":" + comment)
        event_type = draw(st.none() | values)
        if event_type is not None:
            lines.append("event: " + event_type)
        event_id = draw(
            st.none() | st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=4)
        )
        if event_id is not None:
            lines.append("id: " + event_id)
            if "\0" not in event_id:
                last_id = event_id
        new_retry = draw(st.none() | st.integers(0, 10**6))
        if new_retry is not None:
            lines.append(f"retry: {new_retry}")
            retry = new_retry
        data_lines = draw(st.lists(values, max_size=3))
        for data in data_lines:
            compact: bool = draw(st.booleans()) and not data.startswith(" ")
            lines.append(("data:" if compact else "data: ") + data)
        lines.append("")
        if data_lines:
            expected.append(
                SSEEvent(
                    data="\n".join(data_lines),
                    event=event_type or "message",
                    id=last_id,
                    retry=retry,
                )
            )
            retry = None
    no_final_blank_line: bool = draw(st.booleans())
    if lines and no_final_blank_line:
        lines.pop()  # no blank line after the last event: close() still dispatches it
    text = "\ufeff" if draw(st.booleans()) else ""
    previous = ""
    for line in lines:
        choices = ["\n", "\r", "\r\n"]
        if previous == "\r" and not line:
            choices = ["\r", "\r\n"]  # CR then an LF-ended blank line would read as one CRLF
        previous = draw(st.sampled_from(choices))
        text += line + previous
    return text.encode("utf-8", "surrogatepass"), expected


@settings(max_examples=80)
@given(case=streams(), seed=st.integers(0, 2**32))
def test_any_chunking_yields_the_written_events(
    case: tuple[bytes, list[SSEEvent]], seed: int
) -> None:
    body, expected = case
    assert decode(body) == expected
    rng = random.Random(seed)
    sizes = [rng.choice([1, 1, 2, 3, 7, 64]) for _ in range(20)]
    assert decode(body, sizes) == expected


# -- real streams ----------------------------------------------------------------------------------


def _recorded_bodies() -> list[tuple[str, bytes]]:
    traffic = SHARED_DATA / "provider-traffic"
    bodies = [
        (path.name, path.read_bytes())
        for folder in ("openai-chat-sse", "anthropic-messages-sse")
        for path in sorted((traffic / folder).iterdir())
    ]
    for path in sorted((traffic / "anthropic-tool-runs").iterdir()):
        for exchange in json.loads(path.read_text(encoding="utf-8")):
            if isinstance(exchange["response"]["body"], str):
                bodies.append((path.name, exchange["response"]["body"].encode()))
    with (traffic / "recorded-exchanges.jsonl").open(encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            record = json.loads(line)
            if record.get("response_sse"):
                bodies.append((f"exchange {number}", record["response_sse"].encode()))
    return bodies


@pytest.mark.shared_data
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is not present")
def test_recorded_provider_streams() -> None:
    bodies = _recorded_bodies()
    assert len(bodies) >= 25
    for name, body in bodies:
        events = decode(body)
        assert events, name
        assert decode(body, [1]) == events, name
        assert decode(body, [5, 17, 3, 1024]) == events, name
        for event in events:
            if event.is_done:
                continue
            payload = event.json()
            if event.event != "message":  # Anthropic and Responses name each event by its type
                assert payload["type"] == event.event, name
        if re.fullmatch(r"[0-9a-f]{64}\.bin", name):
            assert events[-1].is_done, name


@pytest.mark.parametrize("space", ["", " "])
def test_data_and_event_lines_read_alike_with_or_without_the_space(space: str) -> None:
    body = f"event:{space}delta\ndata:{space}one\ndata:{space}two\n\ndata:{space}three\n\n"
    assert decode(body.encode()) == [
        SSEEvent(data="one\ntwo", event="delta"),
        SSEEvent(data="three"),
    ]
    decoder = SSEDecoder(max_event=7)
    assert decoder.feed(f"data:{space}abc\ndata:{space}d\n\n".encode()) == [SSEEvent("abc\nd")]
    with pytest.raises(SSELimitExceeded, match="event is longer than 7 characters"):
        decoder.feed(f"data:{space}abcd\ndata:{space}ef\n".encode())
