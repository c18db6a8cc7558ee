"""``ServerConnection``: one configured MCP server, its process or HTTP session, and its tools.

Everything here runs in the host's MCP loop (:class:`~toolwire_mcp._runtime.LoopThread`). A
connection is owned by one task that enters the SDK's transport and session and leaves them
when the connection closes (anyio requires both in the same task); calls come from other
tasks of the same loop.

A server that dies, or whose HTTP session expires, is started again on the next call, at most
``max_reconnects`` times in a row (a call that succeeds resets the count); a call the server
died in is answered with an error, never sent again by itself. A request refused because the
session expired never ran, so it is sent once more on the new session.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

import mcp.types as mt
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from ._guard import ListingGuard
from ._settings import ServerSettings

STDERR_TAIL_BYTES = 2000
CLOSE_TIMEOUT = 8.0  # the SDK's stdio shutdown waits up to 2 s + 2 s + 2 s before giving up
_SDK_CLOSED = "Connection closed"
"""The SDK's own message when the connection closes: a server's error answer may carry the same
code (-32000, implementation-defined in JSON-RPC) with its own message, and is an answer."""

ProgressFn = Callable[[float, float | None, str | None], None]
Asker = Callable[[mt.ElicitRequestParams], Awaitable[mt.ElicitResult | mt.ErrorData]]
"""Puts one elicitation of the server to the person behind the call that caused it."""


class ServerUnavailable(Exception):
    """The server is not running (it failed to start, died or was closed); the message says why
    and ends with the server's stderr tail when it has one."""


class _SessionExpired(Exception):
    """The server answered that it does not know the session (it restarted, or the session
    timed out): the request did not run."""


