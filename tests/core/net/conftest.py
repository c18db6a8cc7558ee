"""Fixtures of the safe-retrieval tests: a socket guard with a DNS stub, and loopback servers.

Every test here runs under ``network``: a connection to anything but loopback (or a route the
test set up) fails the test before a packet is sent, and ``getaddrinfo`` answers from a table
(numeric hosts are parsed with ``AI_NUMERICHOST``), so no real DNS query happens.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from aiohttp import web
from loopback_net import Network, RawServerFactory, Server, ServerFactory

_REAL_CONNECT = socket.socket.connect
_REAL_CONNECT_EX = socket.socket.connect_ex


@pytest.fixture(autouse=True)
def network(monkeypatch: pytest.MonkeyPatch) -> Iterator[Network]:
    """Guard sockets and stub DNS for every test in this directory."""
    net = Network()
    net.answer("localhost", ["127.0.0.1", "::1"])

    def connect(sock: socket.socket, address: Any) -> None:
        _REAL_CONNECT(sock, net.destination(address))

    def connect_ex(sock: socket.socket, address: Any) -> int:
        return _REAL_CONNECT_EX(sock, net.destination(address))

    monkeypatch.setattr(socket, "getaddrinfo", net.getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    yield net
    assert net.violations == [], "a connection to a non-loopback address was attempted"


@pytest.fixture
async def serve() -> AsyncIterator[ServerFactory]:
    """Start loopback servers (127.0.0.1 and, where available, ::1) on random ports."""
    runners: list[tuple[web.AppRunner, Server]] = []

    async def start(build: Callable[[Server], web.Application]) -> Server:
        server = Server(port=0, requests=[], release=asyncio.Event())
        app = build(server)

        @web.middleware
        async def record(request: web.Request, handler: Any) -> web.StreamResponse:
            server.requests.append((request.path, request.host))
            response: web.StreamResponse = await handler(request)
            return response

        app.middlewares.append(record)
        runner = web.AppRunner(app, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        server.port = runner.addresses[0][1]
        with contextlib.suppress(OSError):  # no IPv6 loopback here
            await web.TCPSite(runner, "::1", server.port).start()
        runners.append((runner, server))
        return server

    yield start
    for runner, server in runners:
        server.release.set()
        await runner.cleanup()


@pytest.fixture
async def raw_server() -> AsyncIterator[RawServerFactory]:
    """Start loopback servers that answer every request with fixed bytes, then close."""
    servers: list[asyncio.Server] = []

    async def start(answer: bytes) -> int:
        async def respond(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(answer)
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(respond, "127.0.0.1", 0)
        servers.append(server)
        port: int = server.sockets[0].getsockname()[1]
        return port

    yield start
    for server in servers:
        server.close()
        await server.wait_closed()
