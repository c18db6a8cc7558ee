"""``LoopThread``: the event loop, in its own thread, where a host's MCP connections live.

The SDK's connections are anyio task groups that must be entered, used and left in one event
loop. The host lists tools from synchronous code (``toolwire_tools``) and runs calls in its
own loop, so every connection of a host lives in one dedicated loop and both sides reach it
through :meth:`LoopThread.run_sync` and :meth:`LoopThread.run`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """An asyncio loop running in a daemon thread, started on first use."""

    def __init__(self, name: str = "toolwire-mcp") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop, started if it is not running yet."""
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def main() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                thread = threading.Thread(target=main, name=self._name, daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    @property
    def running(self) -> bool:
        """True while the loop thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` in the loop; cancelling the future cancels the task."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run_sync(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` in the loop and wait for it from synchronous code.

        :raises TimeoutError: after ``timeout`` seconds (the task is cancelled).
        """
        if self.running and threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("run_sync called from the MCP loop itself would deadlock")
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout:g} s") from None

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` in the loop and await it from another loop; cancelling the awaiting task
        cancels ``coro``."""
        return await asyncio.wrap_future(self.submit(coro))

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the loop and wait for its thread (what is still scheduled is dropped)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        if thread is not threading.current_thread():
            thread.join(timeout)
        if not thread.is_alive():
            loop.close()
