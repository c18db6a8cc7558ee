"""The fan-out of events to every ``toolwire_event`` implementation, each isolated from the rest."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._discovery import PluginInfo, describe_exception

if TYPE_CHECKING:
    import pluggy

    from ..events import Event


class Observers:
    """Delivers events to the observers of one plugin manager, in pluggy's call order.

    An observer that raises is reported once (as :class:`~toolwire.events.PluginFailed`, to the
    others, and on its plugin's record) and is never allowed to stop a run.
    """

    def __init__(
        self,
        hook: pluggy.HookRelay,
        plugin_info: Callable[[str], PluginInfo | None],
    ) -> None:
        self._hook = hook
        self._plugin_info = plugin_info
        self._observers: list[tuple[str, Any]] | None = None
        self._failures: set[str] = set()

    def emit(self, event: Event) -> None:
        """Deliver ``event`` to every observer."""
        observers = self._observers
        if observers is None:
            # Emitting is on the loop's hot path (every stream delta): resolve the observers once.
            observers = self._observers = [
                (impl.plugin_name, _event_function(impl))
                for impl in reversed(self._hook.toolwire_event.get_hookimpls())
            ]
        for plugin, function in observers:
            try:
                function(event)
            except BaseException as exc:
                # A sync observer is never where the task's cancellation arrives, so whatever it
                # raises (SystemExit, KeyboardInterrupt, GeneratorExit …) is its own failure.
                self._report(plugin, event, exc)

    def refresh(self) -> None:
        """Resolve the observers again at the next event (after plugins were registered)."""
        self._observers = None

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


def _event_function(impl: pluggy.HookImpl) -> Any:
    """The observer as a one-argument function (an implementation may declare no argument)."""
    function = impl.function
    if impl.argnames:
        return function
    return lambda event: function()
