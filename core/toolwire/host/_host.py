"""``Host``: one plugin manager, the enabled plugins, the tool registry and the provider adapter."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import attrs
import pluggy

from .. import hookspecs
from .._defaults import LOOP as LOOP_DEFAULT
from .._defaults import default_plugins
from .._markers import PROJECT_NAME
from .._surface import Surface
from .._trust import TrustLevel, levels_in_use
from ..config import Config, ConfigError, ProviderConfig, load_config
from ._configure import check_plugin_settings, configure_plugins
from ._discovery import (
    PluginInfo,
    PluginManager,
    describe_exception,
    discover,
    load_entry_point,
    register_plugin,
)
from ._observers import Observers
from ._registry import Registry
from ._services import Services

if TYPE_CHECKING:
    from .._request import OfferRequest
    from ..adapters import ProviderAdapter
    from ..events import Event
    from ..http._transport import Transport
    from ..loop import Decision, Run, RunEvents, RunLoop
    from ..loop._protocol import Pipeline
    from ..messages import Message
    from ..tools import Tool
    from ._display import ToolDisplay


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
        *,
        services: Mapping[str, Any] | None = None,
    ) -> None:
        self.config = config
        self.plugin_manager = plugin_manager
        self.hook = plugin_manager.hook
        self.plugins: list[PluginInfo] = list(plugins)
        self._settings: dict[str, Any] = {}
        self._adapter: ProviderAdapter | None = None
        self._transport: Transport | None = None
        self._pipeline: Pipeline | None = None
        self._loop_plugin: str | None = None
        self._observers = Observers(self.hook, self.plugin_info, bound=config.loop.observer_timeout)
        self._services = Services(
            self.hook,
            services or {},
            plugin_info=self.plugin_info,
            plugin_settings=self.plugin_settings,
            report_failure=self._fail,
        )
        self._registry = Registry(
            self.hook,
            plugin_info=self.plugin_info,
            plugin_settings=self.plugin_settings,
            report_failure=self._fail,
            min_trust=_min_trust(config),
            levels=config.trust.levels,
            services=lambda: self.services,
        )
        self.stash: dict[Any, Any] = {}
        self._closers: list[Callable[[], Awaitable[None]]] = []

    # -- construction ----------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        config: Config | str | os.PathLike[str] | None = None,
        *,
        plugins: Iterable[object] = (),
        services: Mapping[str, Any] | None = None,
        surface: Surface | str | None = None,
    ) -> Host:
        """Discover installed plugins, enable those the config names, and register them.

        :param config: a :class:`Config`, a path to a config file, or None to find one
            (``--config``, ``$TOOLWIRE_CONFIG``, ``./toolwire.toml``) or use defaults.
        :param plugins: plugin objects (modules or instances with hookimpls) registered directly,
            in addition to the enabled entry-point plugins.
        :param services: named services for the tools' ``Injected`` parameters (a database
            client, an HTTP client with credentials …), beside those the plugins provide
            (``toolwire_services``; a name given here wins). Never shown to the model; closed
            with the host (``aclose()`` or ``close()``).
        :param surface: where the host's runs happen (see :meth:`use_surface`): a
            :class:`Surface` or the name of a built-in one (``"chat"``, ``"batch"`` …).
        :raises ConfigError: when the config is invalid, enables a plugin that is not installed,
            or gives an enabled plugin settings that do not fit it.
        :raises ValueError: for a surface name that is no built-in surface.
        """
        if not isinstance(config, Config):
            config = load_config(config)
        if surface is not None:
            config = attrs.evolve(config, surface=Surface.of(surface))
        with levels_in_use(config.trust.levels):  # its plugins' levels are read in its scheme
            return cls._assemble(config, plugins, services)

    @classmethod
    def _assemble(
        cls, config: Config, plugins: Iterable[object], services: Mapping[str, Any] | None
    ) -> Host:
        """The host of ``config``: its plugins discovered, enabled and registered."""
        pm = PluginManager(PROJECT_NAME)
        pm.add_hookspecs(hookspecs)
        infos: list[PluginInfo] = []
        for name, plugin in default_plugins(config):
            pm.register(plugin, name=name)
        installed = discover()
        enabled = config.plugins.enable
        for index, name in enumerate(enabled):
            if name not in installed:
                known = ", ".join(sorted(installed)) or "none are installed"
                where = (
                    f"{config.enabled_from} = {','.join(enabled)!r}: item {index + 1}"
                    if config.enabled_from
                    else f"{config.origin_of('$.plugins.enable') or '<config>'}: "
                    f"$.plugins.enable[{index}]"
                )
                raise ConfigError(
                    f"{where} = {name!r}: no installed plugin has this name; installed plugins: "
                    f"{known}",
                    file=None if config.enabled_from else config.origin_of("$.plugins.enable"),
                    path=None if config.enabled_from else f"$.plugins.enable[{index}]",
                )
        for name, (_ep, info) in sorted(installed.items()):
            info.enabled = name in enabled
            infos.append(info)
        for name in enabled:
            ep, info = installed[name]
            obj = load_entry_point(ep, info)
            if obj is not None:
                register_plugin(pm, obj, info)
        for obj in plugins:
            name = getattr(obj, "__name__", None) or f"{type(obj).__name__}-{id(obj):x}"
            info = PluginInfo(name=str(name), enabled=True, loaded=True)
            register_plugin(pm, obj, info)
            infos.append(info)
        host = cls(config, pm, infos, services=services)
        check_plugin_settings(host)
        configure_plugins(host)
        return host

    # -- surface ---------------------------------------------------------------------------

    @property
    def surface(self) -> Surface | None:
        """Where the host's runs happen (None: a host that names no surface)."""
        return self.config.surface

    def use_surface(self, surface: Surface | str) -> str | None:
        """Declare where the host's runs happen from now on (``toolwire serve`` does it once it
        knows its address).

        The surface decides which tools are offered (``[surfaces.<name>] allow/deny``; a hosted
        surface offers none until the config names some) and what a call of a guarded tool
        meets (``[policy] guarded``: asked about on an interactive surface,
        refused on an unattended one). A host that names no surface applies ``[tools]``,
        profiles and ``[policy]`` only.

        :returns: the message to show the person starting the surface when it offers no tool
            because the config names none (see :attr:`offer_notice`), else None.
        :raises ValueError: for a surface name that is no built-in surface.
        """
        self.config = attrs.evolve(self.config, surface=Surface.of(surface))
        self._pipeline = None  # the policy's answers depend on the surface
        return self.offer_notice

    @property
    def offer_notice(self) -> str | None:
        """Why the host's surface offers no tool at all, or which selected tools it leaves out
        because a tool they require cannot be had (one line each), worded for the person who
        starts it; None when it offers as configured."""
        from .._selection import Selection, closed_offer

        reason = closed_offer(self.config)
        if reason is not None:
            return f"toolwire: {reason}."
        try:
            refused = Selection.from_config(self.config, None, None, self.tools).refused
        except ValueError:  # an undefined profile: reported where the profile is used
            return None
        if not refused:
            return None
        return "\n".join(f"toolwire: {name} is not offered: {why}." for name, why in refused)

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
            settings = self.config.structure(dict(raw), settings_cls, path=section)
        self._settings[plugin] = settings
        return settings

    # -- services --------------------------------------------------------------------------

    @property
    def services(self) -> Mapping[str, Any]:
        """The services tools receive through ``Injected`` parameters, by name: those given to
        :meth:`load`, each plugin's (``toolwire_services``, called once, on first use), and the
        host's own ``host`` and ``config``. Read-only."""
        return {**self._services.services, "host": self, "config": self.config}

    # -- tools -----------------------------------------------------------------------------

    @property
    def tools(self) -> Mapping[str, Tool]:
        """Every registered tool by name (each with ``plugin`` set), collected on first use."""
        return self._registry.tools

    def tool_display(self, tool: Tool | str, locale: str | None = None) -> ToolDisplay:
        """How people see ``tool`` (or the registered tool of that name) in ``locale``: its
        title, description and icon, translated by ``[i18n]`` where a translation exists.

        :raises KeyError: for a name no registered tool has.
        """
        from ._display import tool_display

        if isinstance(tool, str):
            found = self.tools.get(tool)
            if found is None:
                known = ", ".join(self.tools) or "none are registered"
                raise KeyError(f"no tool named {tool!r}; registered tools: {known}")
            tool = found
        return tool_display(tool, self.config.i18n, locale)

    async def why_not_offered(
        self,
        name: str,
        request: OfferRequest | None = None,
        *,
        tools: Sequence[str] | None = None,
        profile: str | None = None,
    ) -> str | None:
        """Why a round would not offer the tool ``name``, or None when it would.

        The offer's own checks, in its order, give the first reason that applies: no such
        tool, not enabled, denied, outside the profile's allow list, the provider's trust, the
        adapter's name limit, and ``toolwire_resolve_function`` returning nothing (or raising).
        ``tools`` and ``profile`` are the run's options of the same names. Without a
        ``request``, one for the first round of an empty conversation with the configured
        provider, in a run whose tool choice names no tool, is used. When no provider is
        configured, the adapter's name limit is not checked.
        """
        from .._request import OfferRequest
        from ..loop._offer import Selection
        from ..loop._offer import why_not_offered as first_reason

        selection = Selection.from_config(
            self.config, tuple(tools) if tools is not None else None, profile, self.tools
        )
        try:
            adapter: ProviderAdapter | None = await self.get_adapter()
        except HostError:
            adapter = None
        api = request.api if request is not None else (adapter.api if adapter else "")
        max_name = adapter.capabilities.max_tool_name_length if adapter else len(name)
        with levels_in_use(self.config.trust.levels):
            if request is None:
                tool = self.tools.get(name)
                request = OfferRequest(
                    run_id="",
                    round=1,
                    messages=(),
                    api=api,
                    model=self.config.provider.model,
                    provider_trust=self.config.provider.trust_level,
                    native_tools=adapter.capabilities.native_tools if adapter else True,
                    settings=self.plugin_settings(tool.plugin) if tool is not None else {},
                )
            return await first_reason(
                self, selection, name, request, max_name=max_name, emit=self.emit
            )

    def add_tool(self, tool: Tool, *, plugin: str | None = None) -> None:
        """Register a tool directly (for embedding and tests); a taken name is an error."""
        self._registry.add_tool(tool, plugin=plugin)

    def remove_tool(self, name: str) -> None:
        """Unregister a tool; later rounds of running loops no longer offer it."""
        self._registry.remove_tool(name)

    def _fail(self, info: PluginInfo | None, plugin: str, hook: str, exc: BaseException) -> None:
        message = (
            f"{hook}: {describe_exception(exc)}"
            if not isinstance(exc, _tool_definition_error() | ConfigError)
            else f"{hook}: {exc}"
        )
        if info is not None:
            info.error = f"{info.error}; {message}" if info.error else message
        from ..events import PluginFailed

        self.emit(PluginFailed(run_id="", plugin=plugin, hook=hook, error=message))

    # -- events ----------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        """Deliver an event to every ``toolwire_event`` implementation.

        An observer that raises is reported once (to the others) and never stops a run.
        """
        self._observers.emit(event)

    @property
    def pipeline(self) -> Pipeline:
        """The fast paths of this host, chosen on first use from its registered hooks."""
        if self._pipeline is None:
            from ._pipeline import choose_pipeline

            self._pipeline = choose_pipeline(self.hook, self.config)
        return self._pipeline

    # -- providers -------------------------------------------------------------------------

    def adapter_classes(self) -> Mapping[str, type[ProviderAdapter]]:
        """Every registered adapter class by API name."""
        return self._registry.adapter_classes()

    @property
    def provider_config(self) -> ProviderConfig:
        """``[provider]`` with the adapter resolved: when none is configured, the embedded model
        if the ``llamacpp`` plugin is enabled and loaded, else none (the in-box scripted test
        model answers only when asked for by name, ``adapter = "scripted"``: it calls every tool
        it is offered, side effects included)."""
        provider = self.config.provider
        if provider.adapter is None:
            info = self.plugin_info(DEFAULT_LOCAL_PLUGIN)
            if info is not None and info.enabled and info.loaded:
                provider = attrs.evolve(provider, adapter=DEFAULT_LOCAL_PLUGIN)
        return provider

    def create_adapter(self, api: str | None = None) -> ProviderAdapter:
        """A new adapter for ``api`` (default: the configured one), wrapped for prompted tools
        when the provider has no native tool channel; with ``[[provider.fallback]]`` entries
        (and no ``api``), one adapter that asks them in order when a provider cannot answer."""
        provider = self.provider_config
        if api is not None and api != provider.adapter:
            provider = attrs.evolve(provider, adapter=api, fallback=())
        if not provider.fallback:
            return self._provider_adapter(provider)
        from ..adapters._fallback import FallbackAdapter, provider_names

        entries = [provider, *provider.fallback]
        names = provider_names([(p.adapter, p.model) for p in entries])
        last = len(entries) - 1
        adapters = []
        for index, entry in enumerate(entries):
            if index < last and entry.native_tools is None:
                # A refusal of tools moves on to the next provider; only the last one falls
                # back to tools in the prompt.
                entry = attrs.evolve(entry, native_tools=True)
            adapters.append((names[index], self._provider_adapter(entry)))
        return FallbackAdapter(adapters)

    def _provider_adapter(self, provider: ProviderConfig) -> ProviderAdapter:
        classes = self.adapter_classes()
        if provider.adapter is None:
            raise HostError(
                "no provider is configured: set [provider] adapter (one of "
                f"{', '.join(sorted(classes)) or 'none'}) with its base_url and model, or enable "
                "the llamacpp plugin for the embedded model"
            )
        adapter_cls = classes.get(provider.adapter)
        if adapter_cls is None:
            known = ", ".join(classes) or "none"
            raise HostError(
                f"no provider adapter named {provider.adapter!r} is registered; registered "
                f"adapters: {known} (install and enable the plugin that provides it)"
            )
        adapter = adapter_cls(provider, self.transport)
        from ..prompted._adapter import wrap_adapter

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
            from ..http._transport import Transport

            self._transport = Transport(
                self.config.provider,
                emit=self.emit,
                request_bodies=self.config.trace.request_bodies,
            )
        return self._transport

    # -- running ---------------------------------------------------------------------------

    async def run(self, prompt: str | Sequence[Message], **options: Any) -> Run:
        """Run one conversation to its end (an answer, a limit, or deferred calls).

        Options are those of :meth:`toolwire.loop.ToolCallingLoop.run` (or of the loop a plugin
        provides, see :meth:`new_loop`).
        """
        return await self.new_loop().run(prompt, **options)

    def run_sync(self, prompt: str | Sequence[Message], **options: Any) -> Run:
        """:meth:`run` from synchronous code (starts and closes an event loop)."""
        import asyncio

        async def main() -> Run:
            try:
                return await self.run(prompt, **options)
            finally:
                await self.aclose()

        return asyncio.run(main())

    async def resume(
        self, run: Run | str, decisions: Mapping[str, Decision] | None = None, **options: Any
    ) -> Run:
        """Continue a run that ended with deferred calls, with a decision per call id.

        Options are those of :meth:`toolwire.loop.ToolCallingLoop.resume` (``approval``,
        ``external``, ``cancel``, ``context``).
        """
        return await self.new_loop().resume(run, decisions, **options)

    def stream(self, prompt: str | Sequence[Message], **options: Any) -> RunEvents:
        """Run a conversation, yielding every event as it happens (the run is the stream's
        ``run`` once it ended)."""
        return self.new_loop().stream(prompt, **options)

    def new_loop(self) -> RunLoop:
        """A loop for one conversation: the one the enabled plugin implementing
        ``toolwire_loop`` returns, else the built-in :class:`~toolwire.loop.ToolCallingLoop`.

        :raises HostError: when two enabled plugins provide the loop, or the one that does
            raises or returns something that is not a :class:`~toolwire.loop.RunLoop`; the
            message names the plugin.
        """
        caller = self.hook.toolwire_loop
        if self._loop_plugin is None:
            self._loop_plugin = _loop_plugin(self.plugin_manager, caller.get_hookimpls())
        try:
            loop = caller(host=self)
        except Exception as exc:
            raise HostError(
                f"plugin {self._loop_plugin!r} failed to provide the loop (toolwire_loop): "
                f"{describe_exception(exc)}"
            ) from exc
        if type(loop) not in _LOOP_CLASSES:
            from ..loop import RunLoop

            if not isinstance(loop, RunLoop):
                raise HostError(
                    f"plugin {self._loop_plugin!r} returned {_short_repr(loop)} from "
                    "toolwire_loop; expected a loop with run, resume, stream, load and last_run "
                    "(toolwire.loop.RunLoop)"
                )
            _LOOP_CLASSES.add(type(loop))
        return cast("RunLoop", loop)

    def on_close(self, callback: Callable[[], Awaitable[None]]) -> None:
        """Have :meth:`aclose` await ``callback`` (latest first): plugins close what they keep in
        :attr:`stash` (sessions, caches) with the host."""
        self._closers.append(callback)

    async def aclose(self) -> None:
        """Close what plugins registered with :meth:`on_close`, the adapter and the transport,
        then end the threads of observers moved off the loop once they delivered what was queued
        (for at most ``[loop] observer_close_timeout`` seconds).

        A closer that raises is reported and does not keep the others from running.
        """
        closers, self._closers = self._closers, []
        for callback in reversed(closers):
            try:
                await callback()
            except Exception as exc:
                from ..events import PluginFailed

                self.emit(
                    PluginFailed(
                        run_id="", plugin="host", hook="on_close", error=describe_exception(exc)
                    )
                )
        self.stash.clear()
        await self._services.aclose(self._service_failed)
        adapter, self._adapter = self._adapter, None
        if adapter is not None:
            await adapter.aclose()
        transport, self._transport = self._transport, None
        if transport is not None:
            await transport.aclose()
        await self._observers.aclose(self.config.loop.observer_close_timeout)

    def _service_failed(self, name: str, exc: BaseException) -> None:
        from ..events import PluginFailed

        self.emit(
            PluginFailed(
                run_id="",
                plugin="host",
                hook="services",
                error=f"closing service {name!r}: {describe_exception(exc)}",
            )
        )

    async def __aenter__(self) -> Host:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _loop_plugin(pm: pluggy.PluginManager, impls: Sequence[Any]) -> str:
    """The name of the plugin whose ``toolwire_loop`` runs, after checking that at most one
    plugin besides the built-in default implements it."""
    names = [pm.get_name(impl.plugin) or repr(impl.plugin) for impl in impls]
    provided = [name for name in names if name != LOOP_DEFAULT]
    if len(provided) > 1:
        raise HostError(
            f"plugins {', '.join(map(repr, sorted(provided)))} each provide the loop "
            "(toolwire_loop); enable only one of them"
        )
    return provided[0] if provided else LOOP_DEFAULT


_LOOP_CLASSES: set[type] = set()
"""The loop classes a loop was found to be a :class:`~toolwire.loop.RunLoop` of: checking an
object against the protocol looks up each of its methods, which a batch did for every run."""


def _short_repr(value: object) -> str:
    try:
        text = repr(value)
    except Exception:  # a plugin's object whose repr fails is still named
        return f"a {type(value).__name__} object"
    return text if len(text) <= 80 else f"{text[:77]}..."


def _tool_definition_error() -> type[Exception]:
    # The tool model is imported when tools are, not for commands that never list them.
    from ..tools import ToolDefinitionError

    return ToolDefinitionError


def _min_trust(config: Config) -> dict[str, TrustLevel]:
    """``[tools.trust]``: the least trusted provider each plugin's tools go to, read in the
    config's scheme."""
    with levels_in_use(config.trust.levels):
        return {name: TrustLevel.parse(level) for name, level in config.tools.trust.items()}
