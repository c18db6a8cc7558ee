"""The ``ray`` plugin: its settings, the ``ray`` batch executor, and remote tools per host."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import toolwire

from ._settings import RaySettings

if TYPE_CHECKING:
    from toolwire import Host
    from toolwire.batch import BatchExecutor

PLUGIN_NAME = "ray"
REMOTE_TOOLS_NAME = "ray.remote_tools"


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[tools.ray]`` is structured into :class:`RaySettings`."""
    return RaySettings if plugin_name == PLUGIN_NAME else None


@toolwire.hookimpl
def toolwire_batch_executors() -> Iterable[type[BatchExecutor]]:
    """The ``ray`` executor (Ray itself is imported when a batch starts on it)."""
    from ._executor import RayExecutor

    return [RayExecutor]


@toolwire.hookimpl
def toolwire_configure(host: Host) -> None:
    """Check ``[tools.ray]`` now (a bad value fails the plugin when the host loads) and, when it
    names remote tools, register this host's remote-tool middleware."""
    settings = host.plugin_settings(PLUGIN_NAME)
    if not isinstance(settings, RaySettings):
        settings = RaySettings()
    unknown = sorted(set(settings.remote) - set(host.tools))
    if unknown:
        known = ", ".join(sorted(host.tools)) or "none are registered"
        raise ValueError(
            f"[tools.ray] remote names unknown tool(s) {', '.join(map(repr, unknown))}; "
            f"registered tools: {known}"
        )
    if settings.remote:
        from ._remote import RemoteTools

        host.plugin_manager.register(RemoteTools(settings), name=REMOTE_TOOLS_NAME)
