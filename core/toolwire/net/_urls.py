"""Checking a URL before anything is resolved: characters, scheme, userinfo, host syntax, port."""

from __future__ import annotations

import functools
import re
import socket
from typing import NoReturn
from urllib.parse import unquote

import attrs
from yarl import URL

from ._addresses import IPAddress, parse_address, refusal
from ._errors import RetrievalBlocked
from ._policy import RetrievalPolicy

MAX_URL_LENGTH = 8000
SCHEMES = frozenset({"http", "https"})

_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f\\]")
_SCHEME_AUTHORITY = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):(?://([^/?#]*))?")
_AUTHORITY_FORBIDDEN = re.compile(r"[%\s]")
_HOST_NAME = re.compile(r"(?=.{1,253}$)[a-z0-9_-]{1,63}(?:\.[a-z0-9_-]{1,63})*\.?")
# WHATWG URL: a host whose last label is a number is an IPv4 address, in any of the legacy forms
# inet_aton accepts (127.1, 2130706433, 0x7f000001, 0177.0.0.1).
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")


@attrs.frozen
class Target:
    """A URL that passed the checks, with what the connection needs to know about it.

    :param url: the parsed URL, handed to the client as is (never parsed again).
    :param host: the host as the client will look it up (lower-case, IDNA-encoded).
    :param port: the port, explicit or the scheme's default.
    :param address: the IP address, when the host is written as one.
    :param private: whether the host is listed in the policy's private hosts.
    """

    url: URL
    host: str
    port: int
    address: IPAddress | None
    private: bool


def _forbidden_character(text: str) -> str | None:
    found = _FORBIDDEN.search(text)
    if found is not None:
        char = found.group()
        if char == "\\":
            return (
                "it contains a backslash, which URL parsers disagree about (browsers read it as "
                "'/'); write it as %5C"
            )
        return f"it contains the control character U+{ord(char):04X}"
    if text and (text[0].isspace() or text[-1].isspace()):
        return "it starts or ends with whitespace"
    return None


def _unparsed_refusal(text: str) -> str | None:
    """Why ``text`` is refused before the URL parser sees it, or None."""
    if not text:
        return "the URL is empty"
    if len(text) > MAX_URL_LENGTH:
        return f"it is longer than {MAX_URL_LENGTH} characters"
    problem = _forbidden_character(text)
    if problem is not None:
        return problem
    match = _SCHEME_AUTHORITY.match(text)
    if match is None:
        return "it has no scheme; only http:// and https:// URLs can be fetched"
    scheme = match.group(1).lower()
    if scheme not in SCHEMES:
        return f"scheme {scheme!r} is not allowed; only http and https URLs can be fetched"
    authority = match.group(2)
    if not authority:
        return "it has no host; write it as http://host/…"
    if "@" in authority:
        return "it names a user before the host ('user@host'); credentials are not accepted"
    found = _AUTHORITY_FORBIDDEN.search(authority)
    if found is None:
        return None
    if found.group() == "%":
        return "its host contains '%'; percent-encoded hosts and IPv6 zone ids are refused"
    return "its host contains whitespace"


def _numeric_host(text: str, host: str, port: int, redirected_from: str | None) -> NoReturn:
    try:
        infos = socket.getaddrinfo(
            host, port, family=socket.AF_INET, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST
        )
    except socket.gaierror:
        infos = []
    address = parse_address(str(infos[0][4][0])) if infos else None
    if address is None:
        reason = f"host {host} is not a valid IPv4 address"
    else:
        reason = (
            f"host {host} is the IPv4 address {address} written in a legacy numeric form; "
            f"only dotted-quad IPv4 addresses (like {address}) are accepted"
        )
        problem = refusal(address)
        if problem is not None:
            reason = f"{reason}, and address {address} {problem}"
    raise RetrievalBlocked(text, reason, redirected_from=redirected_from)


def check_url(text: str, policy: RetrievalPolicy, *, redirected_from: str | None = None) -> Target:
    """Check ``text`` against ``policy`` without resolving or connecting.

    Host names are left to :func:`~toolwire.net._resolver.resolve_checked`; a host written as an
    IP address is judged here.

    :raises RetrievalBlocked: naming the first rule the URL breaks.
    :raises TypeError: ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"url must be a string, not {type(text).__name__}: {text!r}")

    def refuse(reason: str) -> RetrievalBlocked:
        return RetrievalBlocked(text, reason, redirected_from=redirected_from)

    problem = _unparsed_refusal(text)
    if problem is not None:
        raise refuse(problem)
    try:
        url = URL(text)
    except (ValueError, UnicodeError) as exc:
        raise refuse(f"it is not a valid URL ({exc})") from None
    if url.raw_user is not None or url.raw_password is not None:
        raise refuse("it names a user before the host ('user@host'); credentials are not accepted")
    host = url.raw_host
    port = url.port
    if not host or port is None:
        raise refuse("it has no host; write it as http://host/…")

    address: IPAddress | None = None
    if ":" in host:
        address = parse_address(host)
        if address is None:
            raise refuse(f"host [{host}] is not a valid IPv6 address")
    else:
        address = parse_address(host) if host[-1].isdigit() else None  # a canonical dotted quad
        if address is None and not _HOST_NAME.fullmatch(host):
            raise refuse(
                f"host {host!r} is not a valid host name (labels of letters, digits, '-' and '_' "
                "separated by single dots)"
            )
        if address is None and _NUMERIC_LABEL.fullmatch(host.rstrip(".").rsplit(".", 1)[-1]):
            _numeric_host(text, host, port, redirected_from)

    if policy.within is not None:
        problem = _outside(url, policy.within)
        if problem is not None:
            raise refuse(problem)
    if not policy.port_allowed(host, port):
        allowed = ", ".join(str(p) for p in sorted(policy.allowed_ports))
        raise refuse(f"port {port} is not allowed (allowed ports: {allowed})")
    private = policy.is_private_host(host, port)
    if address is not None and not private:
        reason = refusal(address)
        if reason is not None:
            raise refuse(
                f"address {address} {reason}; only global unicast addresses may be fetched "
                f"(add the host to {policy.private_hosts_setting} to allow it)"
            )
    return Target(url, host, port, address, private)


@functools.lru_cache(maxsize=32)
def _base(within: str) -> URL:
    return URL(within)


def _outside(url: URL, within: str) -> str | None:
    """Why ``url`` is not inside the base address ``within``, or None when it is."""
    base = _base(within)
    inside = (url.scheme, url.raw_host, url.port) == (base.scheme, base.raw_host, base.port)
    if not inside or not f"{url.raw_path}/".startswith(base.raw_path):
        return f"it is outside {within}, the only address this retrieval may reach"
    # A dot segment, even encoded or with a ;parameter, may be resolved by the server after
    # the prefix was checked.
    for segment in url.raw_path.split("/"):
        if unquote(segment).split(";", 1)[0] in (".", ".."):
            return f"its path has a '.' or '..' segment, which may leave {within}"
    return None


def check_redirect(current: Target, location: str, policy: RetrievalPolicy) -> Target:
    """Check a redirect's ``Location`` (absolute or relative to ``current``) by the same rules.

    One more rule holds for redirects: a hop from a host that is not private never enters a
    private (allowlisted) one, so a public page cannot steer the fetcher into the hosts the
    allowlist opens.

    :raises RetrievalBlocked: the target breaks a rule; ``redirected_from`` names ``current``.
    """
    origin = str(current.url)
    problem = _forbidden_character(location)
    if problem is not None:
        raise RetrievalBlocked(location, problem, redirected_from=origin)
    try:
        joined = current.url.join(URL(location))
    except (ValueError, UnicodeError) as exc:
        raise RetrievalBlocked(
            location, f"it is not a valid URL ({exc})", redirected_from=origin
        ) from None
    target = check_url(str(joined), policy, redirected_from=origin)
    if target.private and not current.private:
        raise RetrievalBlocked(
            str(joined),
            f"a redirect from {current.host}, which is not a private host, may not enter the "
            f"private host {target.host} ({policy.private_hosts_setting}); ask for the private "
            "address directly",
            redirected_from=origin,
        )
    return target
