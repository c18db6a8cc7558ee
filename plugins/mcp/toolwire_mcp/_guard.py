"""``ListingGuard``: a server's ``tools/list`` answers checked tool by tool, before the SDK.

The SDK validates a listing whole: one tool it cannot read (a schema without
``"type": "object"``, a field of the wrong type) fails the listing, and every tool of the server
is lost. The guard sits between the transport and the session: it notes the ids of the
``tools/list`` requests the session sends, and in each answer leaves out the tools that are
over the server's schema bounds or that the SDK cannot read, keeping each left-out tool's
reason. The tools it lets through are kept as sent (JSON objects) for the tool-list cache.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

import mcp.types as mt
import pydantic
from mcp.shared.message import SessionMessage
from mcp_types import methods as _methods

from ._settings import ServerSettings

LIST_METHOD = "tools/list"


class ListingGuard:
    """The checks on one connection's listings: wrap the transport's streams with
    :meth:`reader` and :meth:`writer`, then read :attr:`accepted` and :meth:`take_problems`."""

    def __init__(self, server: str, settings: ServerSettings) -> None:
        self.server = server
        self.settings = settings
        self.accepted: dict[str, dict[str, Any]] = {}
        """The last listed JSON object of each tool let through, by the server's name."""
        self._problems: list[str] = []
        self._pending: set[Any] = set()
        self._version = "2025-11-25"

    def reader(self, stream: Any) -> _Reader:
        """The transport's read stream, with listing answers checked."""
        return _Reader(stream, self._inbound)

    def writer(self, stream: Any) -> _Writer:
        """The transport's write stream, with listing requests noted."""
        return _Writer(stream, self._outbound)

    def take_problems(self) -> list[str]:
        """The tools left out since the last call, each with its reason."""
        problems, self._problems = self._problems, []
        return problems

    def _outbound(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, mt.JSONRPCRequest) and message.method == LIST_METHOD:
            self._pending.add(message.id)

    def _inbound(self, item: Any) -> Any:
        if isinstance(item, pydantic.ValidationError) and self._pending:
            item = self._reread(item)
        message = getattr(item, "message", None)
        if not isinstance(message, mt.JSONRPCResponse):
            return item
        version = message.result.get("protocolVersion")
        if isinstance(version, str) and "serverInfo" in message.result:
            self._version = version  # the handshake's answer: listings are read at this revision
        if message.id not in self._pending:
            return item
        self._pending.discard(message.id)
        result = message.result
        tools = result.get("tools")
        if not isinstance(tools, list):
            return item  # the SDK reports a listing without a list of tools
        kept = [entry for index, entry in enumerate(tools) if self._readable(entry, index)]
        checked = message.model_copy(update={"result": {**result, "tools": kept}})
        return SessionMessage(message=checked, metadata=getattr(item, "metadata", None))

    def _reread(self, error: pydantic.ValidationError) -> Any:
        """A line the transport's JSON reader refused (nested past its depth limit), read
        again with Python's reader when it answers a pending listing: the tools too deep for
        the bounds are then left out, and the others kept."""
        errors = error.errors(include_url=False)
        line = errors[0].get("input") if errors else None
        if not isinstance(line, str | bytes):
            return error
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            return error
        if not isinstance(data, dict) or data.get("id") not in self._pending:
            return error
        result = data.get("result")
        if not isinstance(result, dict):
            return error
        tools = result.get("tools")
        if not isinstance(tools, list):
            return error
        shallow = [entry for index, entry in enumerate(tools) if self._within_bounds(entry, index)]
        try:
            message = mt.JSONRPCResponse.model_validate(
                {**data, "result": {**result, "tools": shallow}}, by_name=False
            )
        except pydantic.ValidationError:
            return error
        return SessionMessage(message=message)

    def _within_bounds(self, entry: Any, index: int) -> bool:
        from ._listing import schema_problem

        schema = entry.get("inputSchema") if isinstance(entry, dict) else None
        problem = schema_problem(schema, self.settings)
        if problem is None:
            return True
        name = entry.get("name") if isinstance(entry, dict) else None
        self._problems.append(
            f"MCP server {self.server!r}, tool {name or index + 1!r}: {problem}; the tool is "
            "left out"
        )
        return False

    def _readable(self, entry: Any, index: int) -> bool:
        from ._listing import schema_problem

        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            self._problems.append(
                f"MCP server {self.server!r}: listed tool {index + 1} has no name; it is left out"
            )
            return False
        where = f"MCP server {self.server!r}, tool {name!r}"
        problem = schema_problem(entry.get("inputSchema"), self.settings)
        if problem is None:
            try:
                _methods.validate_server_result(LIST_METHOD, self._version, {"tools": [entry]})
                mt.Tool.model_validate(entry, by_name=False)
            except pydantic.ValidationError as exc:
                problem = f"the MCP SDK cannot read its listing ({_first_error(exc)})"
            except (KeyError, ValueError):
                pass  # a revision the SDK does not know: the SDK decides
        if problem is not None:
            self._problems.append(f"{where}: {problem}; the tool is left out")
            return False
        self.accepted[name] = entry
        return True


def _first_error(exc: pydantic.ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    if not errors:
        return str(exc)
    first = errors[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    more = f"; {len(errors) - 1} more" if len(errors) > 1 else ""
    return f"{where}: {first.get('msg', 'invalid')}{more}"


class _Wrapped:
    """A stream of the transport, wrapped: closing the wrapper closes the stream."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class _Reader(_Wrapped):
    """A read stream whose items pass through ``check`` on their way to the session."""

    def __init__(self, stream: Any, check: Callable[[Any], Any]) -> None:
        super().__init__(stream)
        self._check = check

    async def receive(self) -> Any:
        return self._check(await self._stream.receive())

    def __aiter__(self) -> _Reader:
        return self

    async def __anext__(self) -> Any:
        return self._check(await self._stream.__anext__())


class _Writer(_Wrapped):
    """A write stream whose items are shown to ``note`` before the transport sends them."""

    def __init__(self, stream: Any, note: Callable[[Any], None]) -> None:
        super().__init__(stream)
        self._note = note

    async def send(self, item: Any, /) -> None:
        self._note(item)
        await self._stream.send(item)
