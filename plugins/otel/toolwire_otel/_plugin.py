"""The ``otel`` plugin: its settings class, and a telemetry observer for each host."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import toolwire

from ._settings import OtelSettings, resolve_capture

if TYPE_CHECKING:
    from toolwire import Host

PLUGIN_NAME = "otel"
OBSERVER_NAME = "otel.telemetry"


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[tools.otel]`` is structured into :class:`OtelSettings`."""
    return OtelSettings if plugin_name == PLUGIN_NAME else None


@toolwire.hookimpl
def toolwire_configure(host: Host) -> None:
    """Build this host's tracer, meter and observer; flush and close them with the host."""
    settings = host.plugin_settings(PLUGIN_NAME)
    if not isinstance(settings, OtelSettings):  # registered directly, without its settings hook
        settings = OtelSettings()
    capture = resolve_capture(settings)
    # The SDK is imported here, when a host with the plugin enabled starts, never at discovery.
    from ._observer import TelemetryObserver
    from ._pipeline import Pipeline

    observer = TelemetryObserver(
        host, Pipeline.from_settings(settings), capture=capture, agent_name=settings.agent_name
    )
    host.plugin_manager.register(observer, name=OBSERVER_NAME)

    async def close() -> None:
        # Exporting may wait on the network: off the event loop, bounded by flush_timeout.
        await asyncio.to_thread(observer.close)

    host.on_close(close)
