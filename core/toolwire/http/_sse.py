"""Incremental decoding of ``text/event-stream`` bodies (server-sent events)."""

from __future__ import annotations

import codecs
import json
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Final

import attrs

__all__ = ["DONE_SENTINEL", "SSEDecoder", "SSEEvent", "SSELimitExceeded", "aiter_sse"]

DONE_SENTINEL: Final = "[DONE]"
"""The ``data`` that OpenAI-style APIs send as their last event."""

# Chunks are decoded as codecs.getincrementaldecoder("utf-8") decodes them (the bytes of a
# character split across chunks are held back for the next) with the codec's C function that
# decoder calls, without the decoder's Python method per chunk.
_UTF8_DECODE: Final = codecs.utf_8_decode


@attrs.frozen
class SSEEvent:
    """One dispatched server-sent event.

    :ivar data: the data lines of the event joined with ``"\\n"``.
    :ivar event: the event type; ``"message"`` when the event named none.
    :ivar id: the last event ID in force when the event was dispatched (it carries over from
        earlier events, as the standard says); ``""`` when none was ever set.
    :ivar retry: the reconnection time in milliseconds set by a ``retry:`` field since the previous
        dispatched event, if any.
    """

    data: str
    event: str = "message"
    id: str = ""
    retry: int | None = None

    @property
    def is_done(self) -> bool:
        """Whether this is the ``data: [DONE]`` sentinel that ends an OpenAI-style stream."""
        return self.data == DONE_SENTINEL

    def json(self) -> Any:
        """Parse :attr:`data` as JSON.

        :raises ValueError: naming the event type when the data is not JSON.
        """
        try:
            return json.loads(self.data)
        except ValueError as exc:
            raise ValueError(
                f"the data of the server-sent event {self.event!r} is not JSON ({exc}): "
                f"{self.data[:200]!r}"
            ) from None


class SSELimitExceeded(ValueError):
    """A line or an event of an event stream is longer than the decoder allows.

    :ivar what: ``"line"`` or ``"event"``.
    :ivar limit: the limit in characters.
    """

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(
            f"an event-stream {what} is longer than {limit} characters; the stream was stopped"
        )
        self.what = what
        self.limit = limit


