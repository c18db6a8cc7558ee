"""The services of one host: named objects its tools receive through ``Injected`` parameters.

They come from ``Host.load(services=...)`` and from each plugin's ``toolwire_services`` hook,
are created once per host (on first use) and closed with it, latest first.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ._discovery import PluginInfo
from ._registry import ReportFailure, call_impl

if TYPE_CHECKING:
    import pluggy

_HOOK = "toolwire_services"


class Services:
    """The host's services by name, collected from the hooks on first use and closed once."""

    def __init__(
        self,
        hook: pluggy.HookRelay,
        given: Mapping[str, Any],
        *,
        plugin_info: Callable[[str], PluginInfo | None],
        plugin_settings: Callable[[str | None], Any],
        report_failure: ReportFailure,
    ) -> None:
        for name in given:
            if not isinstance(name, str) or not name:
                raise TypeError(
                    f"Host.load(services=...): service name {name!r} is not a non-empty string"
                )
        self._hook = hook
        self._given = dict(given)
        self._plugin_info = plugin_info
        self._plugin_settings = plugin_settings
        self._fail = report_failure
        self._services: Mapping[str, Any] | None = None
        self._created: list[tuple[str, Any]] = []  # also a plugin's that a given one overrode

    @property
    def services(self) -> Mapping[str, Any]:
        """Every service by name (read-only): the given ones, then each plugin's."""
        if self._services is None:
            self._services = types.MappingProxyType(self._collect())
        return self._services

    def _collect(self) -> dict[str, Any]:
        services: dict[str, Any] = {}
        owners: dict[str, str] = {}
        for impl in self._hook.toolwire_services.get_hookimpls():
            plugin = impl.plugin_name
            info = self._plugin_info(plugin)
            try:
                produced = call_impl(impl, settings=self._plugin_settings(plugin))
                if produced is None:
                    continue
                if not isinstance(produced, Mapping):
                    raise TypeError(
                        f"returned {type(produced).__name__}, not a mapping of service names "
                        "to services"
                    )
                items = list(produced.items())
            except Exception as exc:  # one plugin's failure costs only that plugin
                self._fail(info, plugin, _HOOK, exc)
                continue
            for name, service in items:
                problem = self._problem(name, owners, plugin)
                if problem is not None:
                    self._fail(info, plugin, _HOOK, problem)
                    continue
                services[name] = service
                owners[name] = plugin
        self._created = [*services.items(), *self._given.items()]
        # What the caller gave wins: it is the explicit choice for this host.
        return {**services, **self._given}

    def _problem(self, name: object, owners: Mapping[str, str], plugin: str) -> Exception | None:
        if not isinstance(name, str) or not name:
            return TypeError(f"service name {name!r} is not a non-empty string")
        if name in self._given:
            return None
        if name in owners:
            return ValueError(
                f"service {name!r} is provided by two plugins: {owners[name]!r} and "
                f"{plugin!r}; the one from {owners[name]!r} is kept"
            )
        return None

    async def aclose(self, report: Callable[[str, BaseException], None]) -> None:
        """Close every service that was created, latest first: ``aclose()`` awaited, else
        ``close()`` called (and awaited when it returns an awaitable). One that raises is
        reported through ``report(name, exception)`` and does not keep the others open."""
        created, self._created = self._created, []
        self._services = None
        for name, service in reversed(created):
            try:
                closer = getattr(service, "aclose", None)
                if not callable(closer):
                    closer = getattr(service, "close", None)
                if not callable(closer):
                    continue
                outcome = closer()
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as exc:
                report(name, exc)
