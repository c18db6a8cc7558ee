"""``McpClient``: the MCP servers of one host, as toolsets of toolwire tools."""

from __future__ import annotations

import asyncio
import contextlib
import re
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from toolwire import Tool, ToolResult
from toolwire.tools import ToolDefinitionError
from toolwire.toolsets import Toolset

from ._convert import policy_fields, to_tool_result
from ._runtime import LoopThread
from ._server import CLOSE_TIMEOUT, ServerConnection, ServerUnavailable
from ._settings import McpSettings, ServerSettings

if TYPE_CHECKING:
    import mcp.types as mt

    from toolwire import Host, ToolContext

PLUGIN_NAME = "mcp"
STASH_KEY = "toolwire_mcp.client"

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_SNAKE = re.compile(r"[^a-z0-9_]+")


def toolwire_name(server_tool: str) -> str:
    """The snake_case spelling toolwire uses for a server's tool name (``getWeather`` →
    ``get_weather``, ``read-file`` → ``read_file``)."""
    name = _NOT_SNAKE.sub("_", _CAMEL.sub("_", server_tool).lower()).strip("_")
    if not name or not name[0].isalpha():
        name = f"t_{name}"
    return name


class ServerToolset(Toolset):
    """The tools of one MCP server, named by the server (in snake_case), unfiltered.

    The tools follow the server's latest listing: after ``notifications/tools/list_changed``
    the next :meth:`tools` returns the new list.
    """

    def __init__(self, client: McpClient, connection: ServerConnection) -> None:
        self.client = client
        self.connection = connection
        self._built_from: tuple[mt.Tool, ...] | None = None
        self._tools: dict[str, Tool] = {}
        self.problems: list[str] = []

    def __repr__(self) -> str:
        return f"<tools of MCP server {self.connection.name!r}>"

    def tools(self) -> Mapping[str, Tool]:
        listed = self.connection.tools
        if listed is not self._built_from:
            self._tools, self.problems = self._build(listed)
            self._built_from = listed
        return self._tools

    def _build(self, listed: tuple[mt.Tool, ...]) -> tuple[dict[str, Tool], list[str]]:
        tools: dict[str, Tool] = {}
        problems: list[str] = []
        server = self.connection.name
        settings = self.connection.settings
        for entry in listed:
            name = toolwire_name(entry.name)
            if name in tools:
                problems.append(
                    f"MCP server {server!r}: tools {tools[name].title!r} and {entry.name!r} both "
                    f"become {name!r}; the first is kept"
                )
                continue
            annotations = entry.annotations
            try:
                tools[name] = Tool.from_schema(
                    name,
                    entry.description or "",
                    dict(entry.input_schema or {}),
                    _Handler(self.client, self.connection, entry.name),
                    title=entry.title or (annotations.title if annotations else None) or entry.name,
                    timeout=settings.timeout + 2.0,
                    plugin=PLUGIN_NAME,
                    normalize=True,
                    **policy_fields(annotations),
                )
            except ToolDefinitionError as exc:  # one bad tool costs only itself
                problems.append(f"MCP server {server!r}, tool {entry.name!r}: {exc}")
        return dict(sorted(tools.items())), problems


def configured_toolset(base: ServerToolset, settings: ServerSettings) -> Toolset:
    """A server's tools as the config asks: included, excluded, approval, then prefixed."""
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
    return view.prefixed(settings.prefix_for(base.connection.name))


