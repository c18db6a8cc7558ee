"""Plugin discovery from entry-point metadata, and loading with isolation.

Discovery reads metadata only (kept between runs by ``_entrypoints``): a plugin's module is
imported only when it is enabled.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

import attrs
import pluggy

from .._contain import describe
from .._fieldwise import record_eq, record_repr
from ._entrypoints import PluginEntryPoint, entry_points_of

ENTRY_POINT_GROUP = "toolwire.plugins"


class PluginManager(pluggy.PluginManager):
    """pluggy's plugin manager, passing over names that cannot be hooks without looking them up.

    pluggy looks up every name of a plugin with ``inspect.getattr_static``, so that no property
    runs; most names are not hooks. Passed over: names of the form ``__x__``, which Python
    reserves for its own protocols (an instance's are mostly ``object``'s), and the names of a
    module plugin (or of the hookspecs module) whose value is no routine, since a module's names
    are its ``__dict__``, whose values are what that lookup finds. The rest are asked as pluggy
    asks them.
    """

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        if _passed_over(plugin, name):
            return None
        return super().parse_hookimpl_opts(plugin, name)

    def parse_hookspec_opts(
        self, module_or_class: types.ModuleType | type, name: str
    ) -> pluggy.HookspecOpts | None:
        if _passed_over(module_or_class, name):
            return None
        return super().parse_hookspec_opts(module_or_class, name)


def _passed_over(plugin: object, name: str) -> bool:
    """True when ``name`` of ``plugin`` cannot be a hook implementation or specification."""
    if name.startswith("__") and name.endswith("__"):
        return True
    return isinstance(plugin, types.ModuleType) and not inspect.isroutine(plugin.__dict__.get(name))


@attrs.define(kw_only=True)
class PluginInfo:
    """What the host knows about one plugin: where it comes from and how loading it went."""

    __repr__ = record_repr
    __eq__ = record_eq

    name: str
    distribution: str | None = None
    version: str | None = None
    value: str | None = None
    enabled: bool = False
    loaded: bool = False
    error: str | None = None
    hooks: list[str] = attrs.field(factory=list)

    def to_json(self) -> dict[str, Any]:
        """The documented ``toolwire plugins --json`` shape."""
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "enabled": self.enabled,
            "loaded": self.loaded,
            "error": self.error,
            "hooks": sorted(self.hooks),
        }

    def describe(self) -> str:
        """``name (distribution version)`` for messages."""
        if self.distribution:
            return f"{self.name} ({self.distribution} {self.version or '?'})"
        return self.name


def discover() -> dict[str, tuple[PluginEntryPoint, PluginInfo]]:
    """Every installed plugin of the ``toolwire.plugins`` group by entry-point name (metadata only).

    When two distributions declare the same plugin name, the first one found is kept and the other
    is reported as an error on it.
    """
    found: dict[str, tuple[PluginEntryPoint, PluginInfo]] = {}
    for ep in entry_points_of(ENTRY_POINT_GROUP):
        info = PluginInfo(
            name=ep.name, distribution=ep.distribution, version=ep.version, value=ep.value
        )
        if ep.name in found:
            other = found[ep.name][1]
            if other.distribution == info.distribution:
                continue
            other.error = (
                f"the plugin name {ep.name!r} is declared by two distributions: "
                f"{other.distribution} {other.version} and {info.distribution} {info.version}; "
                f"the first is used"
            )
            continue
        found[ep.name] = (ep, info)
    return found


def load_entry_point(ep: PluginEntryPoint, info: PluginInfo) -> object | None:
    """Import an enabled plugin; on failure record the error on ``info`` and return None."""
    try:
        obj: object = ep.load()
    except BaseException as exc:  # a plugin must never take the host down, even with SystemExit
        if isinstance(exc, KeyboardInterrupt):
            raise
        info.error = f"failed to import {ep.value}: {describe_exception(exc)}"
        return None
    info.loaded = True
    return obj


def describe_exception(exc: BaseException) -> str:
    """``Type: message (at file:line)`` for plugin failure reports."""
    import traceback  # only a failure needs it (with textwrap): not every start

    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" (at {last[0].filename}:{last[0].lineno})" if last else ""
    return f"{describe(exc)}{where}"


def register_plugin(pm: pluggy.PluginManager, obj: object, info: PluginInfo) -> None:
    """Register one plugin, refusing (alone) a plugin that implements unknown or invalid hooks."""
    try:
        pm.register(obj, name=info.name)
    except Exception as exc:
        info.loaded = False
        info.error = f"cannot register: {describe_exception(exc)}"
        return
    unknown = [
        name
        for name in dir(obj)
        if name.startswith("toolwire_")
        and pm.parse_hookimpl_opts(obj, name) is not None
        and not getattr(pm.hook, name).has_spec()
    ]
    if unknown:
        pm.unregister(obj)
        from .. import hookspecs

        known = ", ".join(sorted(n for n in dir(hookspecs) if n.startswith("toolwire_")))
        info.loaded = False
        info.error = f"implements unknown hook(s) {', '.join(unknown)}; known hooks: {known}"
        return
    info.hooks = sorted(caller.name for caller in pm.get_hookcallers(obj) or ())
