"""``McpClient``: the MCP servers of one host, as toolsets of toolwire tools.

Listing tools starts no server whose tool list is cached (:mod:`._cache`): ``toolwire tools
list`` and ``tools show`` read the files and never import the MCP SDK. A server starts when one
of its tools is called, when its list is not cached yet, or when asked (``toolwire mcp
servers``). What a started server lists replaces the cached list, and the host's tools follow.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from toolwire import Tool, ToolResult
from toolwire.tools import ToolDefinitionError
from toolwire.toolsets import Toolset

from . import _cache
from ._listing import PLUGIN_NAME, listed_tool, tool_names, toolwire_name
from ._runtime import LoopThread
from ._settings import McpSettings, ServerSettings

if TYPE_CHECKING:
    from toolwire import Host, ToolContext

    from ._server import ServerConnection

STASH_KEY = "toolwire_mcp.client"
CLOSE_TIMEOUT = 8.0


class ServerToolset(Toolset):
    """The tools of one MCP server, named by the server (in snake_case), unfiltered.

    The tools follow the server's latest listing (live, else cached): after
    ``notifications/tools/list_changed`` the next :meth:`tools` returns the new list.
    """

    def __init__(self, client: McpClient, name: str) -> None:
        self.client = client
        self.name = name
        self.settings = client.settings.servers[name]
        self._built_from: tuple[dict[str, Any], ...] | None = None
        self._tools: dict[str, Tool] = {}
        self.problems: list[str] = []

    def __repr__(self) -> str:
        return f"<tools of MCP server {self.name!r}>"

    def tools(self) -> Mapping[str, Tool]:
        listed = self.client.listing(self.name)
        if listed is not self._built_from:
            self._tools, self.problems = self._build(listed)
            self._built_from = listed
        return self._tools

    def _build(self, listed: tuple[dict[str, Any], ...]) -> tuple[dict[str, Tool], list[str]]:
        tools: dict[str, Tool] = {}
        problems: list[str] = []
        server = self.name
        for entry in listed:
            server_name = str(entry.get("name", ""))
            name = toolwire_name(server_name)
            if name in tools:
                problems.append(
                    f"MCP server {server!r}: tools {tools[name].title!r} and {server_name!r} "
                    f"both become {name!r}; the first is kept"
                )
                continue
            try:
                tools[name] = listed_tool(
                    entry,
                    server=server,
                    settings=self.settings,
                    handler=_Handler(self.client, server, server_name),
                    max_result_bytes=self.settings.max_result_bytes,
                )
            except ToolDefinitionError as exc:  # one bad tool costs only itself
                problems.append(str(exc))
        return dict(sorted(tools.items())), problems


class _Named(Toolset):
    """A server's tools under their host names (:func:`~._listing.tool_names`)."""

    def __init__(self, inner: Toolset, server: str, prefix: str | None) -> None:
        self.inner = inner
        self.server = server
        self.prefix = prefix

    def tools(self) -> Mapping[str, Tool]:
        offered = self.inner.tools()
        names = tool_names(list(offered), self.server, self.prefix)
        return dict(
            sorted(
                (names[name], attrs.evolve(tool, name=names[name]))
                for name, tool in offered.items()
            )
        )


def configured_toolset(base: ServerToolset, settings: ServerSettings) -> Toolset:
    """A server's tools as the config asks: included, excluded, approval, then named."""
    view: Toolset = base
    if settings.include is not None or settings.exclude:
        view = view.filtered(
            include=[toolwire_name(n) for n in settings.include]
            if settings.include is not None
            else None,
            exclude=[toolwire_name(n) for n in settings.exclude],
        )
    approval = settings.require_approval
    if approval is True or (approval and not isinstance(approval, bool)):
        view = view.approval_required(
            True if approval is True else [toolwire_name(n) for n in approval]
        )
    return _Named(view, base.name, settings.prefix)


