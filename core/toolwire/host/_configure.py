"""Check every enabled plugin's settings, then run each ``toolwire_configure``, once a host is
assembled."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..config import ConfigError

if TYPE_CHECKING:
    from ._host import Host


def check_plugin_settings(host: Host) -> None:
    """Structure the settings section of every enabled, loaded plugin now.

    A section that does not fit its plugin's settings class (a typo, a wrong type, a value the
    plugin refuses) is a mistake in the config, not a failure of the plugin: it is raised as one
    :class:`ConfigError` naming every such key, its value and what would be valid, instead of
    surfacing later as a plugin whose tools or adapters are missing.

    :raises ConfigError: when any enabled plugin's section does not fit.
    """
    problems: list[ConfigError] = []
    for info in host.plugins:
        if not (info.enabled and info.loaded):
            continue
        try:
            host.plugin_settings(info.name)
        except ConfigError as exc:
            problems.append(exc)
        except Exception as exc:  # the plugin's own settings hook raised: that is the plugin's
            host._fail(info, info.name, "toolwire_settings_class", exc)
    if problems:
        raise ConfigError(
            "\n".join(str(problem) for problem in problems),
            file=problems[0].file,
            path=problems[0].path,
        )


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
