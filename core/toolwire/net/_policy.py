"""``RetrievalPolicy``: what safe retrieval may reach and how much it reads."""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs
from yarl import URL

from .._version import __version__

DEFAULT_PORTS = frozenset({80, 443, 8080, 8443})
"""The ports :class:`RetrievalPolicy` allows unless told otherwise."""
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
DEFAULT_USER_AGENT = f"toolwire/{__version__}"

_ENTRY_HELP = "write a host or host:port, e.g. 'intranet.local' or '127.0.0.1:8081'"
_HOST_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")


def _host_entries(value: object, name: str) -> tuple[str, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a list of host or host:port strings, not {value!r}")
    entries: list[str] = []
    for entry in value:
        normalized = _normalize_entry(entry, name)
        if normalized not in entries:
            entries.append(normalized)
    return tuple(entries)


def _private_host_entries(value: object) -> tuple[str, ...]:
    return _host_entries(value, "private_hosts")


def _negotiate_host_entries(value: object) -> tuple[str, ...]:
    return _host_entries(value, "negotiate_hosts")


def _normalize_entry(entry: object, name: str) -> str:
    if not isinstance(entry, str):
        raise TypeError(f"{name} entry {entry!r} is not a string; {_ENTRY_HELP}")
    text = entry.strip()
    if text.count(":") >= 2 and not text.startswith("["):
        text = f"[{text}]"  # a bare IPv6 address
    problem = None
    if not text or any(c in text for c in "/?#@\\%") or any(c.isspace() for c in text):
        problem = "it must be a bare host, without scheme, path, user or '%'"
    else:
        try:
            url = URL(f"http://{text}")
        except (ValueError, UnicodeError) as exc:
            problem = str(exc)
        else:
            host = (url.raw_host or "").rstrip(".")
            if not host or (":" not in host and not _HOST_NAME.fullmatch(host)):
                problem = "it is not a host name or IP address"
            elif url.explicit_port == 0 or (text.endswith(":") and url.explicit_port is None):
                problem = "its port must be between 1 and 65535"
            else:
                shown = f"[{host}]" if ":" in host else host
                return shown if url.explicit_port is None else f"{shown}:{url.explicit_port}"
    raise ValueError(f"{name} entry {entry!r} is not valid: {problem}; {_ENTRY_HELP}")


def _ports(value: object) -> frozenset[int]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(f"allowed_ports must be a list of port numbers, not {value!r}")
    ports = set()
    for port in value:
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            raise ValueError(
                f"allowed_ports entry {port!r} is not a port number; use integers from 1 to 65535"
            )
        ports.add(port)
    return frozenset(ports)


def _parse_entries(entries: tuple[str, ...]) -> frozenset[tuple[str, int | None]]:
    parsed = set()
    for entry in entries:
        url = URL(f"http://{entry}")
        parsed.add(((url.raw_host or "").rstrip("."), url.explicit_port))
    return frozenset(parsed)


def _within(value: object) -> str | None:
    """A ``within`` prefix normalized: ``scheme://host[:port]/path/`` (the path ends in '/')."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"within must be an http:// or https:// URL, not {value!r}")
    problem = None
    try:
        url = URL(value.strip())
    except (ValueError, UnicodeError) as exc:
        problem = str(exc)
    else:
        if url.scheme not in ("http", "https") or not url.raw_host:
            problem = "it must be an http:// or https:// URL with a host"
        elif url.raw_user is not None or url.query_string or url.raw_fragment:
            problem = "it must be a base address, without user, query or fragment"
    if problem is not None:
        raise ValueError(f"within = {value!r} is not valid: {problem}")
    path = url.raw_path if url.raw_path.endswith("/") else f"{url.raw_path}/"
    return str(url.with_path(path, encoded=True))


def _ca_file(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"ca_file must be the path of a PEM file, not {value!r}")
    return value


def _positive(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{attribute.name} must be a positive number, not {value!r}")


@attrs.frozen(kw_only=True)
class RetrievalPolicy:
    """What :func:`toolwire.net.fetch` may reach and how much it reads.

    :param private_hosts: hosts that may resolve to non-global addresses, as ``host`` or
        ``host:port`` (``intranet.local``, ``127.0.0.1:8081``, ``[::1]:8080``). An entry matches
        the URL's host as written (after lower-casing and IDNA), never what it resolves to:
        ``127.0.0.1`` does not admit ``localhost`` or ``127.1``. An entry with a port admits that
        port even when it is not in ``allowed_ports``; an entry without one admits the host on the
        allowed ports.
    :param allowed_ports: ports a URL may name (default 80, 443, 8080, 8443).
    :param max_redirects: redirect hops followed before refusing (0 follows none).
    :param max_bytes: the most body bytes kept, counted after decompression; a longer body is cut
        there and reported with ``truncated=True``.
    :param timeout: seconds for the whole retrieval, redirects included.
    :param connect_timeout: seconds for one TCP (and TLS) connection.
    :param user_agent: the ``User-Agent`` header sent.
    :param negotiate_hosts: hosts (``host`` or ``host:port``, matched like ``private_hosts``)
        for which :func:`toolwire.net.fetch` answers a ``WWW-Authenticate: Negotiate`` challenge
        with the operating system's sign-in, when it is given a token source (``sign_in``).
        A token is sent only over https, only when every address the host resolved to is a
        non-public one (private, loopback, link-local, unique-local), and only to the hop that
        asked; it never follows a redirect.
    :param ca_file: a PEM file of certificate authorities trusted for https besides the
        system's (an organisation's own authority for its intranet).
    :param within: a base address every hop must stay inside (the URL asked for and each
        redirect target): same scheme, host and port, and a path under its path. None allows
        any address the other rules allow.
    :param private_hosts_setting: how refusals name the setting that lists private hosts.
    :param negotiate_hosts_setting: how messages name the setting that lists sign-in hosts.
    """

    private_hosts: tuple[str, ...] = attrs.field(default=(), converter=_private_host_entries)
    allowed_ports: frozenset[int] = attrs.field(default=DEFAULT_PORTS, converter=_ports)
    max_redirects: int = attrs.field(
        default=5, validator=[attrs.validators.instance_of(int), attrs.validators.ge(0)]
    )
    max_bytes: int = attrs.field(
        default=DEFAULT_MAX_BYTES,
        validator=[attrs.validators.instance_of(int), attrs.validators.ge(1)],
    )
    timeout: float = attrs.field(default=30.0, validator=_positive)
    connect_timeout: float = attrs.field(default=10.0, validator=_positive)
    user_agent: str = attrs.field(
        default=DEFAULT_USER_AGENT,
        validator=[
            attrs.validators.instance_of(str),
            attrs.validators.matches_re(r"[\x20-\x7e]+"),
        ],
    )
    negotiate_hosts: tuple[str, ...] = attrs.field(default=(), converter=_negotiate_host_entries)
    ca_file: str | None = attrs.field(default=None, converter=_ca_file)
    within: str | None = attrs.field(default=None, converter=_within)
    private_hosts_setting: str = "[tools.web] private_hosts"
    negotiate_hosts_setting: str = "[tools.web] negotiate_hosts"
    _private: frozenset[tuple[str, int | None]] = attrs.field(init=False, eq=False, repr=False)
    _negotiate: frozenset[tuple[str, int | None]] = attrs.field(init=False, eq=False, repr=False)

    @_private.default
    def _parse_private(self) -> frozenset[tuple[str, int | None]]:
        return _parse_entries(self.private_hosts)

    @_negotiate.default
    def _parse_negotiate(self) -> frozenset[tuple[str, int | None]]:
        return _parse_entries(self.negotiate_hosts)

    def signs_in_to(self, host: str, port: int) -> bool:
        """Whether ``host`` (as written in a URL, lower-case) on ``port`` is listed for
        operating-system sign-in (the other conditions are checked per request)."""
        host = host.rstrip(".")
        return (host, port) in self._negotiate or (host, None) in self._negotiate

    def is_private_host(self, host: str, port: int) -> bool:
        """Whether ``host`` (as written in a URL, lower-case) on ``port`` is listed as private."""
        host = host.rstrip(".")
        return (host, port) in self._private or (host, None) in self._private

    def port_allowed(self, host: str, port: int) -> bool:
        """Whether a URL may name ``port``: an allowed port, or one listed with a private host."""
        return port in self.allowed_ports or (host.rstrip("."), port) in self._private