class ServerConnection:
    """One MCP server of the config, started on :meth:`start` and stopped on :meth:`aclose`.

    ``base_dir`` is the folder of the config file that declares the server: a relative
    ``command`` path and ``cwd`` are taken from it, and the server runs in it when no ``cwd``
    is set. ``auth`` makes the HTTP client's auth (OAuth) for a streamable-HTTP server.
    """

    def __init__(
        self,
        name: str,
        settings: ServerSettings,
        *,
        base_dir: str | None = None,
        on_tools_changed: Callable[[ServerConnection], None] | None = None,
        auth: Callable[[], Any] | None = None,
    ) -> None:
        self.name = name
        self.settings = settings
        self.base_dir = base_dir
        self.status = "not started"
        self.error: str | None = None
        self.tools: tuple[dict[str, Any], ...] = ()
        """The server's latest listing: each tool's JSON object as sent, checked."""
        self.problems: list[str] = []
        """The tools of the latest listing that were left out, each with its reason."""
        self.server_info: mt.Implementation | None = None
        self.reconnects = 0
        """How often the server was started again after it died or lost its session."""
        self._in_a_row = 0
        self._lost = False  # it ran, then died or lost its session: the next call restarts it
        self._session: ClientSession | None = None
        self._owner: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._closing: asyncio.Event | None = None
        self._stderr: TextIO | None = None
        self._refresh: asyncio.Task[None] | None = None
        self._on_tools_changed = on_tools_changed
        self._auth = auth
        self._askers: dict[int, tuple[object, Asker]] = {}
        self._ask_ids = itertools.count()
        self._restart_lock: asyncio.Lock | None = None
        self._guard: ListingGuard | None = None

    def __repr__(self) -> str:
        return f"<MCP server {self.name!r} ({self.settings.transport}, {self.status})>"

    @property
    def command_line(self) -> list[str]:
        """The command and its arguments as run, or the URL of an HTTP server."""
        return self.settings.command_line(self.base_dir)

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the server and list its tools; later calls wait for the first. A server that
        ran and then died, or lost its session, is started again while ``max_reconnects``
        allows.

        :raises ServerUnavailable: the server failed to start or to answer in time.
        """
        if self._lost:
            await self._restart()
        elif self._ready is None:
            await self._spawn()
        elif not self._ready.done():
            with contextlib.suppress(BaseException):
                await asyncio.shield(self._ready)
        if self.status != "running":
            raise ServerUnavailable(self.describe_problem())

    async def _spawn(self) -> None:
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._closing = asyncio.Event()
        self.status = "starting"
        self.error = None
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

    async def _restart(self, why: str | None = None) -> None:
        """Start the server again after it died or lost its session, within the bound."""
        if self._restart_lock is None:
            self._restart_lock = asyncio.Lock()
        async with self._restart_lock:
            if not self._lost:
                return  # another call restarted it meanwhile
            limit = self.settings.max_reconnects
            if self._in_a_row >= limit:
                self.status = "failed"
                self.error = (
                    f"{why or self.error or 'stopped'}; not started again: it was restarted "
                    f"{self._in_a_row} time(s) in a row (max_reconnects = {limit})"
                )
                return
            self._lost = False
            self._in_a_row += 1
            self.reconnects += 1
            await self._stop_owner()
            await self._spawn()

    async def _own(self) -> None:
        assert self._ready is not None
        assert self._closing is not None
        ready, closing = self._ready, self._closing
        guard = self._guard = ListingGuard(self.name, self.settings)
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(
                    ClientSession(
                        guard.reader(read),
                        guard.writer(write),
                        message_handler=self._on_message,
                        elicitation_callback=self._on_elicit,
                        client_info=mt.Implementation(name="toolwire", version=_version()),
                    )
                )
                initialized = await session.initialize()
                self.server_info = initialized.server_info
                self.tools, self.problems = await _list_tools(session, guard)
                self._session = session
                self.status = "running"
                if not ready.done():
                    ready.set_result(None)
                await closing.wait()
                self.status = "closing"
        except asyncio.CancelledError:
            if self.status in ("starting", "running"):
                self._fail("was stopped")
            raise
        except BaseException as exc:  # the server's failure costs only its own tools
            if self.status == "starting" and _closed(exc):
                self._fail("exited, or closed its output, before answering the MCP handshake")
            else:
                program = self.command_line[0] if self.settings.command is not None else None
                self._fail(_describe(exc, program), lost=self.status == "running")
        finally:
            self._session = None
            if self.status == "closing":
                self.status = "closed"
            if not ready.done():
                ready.set_result(None)

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        settings = self.settings
        if settings.command is not None:
            if self._stderr is None:
                # The SDK hands this file to the child as its stderr: it needs a real descriptor.
                self._stderr = tempfile.TemporaryFile(  # noqa: SIM115 - closed in aclose()
                    "w+", encoding="utf-8", errors="replace"
                )
            program, *args = self.command_line
            params = StdioServerParameters(
                command=program,
                args=args,
                env=dict(settings.env) or None,
                cwd=self.settings.working_dir(self.base_dir),
            )
            return stdio_client(params, errlog=self._stderr)
        return _http_transport(settings, self._auth() if self._auth is not None else None)

    async def _stop_owner(self) -> None:
        owner = self._owner
        if owner is None:
            return
        if self._closing is not None:
            self._closing.set()
        try:
            await asyncio.wait_for(asyncio.shield(owner), CLOSE_TIMEOUT)
        except TimeoutError:
            owner.cancel()
            with contextlib.suppress(BaseException):
                await owner
        except BaseException:
            pass

    async def aclose(self) -> None:
        """Stop the server (its process and every child of it) and release the session."""
        if self._refresh is not None:
            self._refresh.cancel()
        self._lost = False
        if self._owner is None:
            self.status = "closed"
            return
        if self.status in ("running", "starting"):
            self.status = "closing"
        await self._stop_owner()
        if self.status in ("closing", "failed"):
            self.status = "closed" if self.status == "closing" else self.status
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- failures ------------------------------------------------------------------------------

    def _fail(self, problem: str, *, lost: bool = False) -> None:
        if self.status in ("failed", "closing", "closed"):
            return
        self.status = "failed"
        self.error = problem
        self._lost = lost

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
        where = " ".join(self.command_line)
        text = f"MCP server {self.name!r} ({where}) {self.error or self.status}"
        tail = self.stderr_tail()
        if tail:
            text += f"; its stderr ends with:\n{tail}"
        return text

    # -- calls ---------------------------------------------------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        progress: ProgressFn | None,
        asker: tuple[object, Asker] | None = None,
    ) -> mt.CallToolResult:
        """Call one of the server's tools by its own name (the server started first when it is
        not running). ``asker`` is ``(whom, ask)``: who elicitations during the call go to.

        A timeout sends MCP cancellation (the SDK does, when a request is abandoned), and so
        does cancelling the awaiting task.

        :raises ServerUnavailable: the server is not running or died during the call.
        :raises TimeoutError: no answer within the server's ``timeout``.
        """
        if self.status != "running" or self._lost:
            await self.start()
        ask_id = next(self._ask_ids)
        if asker is not None:
            self._askers[ask_id] = asker
        try:
            try:
                result = await self._call(name, arguments, progress)
            except _SessionExpired:
                self._lost = True
                await self._restart("lost its session")
                if self.status != "running":
                    raise ServerUnavailable(self.describe_problem()) from None
                result = await self._call(name, arguments, progress)
        finally:
            self._askers.pop(ask_id, None)
        self._in_a_row = 0
        return result

    async def _call(
        self, name: str, arguments: dict[str, Any], progress: ProgressFn | None
    ) -> mt.CallToolResult:
        session = self._session
        if session is None or self.status != "running":
            raise ServerUnavailable(self.describe_problem())
        timeout = self.settings.timeout
        report = progress

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if report is not None:
                report(progress, total, message)

        try:
            result = await asyncio.wait_for(
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
            if exc.code == mt.CONNECTION_CLOSED and exc.message == _SDK_CLOSED:
                self._fail(f"closed the connection during a call of {name!r}", lost=True)
                raise ServerUnavailable(self.describe_problem()) from None
            if _expired(exc):
                raise _SessionExpired(exc.message) from None
            raise
        except TimeoutError:
            raise TimeoutError(
                f"MCP server {self.name!r} did not answer {name!r} within {timeout:g} s"
            ) from None
        except (OSError, EOFError) as exc:
            self._fail(f"failed during a call of {name!r}: {_describe(exc)}", lost=True)
            raise ServerUnavailable(self.describe_problem()) from None
        if not isinstance(result, mt.CallToolResult):
            raise ServerUnavailable(
                f"MCP server {self.name!r} answered {name!r} with a {type(result).__name__}, "
                "not a tool result"
            )
        if self._refresh is not None and not self._refresh.done():
            # A list change announced during the call applies from the next round on.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._refresh), self.settings.startup_timeout)
        return result

    async def refresh(self) -> None:
        """List the server's tools again (started first when it is not running)."""
        if self.status != "running" or self._session is None:
            await self.start()
            return
        await self._refresh_tools()

    # -- from the server -----------------------------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mt.ToolListChangedNotification):
            self._refresh = asyncio.get_running_loop().create_task(self._refresh_tools())

    async def _on_elicit(
        self, context: Any, params: mt.ElicitRequestParams
    ) -> mt.ElicitResult | mt.ErrorData:
        whom = {id(who): ask for who, ask in self._askers.values()}
        if len(whom) != 1:
            reason = (
                "no call of toolwire's is running on it"
                if not self._askers
                else f"{len(whom)} calls from different conversations are running on it"
            )
            return mt.ErrorData(
                code=mt.INVALID_REQUEST,
                message=f"toolwire cannot put this question to anyone: {reason}",
            )
        (ask,) = whom.values()
        return await ask(params)

    async def _refresh_tools(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            self.tools, self.problems = await asyncio.wait_for(
                _list_tools(session, self._guard), self.settings.startup_timeout
            )
        except Exception as exc:
            self._fail(f"failed to list its tools after a list change: {_describe(exc)}")
        if self._on_tools_changed is not None:
            self._on_tools_changed(self)


async def _list_tools(
    session: ClientSession, guard: ListingGuard | None
) -> tuple[tuple[dict[str, Any], ...], list[str]]:
    tools: list[dict[str, Any]] = []
    problems: list[str] = []
    cursor: str | None = None
    for _page in range(1000):
        params = mt.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        listing = await session.list_tools(params=params)
        for tool in listing.tools:
            raw = guard.accepted.get(tool.name) if guard is not None else None
            tools.append(raw if raw is not None else tool.model_dump(by_alias=True, mode="json"))
        if guard is not None:
            problems.extend(guard.take_problems())
        cursor = listing.next_cursor
        if not cursor:
            break
    return tuple(tools), problems


@contextlib.asynccontextmanager
async def _http_transport(settings: ServerSettings, auth: Any) -> Any:
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
        httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth) as client,
        streamable_http_client(str(settings.url), http_client=client) as streams,
    ):
        yield streams


def _expired(exc: MCPError) -> bool:
    message = (exc.message or "").lower()
    return (
        exc.code == mt.INVALID_REQUEST
        and "session" in message
        and ("not found" in message or "terminated" in message or "expired" in message)
    )


def _closed(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _closed(exc.exceptions[0])
    return isinstance(exc, MCPError) and exc.code == mt.CONNECTION_CLOSED


def _describe(exc: BaseException, program: str | None = None) -> str:
    """What went wrong, for the server's status; ``program`` is the command a stdio server is
    started with (a missing one is told where it was looked for)."""
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0], program)
    if isinstance(exc, ServerUnavailable) or type(exc).__name__ == "SignInNeeded":
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        missing = f"could not be started: {exc.strerror}: {exc.filename!r}"
        if program is None or exc.filename != program:
            return missing  # the working folder, say
        if os.sep in program:
            return f"{missing} (a relative command is taken from the config file's folder)"
        return (
            f"{missing} (looked up on PATH; give command as a full path, or run toolwire where "
            "PATH finds it, for example with the environment that installed it activated)"
        )
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
