"""Safe retrieval of model-chosen URLs: the only way network tools should fetch.

``import toolwire`` does not import this package (it pulls in aiohttp); ``import toolwire.net``
does. One call does the work::

    policy = toolwire.net.RetrievalPolicy(private_hosts=["intranet.local"])
    page = await toolwire.net.fetch("https://example.org/", policy=policy)
    page.text()

What ``fetch`` guarantees, hop by hop (the URL asked for and every redirect target):

- http and https only, parsed once by the client's own parser (yarl); control characters,
  backslashes, whitespace or ``%`` in the host, and ``user@host`` are refused;
- a host written as an IPv4 address must be a dotted quad (``127.1``, ``2130706433`` or
  ``0x7f000001`` are refused, naming the address they stand for);
- the port must be in ``allowed_ports`` (80, 443, 8080, 8443 by default);
- a host name is resolved once (``getaddrinfo``) and **every** address must be global unicast:
  not loopback, private, link-local, carrier-grade NAT, multicast, reserved, unspecified,
  benchmarking, documentation, site-local or unique-local, with IPv4 inside IPv6 (mapped,
  compatible, 6to4, Teredo, NAT64) judged as IPv4; the connection goes to those addresses only,
  with no second lookup, and the TLS server name and ``Host`` stay the URL's host;
- hosts listed in ``private_hosts`` may resolve to anything;
- redirects are followed by hand, at most ``max_redirects``;
- a non-text Content-Type is refused when the headers arrive, before the body is read;
- the body is decompressed (gzip, deflate) with its decoded size capped at ``max_bytes``; a
  longer body is cut there and marked ``truncated`` rather than refused;
- HTTP 4xx and 5xx are errors (:class:`RetrievalError` with ``status``), not results.

A refusal raises :class:`RetrievalBlocked`; every other failure :class:`RetrievalError`.

Intranet sites that want the operating system's sign-in (``WWW-Authenticate: Negotiate``) get a
token from the :class:`NegotiateTokens` source passed as ``fetch(..., sign_in=...)``, only for
hosts in ``negotiate_hosts``, only over https, and only when every address the host resolved to
is non-public; ``within`` keeps every hop inside one base address, and ``ca_file`` adds an
organisation's certificate authorities.

Servers toolwire runs on loopback (the web chat, ``toolwire mcp serve --http``) answer only the
``Host`` and ``Origin`` values :func:`loopback_authorities` and :func:`loopback_origins` give,
their guard against DNS rebinding.
"""

from ._errors import RetrievalBlocked, RetrievalError
from ._fetch import Retrieved, fetch, open_session
from ._loopback import is_loopback, loopback_authorities, loopback_origins
from ._policy import DEFAULT_PORTS, RetrievalPolicy
from ._signin import NegotiateTokens, SignInUnavailable

__all__ = [
    "DEFAULT_PORTS",
    "NegotiateTokens",
    "RetrievalBlocked",
    "RetrievalError",
    "RetrievalPolicy",
    "Retrieved",
    "SignInUnavailable",
    "fetch",
    "is_loopback",
    "loopback_authorities",
    "loopback_origins",
    "open_session",
]
