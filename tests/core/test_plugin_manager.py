"""The host's plugin manager finds exactly the hooks pluggy's own finds."""

from __future__ import annotations

import importlib
import types

import pluggy
import pytest

from toolwire import hookspecs
from toolwire._defaults import DEFAULT_PLUGINS
from toolwire._markers import PROJECT_NAME
from toolwire.host._discovery import PluginManager

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


def _odd_module() -> types.ModuleType:
    """A plugin module with a hook, a static and a class method, a bound method, a lazy
    ``__getattr__`` and values that only look like hooks."""
    module = types.ModuleType("odd_plugin")

    class Holder:
        @hookimpl
        def toolwire_tools(self, settings: object) -> list[object]:
            return []

    @hookimpl
    def toolwire_event(event: object) -> None:
        return None

    def toolwire_not_marked() -> None:
        return None

    def lazy(name: str) -> object:
        raise AssertionError(f"the lookup ran the module's __getattr__ for {name}")

    module.toolwire_event = toolwire_event  # type: ignore[attr-defined]
    module.toolwire_tools = Holder().toolwire_tools  # type: ignore[attr-defined]
    module.toolwire_not_marked = toolwire_not_marked  # type: ignore[attr-defined]
    module.toolwire_static = staticmethod(toolwire_event)  # type: ignore[attr-defined]
    module.toolwire_class = classmethod(toolwire_not_marked)  # type: ignore[attr-defined]
    module.toolwire_number = 3  # type: ignore[attr-defined]
    module.__getattr__ = lazy  # type: ignore[method-assign]
    return module


def _modules() -> list[types.ModuleType]:
    return [importlib.import_module(name) for name in DEFAULT_PLUGINS if "trace" not in name] + [
        _odd_module()
    ]


@pytest.mark.parametrize("module", _modules(), ids=lambda m: m.__name__)
def test_hookimpls_are_the_ones_pluggy_finds(module: types.ModuleType) -> None:
    ours, theirs = PluginManager(PROJECT_NAME), pluggy.PluginManager(PROJECT_NAME)
    names = [*dir(module), "toolwire_absent"]
    found = {name: ours.parse_hookimpl_opts(module, name) for name in names}
    assert found == {name: theirs.parse_hookimpl_opts(module, name) for name in names}
    assert any(opts is not None for opts in found.values())


def test_hookspecs_are_the_ones_pluggy_finds() -> None:
    ours, theirs = PluginManager(PROJECT_NAME), pluggy.PluginManager(PROJECT_NAME)
    names = dir(hookspecs)
    found = {name: ours.parse_hookspec_opts(hookspecs, name) for name in names}
    assert found == {name: theirs.parse_hookspec_opts(hookspecs, name) for name in names}
    ours.add_hookspecs(hookspecs)
    theirs.add_hookspecs(hookspecs)
    assert sorted(vars(ours.hook)) == sorted(vars(theirs.hook))
    assert any(name.startswith("toolwire_") for name in vars(ours.hook))


class _InstancePlugin:
    """A plugin object: a hook method, a property that must not run, a plain attribute."""

    label = "instance"

    @hookimpl
    def toolwire_event(self, event: object) -> None:
        return None

    @property
    def toolwire_tools(self) -> object:
        raise AssertionError("the lookup ran a property")


def test_an_instance_plugin_gets_the_hooks_pluggy_finds() -> None:
    plugin = _InstancePlugin()
    ours, theirs = PluginManager(PROJECT_NAME), pluggy.PluginManager(PROJECT_NAME)
    names = [*dir(plugin), "toolwire_absent"]
    found = {name: ours.parse_hookimpl_opts(plugin, name) for name in names}
    assert found == {name: theirs.parse_hookimpl_opts(plugin, name) for name in names}
    assert [name for name, opts in found.items() if opts is not None] == ["toolwire_event"]


def test_a_name_python_reserves_is_never_a_hook() -> None:
    # ``__x__`` names belong to Python's own protocols: pluggy would take this one (it names its
    # hook with ``specname``), the host passes every such name over without looking it up.
    class Reserved:
        @hookimpl(specname="toolwire_event")
        def __call__(self, event: object) -> None:
            return None

    plugin = Reserved()
    assert pluggy.PluginManager(PROJECT_NAME).parse_hookimpl_opts(plugin, "__call__") is not None
    ours = PluginManager(PROJECT_NAME)
    assert ours.parse_hookimpl_opts(plugin, "__call__") is None
    ours.add_hookspecs(hookspecs)
    ours.register(plugin, name="reserved")
    assert ours.hook.toolwire_event.get_hookimpls() == []
