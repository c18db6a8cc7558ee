"""``Host``: one plugin manager, the enabled plugins, the tool registry and the provider adapter."""

from __future__ import annotations

import importlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from . import hookspecs
from ._config import Config, ConfigError, ProviderConfig, load_config, structure_section
from ._configure import configure_plugins
from ._defaults import DEFAULT_PLUGINS
from ._markers import PROJECT_NAME
from ._plugins import PluginInfo, describe_exception, discover, load_entry_point
from .tools import Tool, ToolDefinitionError, validate_tool_name

if TYPE_CHECKING:
    from ._events import Event
    from ._messages import Message
    from ._transport import Transport
    from .adapters import ProviderAdapter
    from .loop import Decision, Run


DEFAULT_LOCAL_PLUGIN = "llamacpp"


class HostError(Exception):
    """The host cannot do what was asked (no such adapter, no such tool …); the message says why."""


class Host:
    """The toolwire host: plugins, tools, provider adapter and the tool-calling loop.

    Create one with :meth:`Host.load`. Every host has its own plugin manager, so several hosts can
    live in one process. Close it with :meth:`aclose` (or ``async with``). Plugins keep per-host
    state in :attr:`stash` (never in module globals) and close it through :meth:`on_close`.
    """

    def __init__(
        self,
        config: Config,
        plugin_manager: pluggy.PluginManager,
        plugins: Sequence[PluginInfo],
    ) -> None:
        self.config = config
        self.plugin_manager = plugin_manager
        self.hook = plugin_manager.hook
        self.plugins: list[PluginInfo] = list(plugins)
        self._tools: dict[str, Tool] | None = None
        self._settings: dict[str, Any] = {}
        self._adapter: ProviderAdapter | None = None
        self._adapter_classes: dict[str, type[ProviderAdapter]] | None = None
        self._transport: Transport | None = None
        self._observer_failures: set[str] = set()
        self._observers: list[tuple[str, Any]] | None = None
        self.stash: dict[Any, Any] = {}
        self._closers: list[Callable[[], Awaitable[None]]] = []

    # -- construction ----------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        config: Config | str | os.PathLike[str] | None = None,
        *,
        plugins: Iterable[object] = (),
    ) -> Host:
        """Discover installed plugins, enable those the config names, and register them.

        :param config: a :class:`Config`, a path to a config file, or None to find one
            (``--config``, ``$TOOLWIRE_CONFIG``, ``./toolwire.toml``) or use defaults.
        :param plugins: plugin objects (modules or instances with hookimpls) registered directly,
            in addition to the enabled entry-point plugins.
        :raises ConfigError: when the config is invalid or enables a plugin that is not installed.
        """
        if not isinstance(config, Config):
            config = load_config(config)
        pm = pluggy.PluginManager(PROJECT_NAME)
        pm.add_hookspecs(hookspecs)
        infos: list[PluginInfo] = []
        for module_name in DEFAULT_PLUGINS:
            module = importlib.import_module(module_name)
            pm.register(module, name=module_name)
        installed = discover()
        enabled = config.plugins.enable
        for index, name in enumerate(enabled):
            if name not in installed:
                known = ", ".join(sorted(installed)) or "none are installed"
                raise ConfigError(
                    f"{config.source or '<config>'}: $.plugins.enable[{index}] = {name!r}: no "
                    f"installed plugin has this name; installed plugins: {known}",
                    file=config.source,
                    path=f"$.plugins.enable[{index}]",
                )
        for name, (_ep, info) in sorted(installed.items()):
            info.enabled = name in enabled
            infos.append(info)
        for name in enabled:
            ep, info = installed[name]
            obj = load_entry_point(ep, info)
            if obj is not None:
                _register(pm, obj, info)
        for obj in plugins:
            name = getattr(obj, "__name__", None) or f"{type(obj).__name__}-{id(obj):x}"
            info = PluginInfo(name=str(name), enabled=True, loaded=True)
            _register(pm, obj, info)
            infos.append(info)
        host = cls(config, pm, infos)
        configure_plugins(host)
        return host

    # -- plugins and settings --------------------------------------------------------------

    def plugin_info(self, name: str) -> PluginInfo | None:
        """The record of the plugin named ``name``."""
        return next((p for p in self.plugins if p.name == name), None)

    def plugin_settings(self, plugin: str | None) -> Any:
        """A plugin's settings from ``[tools.<plugin>]`` (or ``[providers.<plugin>]``), structured
        into its settings class when it declares one.

        :raises ConfigError: when the section does not fit the plugin's settings class.
        """
        if plugin is None:
            return None
        if plugin in self._settings:
            return self._settings[plugin]
        raw: Mapping[str, Any] = self.config.tools.plugin_settings.get(plugin) or {}
        section = f"$.tools.{plugin}"
        if not raw and plugin in self.config.providers:
            raw = self.config.providers[plugin]
            section = f"$.providers.{plugin}"
        settings_cls = self.hook.toolwire_settings_class(plugin_name=plugin)
        settings: Any = dict(raw)
        if settings_cls is not None:
            settings = structure_section(
                dict(raw), settings_cls, file=self.config.source, path=section
            )
        self._settings[plugin] = settings
        return settings

    # -- tools -----------------------------------------------------------------------------

    @property
    def tools(self) -> Mapping[str, Tool]:
        """Every registered tool by name (each with ``plugin`` set), collected on first use."""
        if self._tools is None:
            self._tools = self._collect_tools()
        return self._tools

    def add_tool(self, tool: Tool, *, plugin: str | None = None) -> None:
        """Register a tool directly (for embedding and tests); a taken name is an error."""
        validate_tool_name(tool.name)
        tools = dict(self.tools)
        if tool.name in tools:
            other = tools[tool.name].plugin or "the host"
            raise ToolDefinitionError(
                f"tool name {tool.name!r} is already registered by plugin {other!r}"
            )
        tools[tool.name] = attrs.evolve(tool, plugin=plugin or tool.plugin)
        self._tools = tools

    def remove_tool(self, name: str) -> None:
        """Unregister a tool; later rounds of running loops no longer offer it."""
        tools = dict(self.tools)
        tools.pop(name, None)
        self._tools = tools

    def _collect_tools(self) -> dict[str, Tool]:
        tools: dict[str, Tool] = {}
        for impl in self.hook.toolwire_tools.get_hookimpls():
            plugin = impl.plugin_name
            info = self.plugin_info(plugin)
            try:
                settings = self.plugin_settings(plugin)
                produced = _call_impl(impl, settings=settings)
                produced_list = list(produced or ())
            except Exception as exc:  # one plugin's failure costs only that plugin
                self._fail(info, plugin, "toolwire_tools", exc)
                continue
            for tool in produced_list:
                if not isinstance(tool, Tool):
                    self._fail(
                        info,
                        plugin,
                        "toolwire_tools",
                        TypeError(f"returned {tool!r}, which is not a toolwire.Tool"),
                    )
                    continue
                try:
                    validate_tool_name(tool.name)
                except ToolDefinitionError as exc:
                    self._fail(info, plugin, "toolwire_tools", exc)
                    continue
                if tool.name in tools:
                    first = tools[tool.name].plugin
                    first_info = self.plugin_info(first) if first else None
                    first_desc = first_info.describe() if first_info else repr(first)
                    this_desc = info.describe() if info else repr(plugin)
                    self._fail(
                        info,
                        plugin,
                        "toolwire_tools",
                        ToolDefinitionError(
                            f"tool name {tool.name!r} is registered by two plugins: "
                            f"{first_desc} and {this_desc}; the one from {first!r} is kept"
                        ),
                    )
                    continue
                tools[tool.name] = attrs.evolve(tool, plugin=plugin)
        return dict(sorted(tools.items()))

    def _fail(self, info: PluginInfo | None, plugin: str, hook: str, exc: BaseException) -> None:
        message = (
            f"{hook}: {describe_exception(exc)}"
            if not isinstance(exc, ToolDefinitionError | ConfigError)
            else f"{hook}: {exc}"
        )
        if info is not None:
            info.error = f"{info.error}; {message}" if info.error else message
        from ._events import PluginFailed

        self.emit(PluginFailed(run_id="", plugin=plugin, hook=hook, error=message))

    # -- events ----------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        """Deliver an event to every ``toolwire_event`` implementation.

        An observer that raises is reported once (to the others) and never stops a run.
        """
        observers = self._observers
        if observers is None:
            # Emitting is on the loop's hot path (every stream delta): resolve the observers once.
            observers = self._observers = [
                (impl.plugin_name, _event_function(impl))
                for impl in reversed(self.hook.toolwire_event.get_hookimpls())
            ]
        for plugin, function in observers:
            try:
                function(event)
            except Exception as exc:
                if plugin in self._observer_failures:
                    continue
                self._observer_failures.add(plugin)
                info = self.plugin_info(plugin)
                if info is not None:
                    info.error = f"toolwire_event: {describe_exception(exc)}"
                from ._events import PluginFailed

                self.emit(
                    PluginFailed(
                        run_id=event.run_id,
                        round=event.round,
                        plugin=plugin,
                        hook="toolwire_event",
                        error=describe_exception(exc),
                    )
                )

    # -- providers -------------------------------------------------------------------------

    def adapter_classes(self) -> Mapping[str, type[ProviderAdapter]]:
        """Every registered adapter class by API name."""
        if self._adapter_classes is None:
            classes: dict[str, type[ProviderAdapter]] = {}
            owners: dict[str, str] = {}
            for impl in self.hook.toolwire_provider_adapters.get_hookimpls():
                plugin = impl.plugin_name
                info = self.plugin_info(plugin)
                try:
                    produced = list(_call_impl(impl, settings=self.plugin_settings(plugin)) or ())
                except Exception as exc:
                    self._fail(info, plugin, "toolwire_provider_adapters", exc)
                    continue
                for adapter_cls in produced:
                    api = getattr(adapter_cls, "api", None)
                    if not isinstance(api, str) or not api:
                        self._fail(
                            info,
                            plugin,
                            "toolwire_provider_adapters",
                            TypeError(f"{adapter_cls!r} has no 'api' name"),
                        )
                        continue
                    if api in classes:
                        self._fail(
                            info,
                            plugin,
                            "toolwire_provider_adapters",
                            ValueError(
                                f"adapter {api!r} is registered by two plugins: "
                                f"{owners[api]!r} and {plugin!r}; the first is kept"
                            ),
                        )
                        continue
                    classes[api] = adapter_cls
                    owners[api] = plugin
            self._adapter_classes = dict(sorted(classes.items()))
        return self._adapter_classes

    @property
    def provider_config(self) -> ProviderConfig:
        """``[provider]`` with the adapter resolved: when none is configured, the embedded model
        if the ``llamacpp`` plugin is enabled and loaded, else the in-box scripted test model."""
        provider = self.config.provider
        if provider.adapter is None:
            info = self.plugin_info(DEFAULT_LOCAL_PLUGIN)
            local = info is not None and info.enabled and info.loaded
            provider = attrs.evolve(provider, adapter="llamacpp" if local else "scripted")
        return provider

    def create_adapter(self, api: str | None = None) -> ProviderAdapter:
        """A new adapter for ``api`` (default: the configured one), wrapped for prompted tools
        when the provider has no native tool channel."""
        provider = self.provider_config
        if api is not None and api != provider.adapter:
            provider = attrs.evolve(provider, adapter=api)
        classes = self.adapter_classes()
        adapter_cls = classes.get(provider.adapter or "")
        if adapter_cls is None:
            known = ", ".join(classes) or "none"
            raise HostError(
                f"no provider adapter named {provider.adapter!r} is registered; registered "
                f"adapters: {known} (install and enable the plugin that provides it)"
            )
        adapter = adapter_cls(provider, self.transport)
        from .prompted import wrap_adapter

        return wrap_adapter(adapter, provider)

    async def get_adapter(self) -> ProviderAdapter:
        """The configured provider's adapter, created on first use."""
        if self._adapter is None:
            self._adapter = self.create_adapter()
        return self._adapter

    @property
    def transport(self) -> Transport:
        """The host's HTTP transport (one aiohttp session, created on first request)."""
        if self._transport is None:
            from ._transport import Transport

            self._transport = Transport(self.config.provider, emit=self.emit)
        return self._transport

    # -- running ---------------------------------------------------------------------------

    async def run(self, prompt: str | Sequence[Message], **options: Any) -> Run:
        """Run one conversation to its end (an answer, a limit, or deferred calls).

        Options are those of :meth:`toolwire.loop.ToolCallingLoop.run`.
        """
        from .loop import ToolCallingLoop

        return await ToolCallingLoop(self).run(prompt, **options)

    def run_sync(self, prompt: str | Sequence[Message], **options: Any) -> Run:
        """:meth:`run` from synchronous code (starts and closes an event loop)."""
        import asyncio

        async def main() -> Run:
            try:
                return await self.run(prompt, **options)
            finally:
                await self.aclose()

        return asyncio.run(main())

    async def resume(self, run: Run, decisions: Mapping[str, Decision]) -> Run:
        """Continue a run that ended with deferred calls, with a decision per call id."""
        from .loop import ToolCallingLoop

        return await ToolCallingLoop(self).resume(run, decisions)

    def stream(self, prompt: str | Sequence[Message], **options: Any) -> AsyncIterator[Event]:
        """Run a conversation, yielding every event as it happens."""
        from .loop import ToolCallingLoop

        return ToolCallingLoop(self).stream(prompt, **options)

    def on_close(self, callback: Callable[[], Awaitable[None]]) -> None:
        """Have :meth:`aclose` await ``callback`` (latest first): plugins close what they keep in
        :attr:`stash` (sessions, caches) with the host."""
        self._closers.append(callback)

    async def aclose(self) -> None:
        """Close what plugins registered with :meth:`on_close`, the adapter and the transport.

        A closer that raises is reported and does not keep the others from running.
        """
        closers, self._closers = self._closers, []
        for callback in reversed(closers):
            try:
                await callback()
            except Exception as exc:
                from ._events import PluginFailed

                self.emit(
                    PluginFailed(
                        run_id="", plugin="host", hook="on_close", error=describe_exception(exc)
                    )
                )
        self.stash.clear()
        adapter, self._adapter = self._adapter, None
        if adapter is not None:
            await adapter.aclose()
        transport, self._transport = self._transport, None
        if transport is not None:
            await transport.aclose()

    async def __aenter__(self) -> Host:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _register(pm: pluggy.PluginManager, obj: object, info: PluginInfo) -> None:
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
        known = ", ".join(sorted(n for n in dir(hookspecs) if n.startswith("toolwire_")))
        info.loaded = False
        info.error = f"implements unknown hook(s) {', '.join(unknown)}; known hooks: {known}"
        return
    info.hooks = sorted(caller.name for caller in pm.get_hookcallers(obj) or ())


def _call_impl(impl: pluggy.HookImpl, **kwargs: Any) -> Any:
    """Call one hook implementation alone, with only the arguments it declares (as pluggy does)."""
    return impl.function(*(kwargs[name] for name in impl.argnames))


def _event_function(impl: pluggy.HookImpl) -> Any:
    """The observer as a one-argument function (an implementation may declare no argument)."""
    function = impl.function
    if impl.argnames:
        return function
    return lambda event: function()
