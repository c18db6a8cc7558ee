"""The registry of one host: the tools and the adapter classes its plugins provide.

Each plugin's hook is called alone, so a plugin that raises or returns something wrong costs only
itself; a name two plugins claim stays with the first, and the clash is reported naming both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .._trust import DEFAULT_LEVELS, levels_in_use
from ._discovery import PluginInfo

if TYPE_CHECKING:
    import pluggy

    from .._trust import TrustLevel
    from ..adapters import ProviderAdapter
    from ..tools import Tool

ReportFailure = Callable[[PluginInfo | None, str, str, BaseException], None]
"""``(info, plugin, hook, exception)``: record and announce one plugin's failure."""


class Registry:
    """Tools by name and adapter classes by API name, collected from the hooks on first use."""

    def __init__(
        self,
        hook: pluggy.HookRelay,
        *,
        plugin_info: Callable[[str], PluginInfo | None],
        plugin_settings: Callable[[str | None], Any],
        report_failure: ReportFailure,
        min_trust: Mapping[str, TrustLevel] | None = None,
        services: Callable[[], Mapping[str, Any]] | None = None,
        levels: Sequence[str] = DEFAULT_LEVELS,
    ) -> None:
        self._hook = hook
        self._levels = levels  # the host's [trust] levels, which its tools' levels are read in
        self._services = services
        self._min_trust = dict(min_trust or {})
        self._plugin_info = plugin_info
        self._plugin_settings = plugin_settings
        self._fail = report_failure
        self._tools: dict[str, Tool] | None = None
        self._adapter_classes: dict[str, type[ProviderAdapter]] | None = None

    # -- tools -----------------------------------------------------------------------------

    @property
    def tools(self) -> Mapping[str, Tool]:
        """Every registered tool by name, sorted (each with ``plugin`` set)."""
        if self._tools is None:
            with levels_in_use(self._levels):
                self._tools = self._collect_tools()
        return self._tools

    def add_tool(self, tool: Tool, *, plugin: str | None = None) -> None:
        """Register ``tool`` directly; a name already taken is a :class:`ToolDefinitionError`."""
        from ..tools import ToolDefinitionError
        from ..tools._names import reserved_name_problem, validate_tool_name

        validate_tool_name(tool.name)
        reserved = reserved_name_problem(tool.name)
        if reserved is not None:
            raise ToolDefinitionError(reserved)
        problem = self._service_problem(tool) or self._trust_problem(tool)
        if problem is not None:
            raise problem
        tools = dict(self.tools)
        if tool.name in tools:
            other = tools[tool.name].plugin or "the host"
            raise ToolDefinitionError(
                f"tool name {tool.name!r} is already registered by plugin {other!r}"
            )
        with levels_in_use(self._levels):
            tools[tool.name] = self._admitted(tool, plugin or tool.plugin)
        self._tools = tools

    def remove_tool(self, name: str) -> None:
        """Unregister the tool ``name`` (nothing happens when there is none)."""
        tools = dict(self.tools)
        tools.pop(name, None)
        self._tools = tools

    def _collect_tools(self) -> dict[str, Tool]:
        tools: dict[str, Tool] = {}
        for impl in self._hook.toolwire_tools.get_hookimpls():
            plugin = impl.plugin_name
            info = self._plugin_info(plugin)
            try:
                settings = self._plugin_settings(plugin)
                produced = call_impl(impl, settings=settings)
                produced_list = list(produced or ())
            except Exception as exc:  # one plugin's failure costs only that plugin
                self._fail(info, plugin, "toolwire_tools", exc)
                continue
            for tool in produced_list:
                problem = self._tool_problem(tool, tools, info, plugin)
                if problem is not None:
                    self._fail(info, plugin, "toolwire_tools", problem)
                    continue
                tools[tool.name] = self._admitted(tool, plugin)
        return dict(sorted(tools.items()))

    def _admitted(self, tool: Tool, plugin: str | None) -> Tool:
        """``tool`` as the host keeps it: with its plugin, and its minimum provider trust raised
        to what ``[tools.trust]`` asks (never lowered)."""
        floor = self._min_trust.get(tool.name)
        own = tool.min_provider_trust
        if floor is None or floor.strictest(own) == own:
            return attrs.evolve(tool, plugin=plugin)
        return attrs.evolve(tool, plugin=plugin, min_provider_trust=floor.strictest(own))

    def _tool_problem(
        self, tool: object, tools: Mapping[str, Tool], info: PluginInfo | None, plugin: str
    ) -> Exception | None:
        """Why ``tool`` cannot be registered by ``plugin``, or None when it can."""
        # The tool model is imported once tools are collected, not for commands that list none.
        from ..tools import Tool, ToolDefinitionError
        from ..tools._names import reserved_name_problem, validate_tool_name

        if not isinstance(tool, Tool):
            return TypeError(f"returned {tool!r}, which is not a toolwire.Tool")
        try:
            validate_tool_name(tool.name)
        except ToolDefinitionError as exc:
            return exc
        reserved = reserved_name_problem(tool.name)
        if reserved is not None:
            return ToolDefinitionError(reserved)
        if tool.name in tools:
            first = tools[tool.name].plugin
            first_info = self._plugin_info(first) if first else None
            first_desc = first_info.describe() if first_info else repr(first)
            this_desc = info.describe() if info else repr(plugin)
            return ToolDefinitionError(
                f"tool name {tool.name!r} is registered by two plugins: "
                f"{first_desc} and {this_desc}; the one from {first!r} is kept"
            )
        return self._service_problem(tool) or self._trust_problem(tool)

    def _trust_problem(self, tool: Tool) -> Exception | None:
        """A :class:`ToolDefinitionError` when ``tool`` asks for a confidence level the host's
        ``[trust] levels`` do not have (a level declared before any host knew the scheme)."""
        from ..tools import ToolDefinitionError

        needed = tool.min_provider_trust
        if needed is None or needed.confidence in (None, *self._levels):
            return None
        return ToolDefinitionError(
            f"tool {tool.name!r}: min_provider_trust {needed.label!r} is not a level of this "
            f"host's [trust] levels ({', '.join(self._levels)})"
        )

    def _service_problem(self, tool: Tool) -> Exception | None:
        """A :class:`ToolDefinitionError` when ``tool`` asks for a service the host lacks."""
        from ..tools import ToolDefinitionError
        from ..tools._context import RUN_SERVICES
        from ..tools._model import missing_service

        if self._services is None:
            return None
        missing = missing_service(tool, self._services, RUN_SERVICES)
        return ToolDefinitionError(missing) if missing is not None else None

    # -- adapters --------------------------------------------------------------------------

    def adapter_classes(self) -> Mapping[str, type[ProviderAdapter]]:
        """Every registered adapter class by API name, sorted."""
        if self._adapter_classes is None:
            self._adapter_classes = self._collect_adapter_classes()
        return self._adapter_classes

    def _collect_adapter_classes(self) -> dict[str, type[ProviderAdapter]]:
        classes: dict[str, type[ProviderAdapter]] = {}
        owners: dict[str, str] = {}
        hook_name = "toolwire_provider_adapters"
        for impl in self._hook.toolwire_provider_adapters.get_hookimpls():
            plugin = impl.plugin_name
            info = self._plugin_info(plugin)
            try:
                produced = list(call_impl(impl, settings=self._plugin_settings(plugin)) or ())
            except Exception as exc:
                self._fail(info, plugin, hook_name, exc)
                continue
            for adapter_cls in produced:
                api = getattr(adapter_cls, "api", None)
                if not isinstance(api, str) or not api:
                    self._fail(
                        info, plugin, hook_name, TypeError(f"{adapter_cls!r} has no 'api' name")
                    )
                    continue
                if api in classes:
                    self._fail(
                        info,
                        plugin,
                        hook_name,
                        ValueError(
                            f"adapter {api!r} is registered by two plugins: "
                            f"{owners[api]!r} and {plugin!r}; the first is kept"
                        ),
                    )
                    continue
                classes[api] = adapter_cls
                owners[api] = plugin
        return dict(sorted(classes.items()))


def call_impl(impl: pluggy.HookImpl, **kwargs: Any) -> Any:
    """Call one hook implementation alone, with only the arguments it declares (as pluggy does)."""
    return impl.function(*(kwargs[name] for name in impl.argnames))
