"""``RunStream``: a run's events as an async iterator."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import attrs

from ..events import Event
from ._run import Run
from ._state import RunState

if TYPE_CHECKING:
    from ._loop import ToolCallingLoop


class RunStream:
    """The async iterator returned by :meth:`ToolCallingLoop.stream`: events as they happen.

    :attr:`run` is the :class:`Run` once the iteration ended (also after cancellation).
    """

    def __init__(self, loop: ToolCallingLoop, state: RunState) -> None:
        self._loop = loop
        self._state = state
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        state.control = attrs.evolve(state.control, sink=self._queue.put_nowait)
        self._task: asyncio.Task[Run] | None = None
        self._finished = False
        self.run: Run | None = None

    def __aiter__(self) -> RunStream:
        return self

    async def __anext__(self) -> Event:
        if self._finished:
            raise StopAsyncIteration
        if self._task is None:
            self._task = asyncio.ensure_future(self._main())
        item = await self._queue.get()
        if item is not None:
            return item
        self._finished = True
        task = self._task
        await asyncio.gather(task, return_exceptions=True)
        if not task.cancelled():
            exc = task.exception()
            if exc is not None:
                raise exc
        raise StopAsyncIteration

    async def _main(self) -> Run:
        try:
            return await self._loop._drive(self._state)
        finally:
            self.run = self._loop.last_run
            self._queue.put_nowait(None)

    async def aclose(self) -> None:
        """Stop the run (cancelling it when it is still going) and wait for it to end."""
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def __aenter__(self) -> RunStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