class SSEDecoder:
    """Turn the bytes of an event stream, in chunks of any size, into events.

    It follows the WHATWG HTML "event stream interpretation": UTF-8 decoded incrementally (a
    character split across chunks is fine; invalid bytes become U+FFFD; a leading byte-order mark
    is dropped), lines ended by CRLF, CR or LF (a CRLF split across chunks counts once), ``data``
    lines joined with ``"\\n"``, comment lines (``:``) and unknown fields ignored, one leading
    space after the colon stripped, ``id`` values containing NUL ignored, ``retry`` only when all
    ASCII digits, and an event dispatched at a blank line when it has data.

    End of stream, the one deliberate difference from the standard (which discards an event not
    followed by a blank line): :meth:`close` means the body ended cleanly (a connection cut
    mid-body surfaces as a transport error, and then :meth:`close` is not reached), so the end
    of the body also ends the last line and the last event, which is dispatched if it has data.
    Some servers, and recorded streams, end with ``data: …`` and no blank line or line ending.
    The one case treated as incomplete is a body that ends inside a multibyte UTF-8 character:
    it was certainly cut, so its last line and event are dropped and :attr:`discarded` holds
    the dropped line.

    :param max_line: the longest line kept, in characters (None: no limit). A server that
        never ends a line would otherwise grow the buffer for ever.
    :param max_event: the most characters of data one event may gather (None: no limit).
    :raises SSELimitExceeded: from :meth:`feed` and :meth:`close`, when a limit is passed.
    """

    __slots__ = (
        "_at_start",
        "_closed",
        "_data",
        "_data_length",
        "_discarded",
        "_event_type",
        "_last_event_id",
        "_max_event",
        "_max_line",
        "_partial",
        "_partial_length",
        "_pending_retry",
        "_retry",
        "_skip_lf",
        "_undecoded",
    )

    def __init__(self, *, max_line: int | None = None, max_event: int | None = None) -> None:
        self._max_line = max_line
        self._max_event = max_event
        self._undecoded = b""  # the start of a character split across chunks
        self._partial: list[str] = []  # an unterminated line, in pieces
        self._partial_length = 0
        self._skip_lf = False  # the previous text ended with CR: a leading LF belongs to it
        self._at_start = True
        self._closed = False
        self._data: list[str] = []
        self._data_length = 0
        self._event_type = ""
        self._last_event_id = ""
        self._retry: int | None = None
        self._pending_retry: int | None = None
        self._discarded = ""

    @property
    def last_event_id(self) -> str:
        """The last event ID set by the stream so far (what a reconnect would send)."""
        return self._last_event_id

    @property
    def retry(self) -> int | None:
        """The last reconnection time in milliseconds set by the stream, if any."""
        return self._retry

    @property
    def discarded(self) -> str:
        """After :meth:`close`: the last line dropped because the body ended inside a character."""
        return self._discarded

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode the next chunk of the body.

        :param chunk: the next bytes as received, any size, possibly empty.
        :returns: the events completed by this chunk, in order.
        :raises TypeError: if ``chunk`` is not bytes-like.
        :raises RuntimeError: if called after :meth:`close`.
        """
        if isinstance(chunk, str):
            raise TypeError("SSEDecoder.feed() takes bytes, got str: pass the raw body bytes")
        if self._closed:
            raise RuntimeError("SSEDecoder.feed() called after close()")
        data = self._undecoded + chunk
        text, used = _UTF8_DECODE(data, "replace", False)
        self._undecoded = data[used:]
        return self._feed_text(text)

    def close(self) -> list[SSEEvent]:
        """Declare that the body ended cleanly.

        :returns: the last event when it lacked its blank line (see the class documentation);
            otherwise an empty list.
        """
        if self._closed:
            return []
        self._closed = True
        undecoded, self._undecoded = self._undecoded, b""
        cut_mid_character = bool(undecoded)
        events = self._feed_text(_UTF8_DECODE(undecoded, "replace", True)[0])
        if self._partial:
            line = "".join(self._partial)
            self._partial.clear()
            self._partial_length = 0
            if cut_mid_character:
                self._discarded = line
                self._reset_event()
                return events
            self._process_line(line, events)
        self._dispatch(events)
        return events

    def _feed_text(self, text: str) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        if not text:
            return events
        if self._at_start:
            self._at_start = False
            if text.startswith("\ufeff"):
                text = text[1:]
        if self._skip_lf:
            self._skip_lf = False
            if text.startswith("\n"):
                text = text[1:]
        if not text:
            return events
        if "\r" in text:
            # A CR at the end already ended its line; an LF opening the next chunk is its pair.
            self._skip_lf = text[-1] == "\r"
            # CRLF, then a lone CR, made LF: str.replace is several times quicker than a
            # regular expression's split.
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        # The whole chunk is split at once (C speed); the last piece is the unterminated rest.
        lines = text.split("\n")
        rest = lines.pop()
        limit = self._max_line
        max_event = self._max_event
        if lines and self._partial:
            self._partial.append(lines[0])
            lines[0] = "".join(self._partial)
            self._partial.clear()
            self._partial_length = 0
        for line in lines:
            if limit is not None and len(line) > limit:
                raise SSELimitExceeded("line", limit)
            if not line:
                self._dispatch(events)
            elif line.startswith("data: "):
                # Nearly every line is data: added here as _add_data adds it, without the call.
                self._data.append(line[6:])
                self._data_length += len(line) - 5
                if max_event is not None and self._data_length > max_event:
                    raise SSELimitExceeded("event", max_event)
            elif line.startswith("event: "):
                self._event_type = line[7:]
            else:
                self._process_line(line, events)
        if rest:
            self._partial.append(rest)
            self._partial_length += len(rest)
            if limit is not None and self._partial_length > limit:
                raise SSELimitExceeded("line", limit)
        return events

    def _process_line(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            self._dispatch(events)
            return
        colon = line.find(":")
        if colon == 0:
            return  # comment, often a keep-alive
        if colon < 0:
            field, value = line, ""
        else:
            field = line[:colon]
            value = line[colon + 2 :] if line.startswith(" ", colon + 1) else line[colon + 1 :]
        if field == "data":
            self._add_data(value)
        elif field == "event":
            self._event_type = value
        elif field == "id" and "\0" not in value:
            self._last_event_id = value
        elif field == "retry" and value.isascii() and value.isdigit():
            self._retry = self._pending_retry = int(value)

    def _add_data(self, value: str) -> None:
        self._data.append(value)
        self._data_length += len(value) + 1
        if self._max_event is not None and self._data_length > self._max_event:
            raise SSELimitExceeded("event", self._max_event)

    def _dispatch(self, events: list[SSEEvent]) -> None:
        data = self._data
        if data:
            events.append(
                SSEEvent(
                    data[0] if len(data) == 1 else "\n".join(data),
                    self._event_type or "message",
                    self._last_event_id,
                    self._pending_retry,
                )
            )
            self._pending_retry = None
            self._data = []
            self._data_length = 0
        self._event_type = ""

    def _reset_event(self) -> None:
        self._data = []
        self._data_length = 0
        self._event_type = ""


async def aiter_sse(
    chunks: AsyncIterable[bytes], decoder: SSEDecoder | None = None
) -> AsyncIterator[SSEEvent]:
    """Decode an asynchronous stream of body chunks into server-sent events.

    :param chunks: the body as it arrives, for example ``response.content.iter_any()``.
    :param decoder: a decoder to use, to read its :attr:`~SSEDecoder.last_event_id` or
        :attr:`~SSEDecoder.discarded` afterwards; a new one by default.
    :returns: an async iterator of the events, ending when ``chunks`` ends.
    """
    decoder = SSEDecoder() if decoder is None else decoder
    async for chunk in chunks:
        for event in decoder.feed(chunk):
            yield event
    for event in decoder.close():
        yield event