@attrs.frozen
class _Handler:
    """Runs one server tool for the host, in the MCP loop; the result is mapped back, cut to
    the server's result cap and run through the host's untrusted-content filter, always."""

    client: McpClient
    server: str
    server_tool: str

    async def __call__(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        from toolwire.tools import truncate_result
        from toolwire.untrusted import filter_result

        client = self.client
        client.note_loop()
        result = await self._call(arguments, context)
        config = context.services.get("config")
        policy = getattr(config, "policy", None)
        own = client.settings.servers[self.server].max_result_bytes
        cap: int = own or int(getattr(policy, "max_untrusted_result_bytes", 65_536))
        result = truncate_result(result, cap)
        return await filter_result(context, result, source=f"MCP tool {context.tool.name}")

    async def _call(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        from ._convert import to_tool_result
        from ._elicit import asker_for
        from ._server import ServerUnavailable

        client = self.client
        host_loop = asyncio.get_running_loop()

        def progress(done: float, total: float | None, message: str | None) -> None:
            host_loop.call_soon_threadsafe(_report_progress, context, done, total, message)

        connection = client.connection(self.server)
        settings = connection.settings
        asker = asker_for(self.server, context.tool.name, host_loop)
        try:
            result = await client.thread.run(
                connection.call_tool(self.server_tool, arguments, progress, asker)
            )
        except ServerUnavailable as exc:
            return ToolResult.error(str(exc))
        except TimeoutError as exc:
            return ToolResult.error(str(exc), retryable=True)
        except Exception as exc:
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            return ToolResult.error(
                f"MCP server {self.server!r} could not run {self.server_tool!r}: {message}",
                exception=exc,
            )
        finally:
            # A server started for this call may list other tools than were kept (an upgrade):
            # the cache and the host's tools follow, from the next round on.
            client.listed(self.server)
            client.apply_tools(self.server)
        tool_result, _texts = to_tool_result(
            result,
            server=self.server,
            tool=self.server_tool,
            trust=settings.trust,
            error_prefix=settings.error_prefix,
        )
        return tool_result


def _report_progress(
    context: ToolContext, done: float, total: float | None, message: str | None
) -> None:
    fraction = None
    if total:
        fraction = min(1.0, max(0.0, done / total))
    text = message or (f"{done:g} of {total:g}" if total else f"{done:g}")
    with contextlib.suppress(ValueError):
        context.report_progress(text, fraction)


class McpClient:
    """Every MCP server configured for one host.

    ``base_dirs`` gives, per server, the folder of the config file that declares it (paths in
    its entry are taken from there). Servers start lazily (see the module documentation), in
    the host's MCP loop; they close with the host, or at the latest when the process exits.
    """

    def __init__(
        self,
        settings: McpSettings,
        *,
        base_dirs: Mapping[str, str | None] | None = None,
        plugin: str = PLUGIN_NAME,
    ) -> None:
        self.settings = settings
        self.base_dirs = dict(base_dirs or {})
        self.plugin = plugin  # the plugin the tools are registered under
        self.closed = False  # True once aclose ran: the client offers no tools after that
        self.thread = LoopThread()
        self._connections: dict[str, ServerConnection] = {}
        self.base_toolsets = {name: ServerToolset(self, name) for name in sorted(settings.servers)}
        self.toolsets = {
            name: configured_toolset(base, settings.servers[name])
            for name, base in self.base_toolsets.items()
        }
        self._cached: dict[str, _cache.Listing | None] = {}
        self._host: weakref.ReferenceType[Host] | None = None
        self._host_loop: asyncio.AbstractEventLoop | None = None
        self._registered: dict[str, set[str]] = {}
        self._registered_from: dict[str, object] = {}
        self._finalizer = weakref.finalize(self, _close_at_exit, self.thread, self._connections)

    # -- servers -------------------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        """The configured servers, sorted."""
        return sorted(self.settings.servers)

    def connection(self, name: str) -> ServerConnection:
        """The connection of server ``name`` (made, not started, on first use)."""
        connection = self._connections.get(name)
        if connection is None:
            from ._server import ServerConnection

            auth = None
            settings = self.settings.servers[name]
            if settings.oauth:
                from ._oauth import auth_provider

                def auth() -> Any:
                    return auth_provider(name, settings, interactive=False)

            connection = self._connections[name] = ServerConnection(
                name,
                settings,
                base_dir=self.base_dirs.get(name),
                on_tools_changed=self._tools_changed,
                auth=auth,
            )
        return connection

    def started(self, name: str) -> ServerConnection | None:
        """The connection of server ``name`` when it was made, else None."""
        return self._connections.get(name)

    def cache_key(self, name: str) -> list[Any]:
        """What names server ``name``'s listing in the tool-list cache."""
        settings = self.settings.servers[name]
        base = self.base_dirs.get(name)
        return _cache.identity(
            url=settings.url,
            command_line=settings.command_line(base),
            env=settings.env,
            cwd=settings.working_dir(base),
        )

    def listing(self, name: str) -> tuple[dict[str, Any], ...]:
        """Server ``name``'s tools as listed: live when it runs, else cached, else ()."""
        connection = self._connections.get(name)
        if connection is not None and connection.status == "running":
            return connection.tools
        cached = self._cached.get(name)
        return cached.tools if cached is not None else ()

    def start(self, names: list[str]) -> None:
        """Start the named servers at once and wait until each runs or has failed."""
        if not names:
            return
        longest = max(self.settings.servers[n].startup_timeout for n in names)
        with contextlib.suppress(TimeoutError):
            self.thread.run_sync(self._start(names), timeout=longest + CLOSE_TIMEOUT)
        for name in names:
            self.listed(name)

    async def _start(self, names: list[str]) -> None:
        await asyncio.gather(
            *(self.connection(name).start() for name in names), return_exceptions=True
        )

    def start_all(self) -> None:
        """Start every server (``toolwire mcp servers``)."""
        self.start([n for n in self.names if self._status(n) in ("not started", "cached")])

    def refresh(self, names: list[str] | None = None) -> None:
        """List the tools of the named servers (all by default) again, started when needed."""
        chosen = self.names if names is None else names
        longest = max((self.settings.servers[n].startup_timeout for n in chosen), default=0.0)

        async def go() -> None:
            await asyncio.gather(
                *(self.connection(n).refresh() for n in chosen), return_exceptions=True
            )

        with contextlib.suppress(TimeoutError):
            self.thread.run_sync(go(), timeout=longest + CLOSE_TIMEOUT)
        for name in chosen:
            self.listed(name)

    def _status(self, name: str) -> str:
        connection = self._connections.get(name)
        if connection is not None:
            return connection.status
        return "cached" if self._cached.get(name) is not None else "not started"

    def status(self, name: str) -> str:
        """``running``, ``failed``, ``closed`` … or ``not started`` (with its tools cached)."""
        status = self._status(name)
        return "not started" if status == "cached" else status

    def listed(self, name: str) -> None:
        """A started server listed its tools: keep the listing in the cache."""
        connection = self._connections.get(name)
        if connection is None or connection.status != "running":
            return
        info = connection.server_info
        listing = _cache.Listing(
            tools=connection.tools,
            server=info.name if info is not None else None,
            version=info.version if info is not None else None,
            problems=tuple(connection.problems),
        )
        cached = self._cached.get(name)
        if cached is None or cached != listing:
            _cache.store(self.cache_key(name), listing)
            self._cached[name] = listing

    # -- tools ---------------------------------------------------------------------------------

    def tools(self) -> list[Tool]:
        """The configured tools of every server: from the cache where a listing is kept, the
        others started (all at once) to list theirs."""
        missing: list[str] = []
        for name in self.names:
            if name not in self._cached:
                self._cached[name] = _cache.load(self.cache_key(name))
            if self._cached[name] is None and self._status(name) == "not started":
                missing.append(name)
        self.start(missing)
        tools: list[Tool] = []
        for name, view in self.toolsets.items():
            if self._status(name) not in ("running", "cached"):
                continue
            try:
                offered = view.tools()
            except ToolDefinitionError as exc:
                self.base_toolsets[name].problems.append(f"MCP server {name!r}: {exc}")
                continue
            self._registered[name] = set(offered)
            self._registered_from[name] = self.listing(name)
            tools.extend(offered.values())
        return tools

    def registered(self, server: str) -> list[str]:
        """The host tool names registered for ``server``, sorted."""
        return sorted(self._registered.get(server, ()))

    def problems(self) -> list[str]:
        """Why servers or tools are missing: failed servers with their stderr tail, bad tools."""
        out: list[str] = []
        for name in self.names:
            connection = self._connections.get(name)
            cached = self._cached.get(name)
            if connection is not None:
                if connection.status == "failed":
                    out.append(connection.describe_problem())
                out.extend(connection.problems)
            elif cached is not None:
                out.extend(cached.problems)  # the tools left out when it was last listed
            out.extend(self.base_toolsets[name].problems)
        return out

    # -- the host ------------------------------------------------------------------------------

    def attach(self, host: Host) -> None:
        """Close with ``host``, and apply tool-list changes to it."""
        if self._host is not None:
            return
        self._host = weakref.ref(host)
        host.stash[STASH_KEY] = self
        host.on_close(self.aclose)

    def note_loop(self) -> None:
        """Remember the host's event loop (changes reach the host's registry there), and apply
        a change announced before it was known."""
        if self._host_loop is not None:
            return
        self._host_loop = asyncio.get_running_loop()
        for name in self.names:
            if name in self._registered_from:
                self.apply_tools(name)

    def _tools_changed(self, connection: ServerConnection) -> None:
        # In the MCP loop: the cache is written now, the host's registry changed in its loop.
        self.listed(connection.name)
        loop = self._host_loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.apply_tools, connection.name)

    def apply_tools(self, server: str) -> None:
        """Register ``server``'s current tools with the host in place of those registered
        before, when its listing changed (in the host's loop)."""
        host = self._host() if self._host is not None else None
        if host is None or self._registered_from.get(server) == self.listing(server):
            return
        try:
            offered = dict(self.toolsets[server].tools())
        except ToolDefinitionError as exc:
            self.base_toolsets[server].problems.append(f"MCP server {server!r}: {exc}")
            return
        registered = host.tools
        for name in self._registered.get(server, set()):
            current = registered.get(name)
            if current is not None and current.plugin == self.plugin:
                host.remove_tool(name)
        kept: set[str] = set()
        for name, tool in offered.items():
            try:
                host.add_tool(tool, plugin=self.plugin)
            except ToolDefinitionError as exc:
                self.base_toolsets[server].problems.append(f"MCP server {server!r}: {exc}")
                continue
            kept.add(name)
        self._registered[server] = kept
        self._registered_from[server] = self.listing(server)

    # -- closing -------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close every server (processes ended, sessions released) and stop the MCP loop."""
        self.closed = True
        if self.thread.running:
            with contextlib.suppress(Exception):
                await self.thread.run(_close_all(list(self._connections.values())))
        self.thread.stop()
        self._finalizer.detach()

    def close(self) -> None:
        """:meth:`aclose` from synchronous code."""
        self._finalizer()


async def _close_all(connections: list[ServerConnection]) -> None:
    await asyncio.gather(*(c.aclose() for c in connections), return_exceptions=True)


def _close_at_exit(thread: LoopThread, connections: Mapping[str, ServerConnection]) -> None:
    if thread.running:
        with contextlib.suppress(Exception):
            thread.run_sync(_close_all(list(connections.values())), timeout=CLOSE_TIMEOUT + 1.0)
    thread.stop()
