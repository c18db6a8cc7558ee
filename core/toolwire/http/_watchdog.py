"""The clock of a provider request: its total and read timeouts on one timer."""

from __future__ import annotations

import asyncio
from typing import Any, Final

import aiohttp

from ..config import ProviderConfig

__all__ = ["SILENCE", "TOTAL", "Watchdog"]

SILENCE: Final = "read_timeout"
TOTAL: Final = "total_timeout"


class Watchdog:
    """The clock of one request: ``total_timeout`` over all its attempts and ``read_timeout``
    for a silence of the server within one, on one timer.

    aiohttp's ``sock_read`` timer is made again at every chunk received (a new timer and a
    cancelled one per chunk), and ``asyncio.timeout_at`` is another timer, and an object with its
    own states, per attempt. The watchdog arms one timer per attempt, which wakes every half
    ``read_timeout`` (at the deadline when that comes first) and only then looks at what the
    answer received (``StreamReader.total_bytes``): two wakes in a row with nothing new end the
    attempt, after a silence of between ``read_timeout`` and 1.5 times it. Before the answer's
    headers, three wakes (1.5 ``read_timeout`` from the attempt's start): that leaves the server
    at least ``read_timeout`` after the request was sent whenever connecting and sending took
    at most half of it. An answer that has ended, or whose reading aiohttp holds back because
    the reader is behind, is not silent.

    A silence once the answer has begun is set on its body, as aiohttp's own timeout did: the
    next read raises ``aiohttp.SocketTimeoutError`` (a ``ClientError`` and a ``TimeoutError``),
    so every reader handles it as before. The total timeout, and a silence before the answer,
    cancel the request's task, as ``asyncio.timeout`` does; whoever catches the
    :class:`asyncio.CancelledError` asks :meth:`caused` whether it is the watchdog's and which
    limit it is, and raises that limit's error instead.
    """

    __slots__ = (
        "_cancelling",
        "_expired",
        "_handle",
        "_loop",
        "_quiet",
        "_received",
        "_step",
        "_task",
        "deadline",
        "response",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop, cfg: ProviderConfig) -> None:
        self._loop = loop
        self.deadline = loop.time() + cfg.total_timeout
        self._step = cfg.read_timeout / 2
        self.response: aiohttp.ClientResponse | None = None
        """The attempt's answer once its headers arrived (set by the attempt)."""
        self._task: asyncio.Task[Any] | None = None
        self._cancelling = 0
        self._handle: asyncio.TimerHandle | None = None
        self._expired: str | None = None
        self._received = -1
        self._quiet = 0

    def start(self) -> None:
        """Arm the watchdog for an attempt starting now."""
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a provider request must run inside an asyncio task")
        self._task = task
        self._cancelling = task.cancelling()
        self.response = None
        self._received = -1
        self._quiet = 0
        self._arm(self._loop.time())

    def stop(self) -> None:
        """Disarm it at the attempt's end; an expiry the attempt ended without hearing of is
        withdrawn."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._expired is not None and self._task is not None:
            self._expired = None
            self._task.uncancel()

    def caused(self, limit: str) -> bool:
        """Whether the cancellation being handled is this watchdog's, for ``limit``
        (``SILENCE`` before the answer's headers, ``TOTAL``), and no one else's; the
        watchdog's is withdrawn."""
        if self._expired != limit or self._task is None:
            return False
        self._expired = None
        return self._task.uncancel() <= self._cancelling

    def _arm(self, now: float) -> None:
        when = now + self._step
        if when < self.deadline:
            self._handle = self._loop.call_at(when, self._wake)
        else:
            self._handle = self._loop.call_at(self.deadline, self._expire, TOTAL)

    def _wake(self) -> None:
        response = self.response
        if response is None:
            self._quiet += 1
            if self._quiet >= 3:
                self._expire(SILENCE)
                return
        elif self._heard_from(response):
            self._quiet = 0
        else:
            self._quiet += 1
            if self._quiet >= 2:
                # As aiohttp's own read timeout does: whoever reads the answer next gets the
                # error, a ClientError and a TimeoutError, however far the attempt has got.
                response.content.set_exception(
                    aiohttp.SocketTimeoutError("Timeout on reading data from socket")
                )
                self._handle = self._loop.call_at(self.deadline, self._expire, TOTAL)
                return
        self._arm(self._loop.time())

    def _heard_from(self, response: aiohttp.ClientResponse) -> bool:
        """Whether the server is not to blame for a silence since the last wake."""
        content = response.content
        received = content.total_bytes
        if received != self._received:
            self._received = received
            return True
        if content.is_eof():
            return True
        connection = response.connection
        transport = connection.transport if connection is not None else None
        return transport is not None and not transport.is_reading()

    def _expire(self, limit: str) -> None:
        self._handle = None
        self._expired = limit
        if self._task is not None:
            self._task.cancel()
