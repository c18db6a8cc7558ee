"""Resolving a host once, checking every answer, and letting the connector use only checked ones."""

from __future__ import annotations

import asyncio
import errno
import functools
import socket
from contextvars import ContextVar
from typing import TYPE_CHECKING

import attrs
from aiohttp.abc import AbstractResolver, ResolveResult

from ._addresses import IPAddress, parse_address, refusal
from ._errors import RetrievalBlocked, RetrievalError
from ._policy import RetrievalPolicy

if TYPE_CHECKING:
    from aiohappyeyeballs import AddrInfoType

_NUMERIC_FLAGS = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV
_FAMILIES = (socket.AF_INET, socket.AF_INET6)


@attrs.frozen
class Checked:
    """The addresses one request may connect to for ``host``:``port``, already checked."""

    host: str
    port: int
    answers: tuple[ResolveResult, ...]
    addresses: frozenset[IPAddress]

    @classmethod
    @functools.lru_cache(maxsize=256)
    def literal(cls, host: str, port: int, address: IPAddress) -> Checked:
        """The answer for a host written as an IP address (the client does not resolve it).

        ``host`` is the address as the URL parser normalized it, which the client connects to.
        """
        family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
        answer = ResolveResult(
            hostname=host, host=host, port=port, family=family, proto=0, flags=_NUMERIC_FLAGS
        )
        return cls(host, port, (answer,), frozenset({address}))


# Set by fetch around each request: the connector's resolver and socket factory read it, so the
# connection goes to the answers fetch checked, without a second lookup (DNS rebinding).
checked_answers: ContextVar[Checked | None] = ContextVar("toolwire_net_checked", default=None)


def _blocked_phrase(reason: str, policy: RetrievalPolicy) -> str:
    return (
        f"{reason}; only global unicast addresses may be fetched "
        f"(add the host to {policy.private_hosts_setting} to allow it)"
    )


async def resolve_checked(
    host: str,
    port: int,
    policy: RetrievalPolicy,
    *,
    url: str,
    private: bool,
    redirected_from: str | None = None,
) -> Checked:
    """Resolve ``host`` once with ``getaddrinfo`` and check every address it returns.

    Unless ``private`` (the host is in the policy's private hosts), a single non-global answer
    refuses the host: an attacker who controls DNS can otherwise mix a private address in.

    :raises RetrievalBlocked: an answer is not a global unicast address.
    :raises RetrievalError: the name does not resolve.
    """
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_ADDRCONFIG
        )
    except socket.gaierror as exc:
        raise RetrievalError(
            url,
            f"could not resolve host {host}: {exc.strerror}",
            retryable=exc.errno == socket.EAI_AGAIN,
        ) from None
    except (OSError, UnicodeError) as exc:
        raise RetrievalError(url, f"could not resolve host {host}: {exc}") from None
    answers: list[ResolveResult] = []
    addresses: set[IPAddress] = set()
    for family, _, proto, _, sockaddr in infos:
        if family not in _FAMILIES:
            continue
        address = parse_address(str(sockaddr[0]).split("%", 1)[0])
        if address is None:
            raise RetrievalBlocked(
                url,
                f"host {host} resolves to {sockaddr[0]!r}, which is not an IP address",
                redirected_from=redirected_from,
            )
        scoped = family == socket.AF_INET6 and len(sockaddr) > 3 and bool(sockaddr[3])
        if not private:
            reason = refusal(address)
            if reason is None and scoped:
                reason = "carries a zone id, which only local addresses use"
            if reason is not None:
                # The address itself stays out of the message: it may describe an internal
                # network to whoever chose the URL.
                raise RetrievalBlocked(
                    url,
                    _blocked_phrase(f"host {host} resolves to an address that {reason}", policy),
                    redirected_from=redirected_from,
                )
        if address in addresses:
            continue
        addresses.add(address)
        answers.append(
            ResolveResult(
                hostname=host,
                host=str(address),
                port=port,
                family=family,
                proto=proto,
                flags=_NUMERIC_FLAGS,
            )
        )
    if not answers:
        raise RetrievalError(url, f"host {host} has no IPv4 or IPv6 address", retryable=True)
    return Checked(host, port, tuple(answers), frozenset(addresses))


class AddressRefused(ConnectionRefusedError):
    """A connection the guarded connector refused before any packet was sent."""


class CheckedResolver(AbstractResolver):
    """The connector's resolver: the answers fetch checked, or a fresh checked lookup.

    Used with the connector's DNS cache off, so every new connection asks it. Outside
    :func:`toolwire.net.fetch` (a guarded session used directly) it resolves and accepts global
    unicast answers only: private hosts are reached through ``fetch``.
    """

    def __init__(self, policy: RetrievalPolicy) -> None:
        self._policy = policy

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """Return the checked answers for ``host``:``port``."""
        checked = checked_answers.get()
        if checked is None or checked.host != host or checked.port != port:
            try:
                checked = await resolve_checked(
                    host, port, self._policy, url=f"http://{host}:{port}/", private=False
                )
            except (RetrievalBlocked, RetrievalError) as exc:
                raise AddressRefused(errno.ECONNREFUSED, str(exc)) from None
        return [
            ResolveResult(**answer)
            for answer in checked.answers
            if not family or answer["family"] == family
        ]

    async def close(self) -> None:
        """Nothing to release: lookups run in the loop's executor."""


def open_checked_socket(addr_info: AddrInfoType) -> socket.socket:
    """The connector's socket factory: a socket only for an address the policy checked.

    Within a fetch the address must be one of that request's checked answers; outside one (a
    guarded session used directly, where a host written as an IP address is never resolved) it
    must be global unicast. This is the last check before ``connect``.
    """
    family, type_, proto, _, sockaddr = addr_info
    address = parse_address(str(sockaddr[0]).split("%", 1)[0])
    checked = checked_answers.get()
    if address is None:
        allowed = False
    elif checked is not None:
        allowed = address in checked.addresses
    else:
        allowed = refusal(address) is None
    if not allowed:
        raise AddressRefused(
            errno.ECONNREFUSED,
            f"refused to connect to {sockaddr[0]}: not an address the retrieval policy checked",
        )
    return socket.socket(family, type_, proto)
