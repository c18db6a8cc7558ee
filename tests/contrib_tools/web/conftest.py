"""Fixtures of the web tool tests: a loopback-only socket guard and the loopback servers.

None of the fixtures is autouse; the tool tests ask for them (``pytestmark``), the extraction
tests do not need them.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from web_support import OPEN_HOSTS, Servers, start_servers

_REAL_CONNECT = socket.socket.connect
_REAL_CONNECT_EX = socket.socket.connect_ex
_REAL_GETADDRINFO = socket.getaddrinfo


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Refuse, and record, any connection to a non-loopback address and any DNS lookup.

    A guard that fails would show here before a packet leaves the machine.
    """
    violations: list[str] = []

    def check(address: Any) -> None:
        host = str(address[0]).split("%")[0]
        if not ipaddress.ip_address(host).is_loopback:
            violations.append(f"connection attempted to {host}:{address[1]}")
            raise ConnectionRefusedError(errno.ECONNREFUSED, f"test guard: {host} is not loopback")

    def connect(sock: socket.socket, address: Any) -> None:
        check(address)
        _REAL_CONNECT(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        check(address)
        return _REAL_CONNECT_EX(sock, address)

    def getaddrinfo(
        host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0
    ) -> Any:
        try:
            return _REAL_GETADDRINFO(host, port, family, type, proto, flags | socket.AI_NUMERICHOST)
        except socket.gaierror:
            violations.append(f"DNS lookup attempted for {host!r}")
            raise socket.gaierror(socket.EAI_NONAME, "no DNS in tests") from None

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield violations
    assert violations == [], "the web tools tried to leave loopback"


@pytest.fixture
async def servers() -> AsyncIterator[Servers]:
    """A loopback web site, a fake SearXNG JSON API and a fake Brave Search API."""
    running = await start_servers()
    try:
        yield running
    finally:
        while OPEN_HOSTS:
            await OPEN_HOSTS.pop().aclose()
        await running.close()
