"""Run every plugin's ``toolwire_configure`` once a host is assembled, each failure its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._host import Host


def configure_plugins(host: Host) -> None:
    """Call each ``toolwire_configure`` implementation alone with ``host``.

    One that raises is recorded as a failure of its plugin (name and error) and the rest still
    run. Observers registered here take part from the first event on.
    """
    for impl in host.hook.toolwire_configure.get_hookimpls():
        try:
            impl.function(*(host for _ in impl.argnames))
        except Exception as exc:  # one plugin's failure costs only that plugin
            host._fail(
                host.plugin_info(impl.plugin_name), impl.plugin_name, "toolwire_configure", exc
            )
    # Plugin objects registered above implement ``toolwire_event`` too: resolve observers anew.
    host._observers.refresh()
