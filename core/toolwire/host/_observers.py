"""The fan-out of events to every ``toolwire_event`` implementation, each isolated from the rest."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._discovery import PluginInfo, describe_exception

if TYPE_CHECKING:
    import queue

    import pluggy

    from ..events import Event

_BACKLOG = 10_000
"""Events a detached observer may have waiting before the next ones are dropped."""


class Observers:
    """Delivers events to the observers of one plugin manager, in pluggy's call order.

    An observer that raises is reported once (as :class:`~toolwire.events.PluginFailed`, to the
    others, and on its plugin's record) and is never allowed to stop a run. Whatever it raises
    is its own failure: a sync observer is never where the cancellation of a task arrives.

    An observer that takes longer than ``bound`` seconds over one event is reported once, and
    from then on gets its events from a thread of its own, in order, so it can no longer stall
    the loop (events pile up for it at most :data:`_BACKLOG` deep; later ones are dropped). The
    call that was slow cannot be stopped: a thread running Python code cannot be interrupted.
    """

    def __init__(
        self,
        hook: pluggy.HookRelay,
        plugin_info: Callable[[str], PluginInfo | None],
        *,
        bound: float = 1.0,
    ) -> None:
        self._hook = hook
        self._plugin_info = plugin_info
        self._bound = bound
        self._observers: list[tuple[str, Any]] | None = None
        self._failures: set[str] = set()
        self._detached: dict[str, _Detached] = {}

    def emit(self, event: Event) -> None:
        """Deliver ``event`` to every observer."""
        observers = self._observers
        if observers is None:
            # Emitting is on the loop's hot path (every stream delta): resolve the observers once.
            observers = self._observers = [
                (impl.plugin_name, self._detached.get(impl.plugin_name) or _event_function(impl))
                for impl in reversed(self._hook.toolwire_event.get_hookimpls())
                if not _idle(impl.plugin)
            ]
        if not observers:
            return
        bound = self._bound
        for index, (plugin, function) in enumerate(observers):
            started = time.perf_counter()
            try:
                function(event)
            except BaseException as exc:
                # SystemExit, KeyboardInterrupt, GeneratorExit … are the observer's own failure.
                self._report(plugin, event, exc)
            took = time.perf_counter() - started
            if took > bound and plugin not in self._detached:
                observers[index] = (plugin, self._detach(plugin, function))
                self._report_slow(plugin, event, took)

    async def aclose(self, grace: float) -> None:
        """End the threads of detached observers once they delivered the events queued so far.

        Waits at most ``grace`` seconds for all of them together. An observer still busy then is
        reported (its plugin's record, and a ``PluginFailed`` to the other observers) and left to
        its daemon thread, which delivers nothing more; events after the close are not queued.
        The others are called inline again if the host is used after all.
        """
        detached = list(self._detached.items())
        if not detached:
            return
        import asyncio  # listing commands load the host without asyncio; closing comes after runs

        for _, observer in detached:
            observer.close()
        deadline = time.monotonic() + grace
        for plugin, observer in detached:
            remaining = max(deadline - time.monotonic(), 0.0)
            if await asyncio.to_thread(observer.finished.wait, remaining):
                del self._detached[plugin]
            else:
                self._report_busy(plugin, observer.abandon(), grace)
        self._observers = None

    def refresh(self) -> None:
        """Resolve the observers again at the next event (after plugins were registered)."""
        self._observers = None

    def _detach(self, plugin: str, function: Callable[[Event], Any]) -> _Detached:
        detached = _Detached(plugin, function, self._plugin_info)
        self._detached[plugin] = detached
        return detached

    def _report_slow(self, plugin: str, event: Event, took: float) -> None:
        from ..events import PluginFailed

        self.emit(
            PluginFailed(
                run_id=event.run_id,
                round=event.round,
                plugin=plugin,
                hook="toolwire_event",
                error=f"the observer took {took:.2f} s over a {event.kind} event, longer than "
                f"{self._bound:g} s ([loop] observer_timeout); it gets its events from a thread "
                "of its own from now on",
            )
        )

    def _report_busy(self, plugin: str, undelivered: int, timeout: float) -> None:
        error = (
            f"toolwire_event: still busy {timeout:g} s after the host began to close "
            f"([loop] observer_close_timeout); {undelivered} queued events were not delivered"
        )
        info = self._plugin_info(plugin)
        if info is not None:
            info.error = error
        from ..events import PluginFailed

        self.emit(PluginFailed(run_id="", plugin=plugin, hook="toolwire_event", error=error))

    def _report(self, plugin: str, event: Event, exc: BaseException) -> None:
        if plugin in self._failures:
            return
        self._failures.add(plugin)
        info = self._plugin_info(plugin)
        if info is not None:
            info.error = f"toolwire_event: {describe_exception(exc)}"
        from ..events import PluginFailed

        self.emit(
            PluginFailed(
                run_id=event.run_id,
                round=event.round,
                plugin=plugin,
                hook="toolwire_event",
                error=describe_exception(exc),
            )
        )


class _Detached:
    """An observer fed from a queue by a daemon thread of its own (it was too slow inline)."""

    def __init__(
        self,
        plugin: str,
        function: Callable[[Event], Any],
        plugin_info: Callable[[str], PluginInfo | None],
    ) -> None:
        self._plugin = plugin
        self._function = function
        self._plugin_info = plugin_info
        import queue  # only an observer moved off the loop needs it: not every start

        # None after the events marks the end; the backlog is counted in __call__, so it fits.
        self._queue: queue.Queue[Event | None] = queue.Queue()
        self.dropped = 0
        self._failed = False
        self._closed = False
        self._abandoned = False
        self.finished = threading.Event()
        """Set when the thread has ended."""
        threading.Thread(
            target=self._deliver, name=f"toolwire-observer-{plugin}", daemon=True
        ).start()

    def __call__(self, event: Event) -> None:
        if self._closed:
            return
        if self._queue.qsize() >= _BACKLOG:  # only emit adds: the size can only fall meanwhile
            self.dropped += 1
            if self.dropped == 1:
                self._note(f"toolwire_event: events dropped, {_BACKLOG} were waiting for it")
            return
        self._queue.put_nowait(event)

    def close(self) -> None:
        """Queue nothing more; the thread ends after the events already queued."""
        if not self._closed:
            self._closed = True
            self._queue.put_nowait(None)

    def abandon(self) -> int:
        """Have the thread end after its current event; returns how many it will not deliver."""
        self._abandoned = True
        return max(self._queue.qsize() - 1, 0)  # the end marker is not an event

    def _deliver(self) -> None:
        try:
            while (event := self._queue.get()) is not None and not self._abandoned:
                try:
                    self._function(event)
                except BaseException as exc:
                    if not self._failed:
                        self._failed = True
                        self._note(f"toolwire_event: {describe_exception(exc)}")
        finally:
            self.finished.set()

    def _note(self, error: str) -> None:
        info = self._plugin_info(self._plugin)
        if info is not None:
            info.error = error


def _idle(plugin: object) -> bool:
    """Whether an observer can never act on an event: the host's trace without a path, which
    traces nothing (calling it for every event would cost every run and round)."""
    from .._defaults.trace import Trace

    return isinstance(plugin, Trace) and plugin.path is None


def _event_function(impl: pluggy.HookImpl) -> Any:
    """The observer as a one-argument function (an implementation may declare no argument)."""
    function = impl.function
    if impl.argnames:
        return function
    return lambda event: function()
