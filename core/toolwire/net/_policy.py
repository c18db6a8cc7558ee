"""``RetrievalPolicy``: what safe retrieval may reach and how much it reads."""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs
from yarl import URL

from .._version import __version__

DEFAULT_PORTS = frozenset({80, 443, 8080, 8443})
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
DEFAULT_USER_AGENT = f"toolwire/{__version__}"

_ENTRY_HELP = "write a host or host:port, e.g. 'intranet.local' or '127.0.0.1:8081'"
_HOST_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")


def _private_host_entries(value: object) -> tuple[str, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(f"private_hosts must be a list of host or host:port strings, not {value!r}")
    entries: list[str] = []
    for entry in value:
        normalized = _normalize_entry(entry)
        if normalized not in entries:
            entries.append(normalized)
    return tuple(entries)


def _normalize_entry(entry: object) -> str:
    if not isinstance(entry, str):
        raise TypeError(f"private_hosts entry {entry!r} is not a string; {_ENTRY_HELP}")
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
    raise ValueError(f"private_hosts entry {entry!r} is not valid: {problem}; {_ENTRY_HELP}")


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
    :param private_hosts_setting: how refusals name the setting that lists private hosts.
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
    private_hosts_setting: str = "[tools.web] private_hosts"
    _private: frozenset[tuple[str, int | None]] = attrs.field(init=False, eq=False, repr=False)

    @_private.default
    def _parse_private(self) -> frozenset[tuple[str, int | None]]:
        return _parse_entries(self.private_hosts)

    def is_private_host(self, host: str, port: int) -> bool:
        """Whether ``host`` (as written in a URL, lower-case) on ``port`` is listed as private."""
        host = host.rstrip(".")
        return (host, port) in self._private or (host, None) in self._private

    def port_allowed(self, host: str, port: int) -> bool:
        """Whether a URL may name ``port``: an allowed port, or one listed with a private host."""
        return port in self.allowed_ports or (host.rstrip("."), port) in self._private