@attrs.frozen
class _Handler:
    """Runs one server tool for the host: in the MCP loop, results mapped back."""

    client: McpClient
    connection: ServerConnection
    server_tool: str

    async def __call__(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        client = self.client
        host = context.services.get("host")
        if host is not None:
            client.bind(host)
        host_loop = asyncio.get_running_loop()

        def progress(done: float, total: float | None, message: str | None) -> None:
            host_loop.call_soon_threadsafe(_report_progress, context, done, total, message)

        server = self.connection.name
        try:
            result = await client.thread.run(
                self.connection.call_tool(self.server_tool, arguments, progress)
            )
        except ServerUnavailable as exc:
            return ToolResult.error(str(exc))
        except TimeoutError as exc:
            return ToolResult.error(str(exc), retryable=True)
        except Exception as exc:
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            return ToolResult.error(
                f"MCP server {server!r} could not run {self.server_tool!r}: {message}",
                exception=exc,
            )
        tool_result, _texts = to_tool_result(
            result, server=server, tool=self.server_tool, trust=self.connection.settings.trust
        )
        if context.tool.returns_untrusted_content:
            from toolwire.untrusted import filter_result

            source = f"MCP tool {context.tool.name}"
            tool_result = await filter_result(context, tool_result, source=source)
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

    Servers start together, on the first listing of the host's tools, in the host's MCP loop;
    they close with the host (:meth:`bind` registers :meth:`aclose` with ``Host.on_close``),
    or at the latest when the process exits.
    """

    def __init__(self, settings: McpSettings, *, plugin: str = PLUGIN_NAME) -> None:
        self.settings = settings
        self.plugin = plugin  # the plugin the tools are registered under
        self.thread = LoopThread()
        self.connections = {
            name: ServerConnection(name, server, on_tools_changed=self._tools_changed)
            for name, server in sorted(settings.servers.items())
        }
        self.base_toolsets = {
            name: ServerToolset(self, connection) for name, connection in self.connections.items()
        }
        self.toolsets = {
            name: configured_toolset(base, settings.servers[name])
            for name, base in self.base_toolsets.items()
        }
        self._started = False
        self._host: weakref.ReferenceType[Host] | None = None
        self._host_loop: asyncio.AbstractEventLoop | None = None
        self._registered: dict[str, set[str]] = {}
        self._registered_from: dict[str, object] = {}
        self._finalizer = weakref.finalize(
            self, _close_at_exit, self.thread, list(self.connections.values())
        )

    # -- starting ------------------------------------------------------------------------------

    def start_all(self) -> None:
        """Start every server at once and wait until each runs or has failed."""
        if self._started or not self.connections:
            return
        self._started = True
        longest = max(s.startup_timeout for s in self.settings.servers.values())
        with contextlib.suppress(TimeoutError):
            self.thread.run_sync(self._start_all(), timeout=longest + CLOSE_TIMEOUT)

    async def _start_all(self) -> None:
        await asyncio.gather(
            *(connection.start() for connection in self.connections.values()),
            return_exceptions=True,
        )

    def tools(self) -> list[Tool]:
        """The configured tools of every running server (servers started first)."""
        self.start_all()
        tools: list[Tool] = []
        for name, view in self.toolsets.items():
            if self.connections[name].status != "running":
                continue
            try:
                offered = view.tools()
            except ToolDefinitionError as exc:
                self.base_toolsets[name].problems.append(f"MCP server {name!r}: {exc}")
                continue
            self._registered[name] = set(offered)
            self._registered_from[name] = self.connections[name].tools
            tools.extend(offered.values())
        return tools

    def registered(self, server: str) -> list[str]:
        """The host tool names registered for ``server``, sorted."""
        return sorted(self._registered.get(server, ()))

    def problems(self) -> list[str]:
        """Why servers or tools are missing: failed servers with their stderr tail, bad tools."""
        out: list[str] = []
        for name, connection in self.connections.items():
            if connection.status == "failed":
                out.append(connection.describe_problem())
            out.extend(self.base_toolsets[name].problems)
        return out

    # -- the host ------------------------------------------------------------------------------

    def bind(self, host: Host) -> None:
        """Close with ``host``, and apply tool-list changes to it (once per host)."""
        if self._host is not None:
            return
        self._host = weakref.ref(host)
        self._host_loop = asyncio.get_running_loop()
        host.stash[STASH_KEY] = self
        host.on_close(self.aclose)
        # A list change announced before the host was known is applied now.
        for name, connection in self.connections.items():
            if (
                name in self._registered_from
                and connection.tools is not self._registered_from[name]
            ):
                self._apply_tools(name)

    def _tools_changed(self, connection: ServerConnection) -> None:
        # In the MCP loop: the host's registry is changed in the host's own loop.
        loop = self._host_loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._apply_tools, connection.name)

    def _apply_tools(self, server: str) -> None:
        host = self._host() if self._host is not None else None
        if host is None:
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
        self._registered_from[server] = self.connections[server].tools

    # -- closing -------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close every server (processes ended, sessions released) and stop the MCP loop."""
        if self.thread.running:
            with contextlib.suppress(Exception):
                await self.thread.run(_close_all(list(self.connections.values())))
        self.thread.stop()
        self._finalizer.detach()

    def close(self) -> None:
        """:meth:`aclose` from synchronous code."""
        self._finalizer()


async def _close_all(connections: list[ServerConnection]) -> None:
    await asyncio.gather(*(c.aclose() for c in connections), return_exceptions=True)


def _close_at_exit(thread: LoopThread, connections: list[ServerConnection]) -> None:
    if thread.running:
        with contextlib.suppress(Exception):
            thread.run_sync(_close_all(connections), timeout=CLOSE_TIMEOUT + 1.0)
    thread.stop()
