"""The ``otel`` plugin: its settings class, and a telemetry observer for each host."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import toolwire

from ._settings import OtelSettings, resolve_capture, resolve_exporter, resolve_protocol

if TYPE_CHECKING:
    from toolwire import Host
    from toolwire.events import Event

    from ._observer import TelemetryObserver

PLUGIN_NAME = "otel"
OBSERVER_NAME = "otel.telemetry"


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[tools.otel]`` is structured into :class:`OtelSettings`."""
    return OtelSettings if plugin_name == PLUGIN_NAME else None


@toolwire.hookimpl
def toolwire_configure(host: Host) -> None:
    """Check the settings now (a bad value fails the plugin when the host loads), and register
    this host's telemetry, built at its first run."""
    settings = host.plugin_settings(PLUGIN_NAME)
    if not isinstance(settings, OtelSettings):  # registered directly, without its settings hook
        settings = OtelSettings()
    capture = resolve_capture(settings)
    for signal in ("traces", "metrics"):
        if resolve_exporter(settings, signal) == "otlp":
            resolve_protocol(settings, signal)
    telemetry = HostTelemetry(host, settings, capture=capture)
    host.plugin_manager.register(telemetry, name=OBSERVER_NAME)
    host.on_close(telemetry.aclose)


class HostTelemetry:
    """One host's telemetry. The OpenTelemetry SDK is imported, and the providers and exporters
    built, when the host's first run starts: ``toolwire plugins``, ``tools list`` or ``doctor``
    with the plugin enabled never pay for it."""

    def __init__(self, host: Host, settings: OtelSettings, *, capture: bool) -> None:
        self._host = host
        self._settings = settings
        self._capture = capture
        self._observer: TelemetryObserver | None = None
        self._stopped = False

    @toolwire.hookimpl
    def toolwire_event(self, event: Event) -> None:
        """Hand the event to the observer, building it at the first run."""
        observer = self._observer
        if observer is None:
            if self._stopped or event.kind != "run_started":
                return
            observer = self._start()
        observer.toolwire_event(event)

    def _start(self) -> TelemetryObserver:
        self._stopped = True  # a pipeline that cannot be built is reported once, not every run
        from ._observer import TelemetryObserver
        from ._pipeline import Pipeline

        pipeline = Pipeline.from_settings(self._settings)
        self._observer = TelemetryObserver(
            self._host, pipeline, capture=self._capture, agent_name=self._settings.agent_name
        )
        self._stopped = False
        return self._observer

    async def aclose(self) -> None:
        """End what is open and flush, off the event loop (bounded by ``flush_timeout``)."""
        observer, self._observer = self._observer, None
        self._stopped = True
        if observer is not None:
            await asyncio.to_thread(observer.close)
