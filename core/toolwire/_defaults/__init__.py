"""Built-in hook implementations; every host registers them ``trylast`` so plugins override them."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Config

LOOP = "toolwire._defaults.loop"
"""The registration name of the built-in loop's ``toolwire_loop``."""

DEFAULT_PLUGINS: tuple[str, ...] = (
    LOOP,
    "toolwire._defaults.offer",
    "toolwire._defaults.execute",
    "toolwire._defaults.policy",
    "toolwire._defaults.trace",
    "toolwire._defaults.scripted",
    "toolwire._defaults.untrusted",
    "toolwire._defaults.summary",
)


def default_plugins(config: Config) -> list[tuple[str, object]]:
    """The built-in plugins of a host with ``config``, each with its registration name (one of
    :data:`DEFAULT_PLUGINS`): the modules, and the host's own ``Trace``."""
    from .trace import NAME as TRACE
    from .trace import Trace

    plugins: list[tuple[str, object]] = []
    for name in DEFAULT_PLUGINS:
        plugin = Trace(config.trace) if name == TRACE else importlib.import_module(name)
        plugins.append((name, plugin))
    if config.artifacts.dir is not None:
        from .artifacts import NAME as ARTIFACTS
        from .artifacts import ArtifactStore

        plugins.append((ARTIFACTS, ArtifactStore(config.artifacts)))
    return plugins
