"""``ServerConnection``: one configured MCP server, its process or HTTP session, and its tools.

Everything here runs in the host's MCP loop (:class:`~toolwire_mcp._runtime.LoopThread`). A
connection is owned by one task that enters the SDK's transport and session and leaves them
when the connection closes (anyio requires both in the same task); calls come from other
tasks of the same loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Callable
from typing import IO, Any

import mcp.types as mt
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from ._settings import ServerSettings

STDERR_TAIL_BYTES = 2000
CLOSE_TIMEOUT = 8.0  # the SDK's stdio shutdown waits up to 2 s + 2 s + 2 s before giving up

ProgressFn = Callable[[float, float | None, str | None], None]


class ServerUnavailable(Exception):
    """The server is not running (it failed to start, died or was closed); the message says why
    and ends with the server's stderr tail when it has one."""


class ServerConnection:
    """One MCP server of the config, started on :meth:`start` and stopped on :meth:`aclose`."""

    def __init__(
        self,
        name: str,
        settings: ServerSettings,
        *,
        on_tools_changed: Callable[[ServerConnection], None] | None = None,
    ) -> None:
        self.name = name
        self.settings = settings
        self.status = "not started"
        self.error: str | None = None
        self.tools: tuple[mt.Tool, ...] = ()
        self.server_info: mt.Implementation | None = None
        self._session: ClientSession | None = None
        self._owner: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._closing: asyncio.Event | None = None
        self._stderr: IO[str] | None = None
        self._refresh: asyncio.Task[None] | None = None
        self._on_tools_changed = on_tools_changed

    def __repr__(self) -> str:
        return f"<MCP server {self.name!r} ({self.settings.transport}, {self.status})>"

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the server and list its tools, once; later calls wait for the first.

        :raises ServerUnavailable: the server failed to start or to answer in time.
        """
        if self._ready is None:
            loop = asyncio.get_running_loop()
            self._ready = loop.create_future()
            self._closing = asyncio.Event()
            self.status = "starting"
            self._owner = loop.create_task(self._own(), name=f"mcp server {self.name}")
            try:
                await asyncio.wait_for(asyncio.shield(self._ready), self.settings.startup_timeout)
            except TimeoutError:
                self._fail(
                    f"did not answer the MCP handshake and tools/list within "
                    f"{self.settings.startup_timeout:g} s (startup_timeout)"
                )
                self._owner.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(self._owner, CLOSE_TIMEOUT)
        elif not self._ready.done():
            with contextlib.suppress(BaseException):
                await asyncio.shield(self._ready)
        if self.status != "running":
            raise ServerUnavailable(self.describe_problem())

    async def _own(self) -> None:
        assert self._ready is not None
        assert self._closing is not None
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        message_handler=self._on_message,
                        client_info=mt.Implementation(name="toolwire", version=_version()),
                    )
                )
                initialized = await session.initialize()
                self.server_info = initialized.server_info
                self.tools = await _list_tools(session)
                self._session = session
                self.status = "running"
                if not self._ready.done():
                    self._ready.set_result(None)
                await self._closing.wait()
                self.status = "closing"
        except asyncio.CancelledError:
            if self.status in ("starting", "running"):
                self._fail("was stopped")
            raise
        except BaseException as exc:  # the server's failure costs only its own tools
            if self.status == "starting" and _closed(exc):
                self._fail("exited, or closed its output, before answering the MCP handshake")
            else:
                self._fail(_describe(exc))
        finally:
            self._session = None
            if self.status == "closing":
                self.status = "closed"
            if not self._ready.done():
                self._ready.set_result(None)

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        settings = self.settings
        if settings.command is not None:
            # The SDK hands this file to the child as its stderr: it needs a real descriptor.
            self._stderr = tempfile.TemporaryFile(  # noqa: SIM115 - closed in aclose()
                "w+", encoding="utf-8", errors="replace"
            )
            params = StdioServerParameters(
                command=settings.command,
                args=list(settings.args),
                env=dict(settings.env) or None,
                cwd=settings.cwd,
            )
            return stdio_client(params, errlog=self._stderr)
        return _http_transport(settings)

    async def aclose(self) -> None:
        """Stop the server (its process and every child of it) and release the session."""
        if self._refresh is not None:
            self._refresh.cancel()
        owner = self._owner
        if owner is None:
            self.status = "closed"
            return
        if self._closing is not None:
            self._closing.set()
        if self.status in ("running", "starting"):
            self.status = "closing"
        try:
            await asyncio.wait_for(asyncio.shield(owner), CLOSE_TIMEOUT)
        except TimeoutError:
            owner.cancel()
            with contextlib.suppress(BaseException):
                await owner
        except BaseException:
            pass
        if self.status == "closing":
            self.status = "closed"
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- failures ------------------------------------------------------------------------------

    def _fail(self, problem: str) -> None:
        if self.status in ("failed", "closing", "closed"):
            return
        self.status = "failed"
        self.error = problem

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (stdio servers), or ``""``."""
        stream = self._stderr
        if stream is None or stream.closed:
            return ""
        try:
            fd = stream.fileno()
            size = os.fstat(fd).st_size
            start = max(0, size - STDERR_TAIL_BYTES)
            raw = os.pread(fd, STDERR_TAIL_BYTES, start)
        except (OSError, ValueError):
            return ""
        text = raw.decode("utf-8", errors="replace")
        if start > 0 and "\n" in text:
            text = text.split("\n", 1)[1]
        return text.strip()

    def describe_problem(self) -> str:
        """Why the server cannot take calls, with its stderr tail."""
        where = (
            f"{self.settings.command} {' '.join(self.settings.args)}".strip()
            if self.settings.command is not None
            else str(self.settings.url)
        )
        text = f"MCP server {self.name!r} ({where}) {self.error or self.status}"
        tail = self.stderr_tail()
        if tail:
            text += f"; its stderr ends with:\n{tail}"
        return text

    # -- calls ---------------------------------------------------------------------------------

    async def call_tool(
        self, name: str, arguments: dict[str, Any], progress: ProgressFn | None
    ) -> mt.CallToolResult:
        """Call one of the server's tools by its own name.

        A timeout sends MCP cancellation (the SDK does, when a request is abandoned), and so
        does cancelling the awaiting task.

        :raises ServerUnavailable: the server is not running or died during the call.
        :raises TimeoutError: no answer within the server's ``timeout``.
        """
        if self.status == "not started":
            await self.start()
        session = self._session
        if session is None or self.status != "running":
            raise ServerUnavailable(self.describe_problem())
        timeout = self.settings.timeout

        report = progress

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if report is not None:
                report(progress, total, message)

        try:
            result: mt.CallToolResult = await asyncio.wait_for(
                session.call_tool(
                    name,
                    arguments,
                    read_timeout_seconds=timeout,
                    progress_callback=on_progress,
                ),
                timeout + 1.0,
            )
        except MCPError as exc:
            if exc.code == mt.REQUEST_TIMEOUT:
                raise TimeoutError(
                    f"MCP server {self.name!r} did not answer {name!r} within {timeout:g} s"
                ) from None
            if exc.code == mt.CONNECTION_CLOSED:
                self._fail(f"closed the connection during a call of {name!r}")
                raise ServerUnavailable(self.describe_problem()) from None
            raise
        except TimeoutError:
            raise TimeoutError(
                f"MCP server {self.name!r} did not answer {name!r} within {timeout:g} s"
            ) from None
        except (OSError, EOFError) as exc:
            self._fail(f"failed during a call of {name!r}: {_describe(exc)}")
            raise ServerUnavailable(self.describe_problem()) from None
        if self._refresh is not None and not self._refresh.done():
            # A list change announced during the call applies from the next round on.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._refresh), self.settings.startup_timeout)
        return result

    # -- notifications -------------------------------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mt.ToolListChangedNotification):
            self._refresh = asyncio.get_running_loop().create_task(self._refresh_tools())

    async def _refresh_tools(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            self.tools = await asyncio.wait_for(_list_tools(session), self.settings.startup_timeout)
        except Exception as exc:
            self._fail(f"failed to list its tools after a list change: {_describe(exc)}")
        if self._on_tools_changed is not None:
            self._on_tools_changed(self)


async def _list_tools(session: ClientSession) -> tuple[mt.Tool, ...]:
    tools: list[mt.Tool] = []
    cursor: str | None = None
    for _page in range(1000):
        params = mt.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        listing = await session.list_tools(params=params)
        tools.extend(listing.tools)
        cursor = listing.next_cursor
        if not cursor:
            break
    return tuple(tools)


@contextlib.asynccontextmanager
async def _http_transport(settings: ServerSettings) -> Any:
    import httpx2

    headers: dict[str, str] = {}
    for header, variable in settings.headers_env.items():
        value = os.environ.get(variable)
        if value is None:
            raise ServerUnavailable(
                f"headers_env.{header} names the environment variable {variable!r}, which is "
                "not set"
            )
        headers[header] = value
    timeout = httpx2.Timeout(30.0, read=max(300.0, settings.timeout))
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as client,
        streamable_http_client(str(settings.url), http_client=client) as streams,
    ):
        yield streams


def _closed(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _closed(exc.exceptions[0])
    return isinstance(exc, MCPError) and exc.code == mt.CONNECTION_CLOSED


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    if isinstance(exc, ServerUnavailable):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"could not be started: {exc.strerror}: {exc.filename!r}"
    if isinstance(exc, MCPError):
        return f"answered with MCP error {exc.code}: {exc.message}"
    text = str(exc) or type(exc).__name__
    return f"failed: {type(exc).__name__}: {text}"


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("toolwire-mcp")
    except Exception:
        return "0"
