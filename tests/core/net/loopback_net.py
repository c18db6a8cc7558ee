"""The test network of the safe-retrieval tests: a DNS table, routes to loopback, loopback servers.

A test makes a name "public" by giving it a global address in the DNS table and routing
connections to that address to a loopback server. The routing happens in the patched socket
layer of ``conftest.network``, out of reach of the code under test.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import socket
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
from aiohttp import web

PUBLIC_V4 = "93.184.215.14"

REAL_GETADDRINFO = socket.getaddrinfo


@attrs.define
class Network:
    """The test's view of the network: DNS answers, routes, and what was asked of both."""

    dns: dict[str, list[list[str]]] = attrs.field(factory=dict)
    routes: dict[tuple[str, int], tuple[str, int]] = attrs.field(factory=dict)
    lookups: Counter[str] = attrs.field(factory=Counter)
    connects: list[tuple[str, int]] = attrs.field(factory=list)
    violations: list[str] = attrs.field(factory=list)

    def answer(self, name: str, *answers: list[str]) -> None:
        """Answer ``name`` with ``answers[0]`` first, then ``answers[1]``…; the last repeats."""
        self.dns[name] = list(answers)

    def route(self, address: str, port: int, to: tuple[str, int]) -> None:
        """Send connections for ``address``:``port`` to the loopback endpoint ``to``."""
        self.routes[(str(ipaddress.ip_address(address)), port)] = to

    def getaddrinfo(
        self,
        host: str | bytes | None,
        port: str | int | None,
        family: int = 0,
        type: int = 0,
        proto: int = 0,
        flags: int = 0,
    ) -> list[tuple[Any, ...]]:
        name = host.decode() if isinstance(host, bytes) else host
        if name is not None and name in self.dns:
            self.lookups[name] += 1
            sequence = self.dns[name]
            addresses = sequence.pop(0) if len(sequence) > 1 else sequence[0]
            infos: list[tuple[Any, ...]] = []
            for text in addresses:
                address, _, scope = text.partition("%")
                number = int(port or 0)
                if ":" in address:
                    sockaddr: tuple[Any, ...] = (address, number, 0, int(scope or 0))
                    infos.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", sockaddr))
                else:
                    infos.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, number)))
            return infos
        try:
            return REAL_GETADDRINFO(host, port, family, type, proto, flags | socket.AI_NUMERICHOST)
        except socket.gaierror:
            if name is not None and not flags & socket.AI_NUMERICHOST:
                self.lookups[name] += 1
            raise socket.gaierror(
                socket.EAI_NONAME, "Name or service not known (no DNS in tests)"
            ) from None

    def destination(self, address: Any) -> Any:
        host, port = str(address[0]), int(address[1])
        self.connects.append((host, port))
        routed = self.routes.get((str(ipaddress.ip_address(host.split("%")[0])), port))
        if routed is not None:
            return routed if ":" not in routed[0] else (*routed, 0, 0)
        if ipaddress.ip_address(host.split("%")[0]).is_loopback:
            return address
        self.violations.append(f"connection attempted to {host}:{port}")
        raise ConnectionRefusedError(
            errno.ECONNREFUSED, f"test network guard: {host}:{port} is not loopback"
        )


@attrs.define
class Server:
    """A loopback aiohttp server and the requests it received (path and Host header)."""

    port: int
    requests: list[tuple[str, str]]
    release: asyncio.Event

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def hits(self, path: str | None = None) -> int:
        return sum(1 for p, _ in self.requests if path is None or p == path)


ServerFactory = Callable[[Callable[[Server], web.Application]], Awaitable[Server]]
RawServerFactory = Callable[[bytes], Awaitable[int]]
