"""``WebSettings``: the ``[tools.web]`` section, and the retrieval policies made from it."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import attrs

from toolwire import TrustLevel

if TYPE_CHECKING:
    from toolwire.net import RetrievalPolicy

SECTION = "[tools.web]"
DEFAULT_BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
BRAVE_MAX_PAGES = 10  # the Brave API serves offsets 0 to 9
BRAVE_MAX_COUNT = 20


# Compiled on first use: the settings are built for every command that enables the plugin.
@functools.cache
def _env_name_pattern() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@functools.cache
def _http_url() -> re.Pattern[str]:
    return re.compile(r"https?://[^\s/?#@\\]+(?:/[^\s\\]*)?", re.IGNORECASE)


def _at_least(minimum: float) -> Any:
    def check(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < minimum
        ):
            raise ValueError(
                f"{SECTION} {attribute.name} = {value!r}: expected a finite number of at least "
                f"{minimum:g}"
            )

    return check


def _trust(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    try:
        TrustLevel.parse(value)
    except ValueError as exc:
        raise ValueError(f"{SECTION} {attribute.name} = {value!r}: {exc}") from None


def _ports(instance: object, attribute: attrs.Attribute[Any], value: tuple[int, ...]) -> None:
    for port in value:
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            raise ValueError(
                f"{SECTION} allowed_ports contains {port!r}: expected port numbers from 1 to 65535"
            )


def _optional_url(instance: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    # The default is valid as written; only a configured value needs the pattern.
    if (
        value is not None
        and value != attribute.default
        and not _http_url().fullmatch(value.strip())
    ):
        raise ValueError(
            f"{SECTION} {attribute.name} = {value!r}: expected an http:// or https:// URL such "
            "as 'http://127.0.0.1:8888'"
        )


def _env_name(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value != attribute.default and not _env_name_pattern().fullmatch(value):
        raise ValueError(
            f"{SECTION} {attribute.name}: expected the NAME of an environment variable (such "
            "as 'BRAVE_API_KEY'), never the key itself"
        )


def _readable_file(instance: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    import os

    if value is not None and (not isinstance(value, str) or not os.path.isfile(value)):
        raise ValueError(
            f"{SECTION} {attribute.name} = {value!r}: expected the path of a PEM file of "
            "certificate authorities that exists"
        )


def _base_url(instance: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is None:
        return
    from yarl import URL

    problem = None
    try:
        url = URL(value.strip()) if isinstance(value, str) else None
    except (ValueError, UnicodeError):
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.raw_host:
        problem = "expected an https:// address such as 'https://wiki.example.org'"
    elif url.raw_user is not None or url.query_string or url.raw_fragment:
        problem = "expected the site's base address, without user, query or fragment"
    if problem is not None:
        raise ValueError(f"{SECTION} {attribute.name} = {value!r}: {problem}")


@attrs.frozen(kw_only=True)
class WebSettings:
    """The settings of the ``web`` plugin (``[tools.web]`` in ``toolwire.toml``).

    :param private_hosts: hosts (``host`` or ``host:port``) that may be reached although they
        resolve to loopback, private or other non-public addresses (see
        :class:`toolwire.net.RetrievalPolicy`). ``read_web_page`` uses them only with providers
        trusted at least ``private_hosts_trust``.
    :param private_hosts_trust: the provider trust level (``low``, ``medium``, ``high``,
        ``self_hosted``) needed before ``read_web_page`` may reach ``private_hosts``.
    :param allowed_ports: ports a URL may name.
    :param max_bytes: the most bytes of a response read (after decompression).
    :param timeout: seconds for one retrieval, redirects included.
    :param convert_timeout: seconds the conversion of one HTML page may take; the converter
        (a child process) is stopped when they run out and the call ends with an error.
    :param max_result_chars: the budget of one page for the model, in characters; a longer page
        is cut (at a paragraph where possible) and says so.
    :param free_address_choice: ``off`` (default): ``read_web_page`` reads only addresses that
        appear word for word in the system prompt, a user message or the successful result of a
        tool that ran; ``on``: the model may choose
        addresses itself.
    :param search_backend: ``searxng``, ``brave``, or none (``web_search`` is then not offered).
    :param searxng_url: the SearXNG instance (its JSON output must be enabled). A private
        SearXNG host must also be listed in ``private_hosts``; it is reached whatever the
        provider's trust, since the address is yours, not the model's.
    :param brave_api_key_env: the name of the environment variable holding the Brave Search API
        key (the key itself never goes in the config).
    :param brave_url: the Brave web-search endpoint.
    :param search_max_pages: the deepest result page ``web_search`` and ``search_confluence``
        serve (at most 10 with Brave).
    :param results_per_page: results shown per page (at most 20 with Brave).
    :param negotiate_hosts: private https hosts (each also in ``private_hosts``) that get the
        operating system's sign-in (Kerberos through HTTP Negotiate) when they ask for it; a
        token is sent only when every address the host resolves to is private.
    :param ca_file: a PEM file of certificate authorities trusted besides the system's (an
        organisation's own authority for its intranet sites).
    :param confluence_url: the base address of a Confluence Data Center site
        (``https://wiki.example.org`` or ``https://intranet.example.org/confluence``); when set,
        ``search_confluence`` is offered. Its host must be in ``private_hosts`` when it
        resolves to private addresses, and in ``negotiate_hosts`` to sign in.
    :param confluence_trust: the provider trust level ``search_confluence`` needs, checked
        when it is offered and again before each search; its results require the same of every
        later provider of the conversation.
    """

    private_hosts: tuple[str, ...] = ()
    private_hosts_trust: str = attrs.field(default="self_hosted", validator=_trust)
    allowed_ports: tuple[int, ...] = attrs.field(default=(80, 443, 8080, 8443), validator=_ports)
    max_bytes: int = attrs.field(default=2 * 1024 * 1024, validator=_at_least(1024))
    timeout: float = attrs.field(default=30.0, validator=_at_least(0.001))
    convert_timeout: float = attrs.field(default=15.0, validator=_at_least(0.001))
    max_result_chars: int = attrs.field(default=20_000, validator=_at_least(500))
    free_address_choice: Literal["off", "on"] = attrs.field(
        default="off", validator=attrs.validators.in_(("off", "on"))
    )
    search_backend: Literal["searxng", "brave", "none"] | None = attrs.field(
        default=None, validator=attrs.validators.in_(("searxng", "brave", "none", None))
    )
    searxng_url: str | None = attrs.field(default=None, validator=_optional_url)
    brave_api_key_env: str = attrs.field(default="BRAVE_API_KEY", validator=_env_name)
    brave_url: str = attrs.field(default=DEFAULT_BRAVE_URL, validator=_optional_url)
    search_max_pages: int = attrs.field(default=5, validator=_at_least(1))
    results_per_page: int = attrs.field(default=10, validator=_at_least(1))
    negotiate_hosts: tuple[str, ...] = ()
    ca_file: str | None = attrs.field(default=None, validator=_readable_file)
    confluence_url: str | None = attrs.field(default=None, validator=_base_url)
    confluence_trust: str = attrs.field(default="high", validator=_trust)

    def __attrs_post_init__(self) -> None:
        if self.private_hosts or self.negotiate_hosts:
            self.full_policy()  # refuses a malformed entry now, naming it
        if self.negotiate_hosts:
            _check_negotiate_hosts(self)
        if self.search_backend == "searxng" and not self.searxng_url:
            raise ValueError(
                f"{SECTION} search_backend = 'searxng' needs searxng_url, the address of the "
                "SearXNG instance (for example 'http://127.0.0.1:8888')"
            )

    @classmethod
    def coerce(cls, value: Any) -> WebSettings:
        """Settings from what the host passed: these settings, a plain mapping, or None."""
        if isinstance(value, WebSettings):
            return value
        if value is None:
            return cls()
        if isinstance(value, Mapping):
            known = {field.name for field in attrs.fields(cls)}
            unknown = sorted(set(value) - known)
            if unknown:
                raise ValueError(
                    f"{SECTION}: unknown key(s) {', '.join(unknown)}; valid keys: "
                    + ", ".join(sorted(known))
                )
            data = dict(value)
            for key in ("private_hosts", "allowed_ports", "negotiate_hosts"):
                if isinstance(data.get(key), list):
                    data[key] = tuple(data[key])
            return cls(**data)
        raise TypeError(f"{SECTION} settings must be a table; got {type(value).__name__}")

    @property
    def backend(self) -> Literal["searxng", "brave"] | None:
        """The configured search backend, None when there is none."""
        return None if self.search_backend in (None, "none") else self.search_backend  # type: ignore[return-value]

    @property
    def trust_needed(self) -> TrustLevel:
        """The provider trust level needed to reach ``private_hosts``."""
        return TrustLevel.parse(self.private_hosts_trust)

    @property
    def confluence_trust_needed(self) -> TrustLevel:
        """The provider trust level ``search_confluence`` needs (and its results require)."""
        return TrustLevel.parse(self.confluence_trust)

    def read_policy(self, provider_trust: TrustLevel) -> RetrievalPolicy:
        """The policy of ``read_web_page`` for a provider trusted ``provider_trust``: the
        private hosts (and sign-in to ``negotiate_hosts``) only for a provider trusted at
        least ``private_hosts_trust``.

        :raises ValueError: an entry of ``private_hosts`` is not a host or ``host:port``.
        """
        applied = provider_trust.satisfies(self.trust_needed)
        return _policy(self, self.private_hosts if applied else ())

    def typed_policy(self, url: str, provider_trust: TrustLevel) -> RetrievalPolicy:
        """The policy of an address a person typed (``toolwire tools call``): as
        :meth:`read_policy`, and the URL's own host and port reachable even when private or
        loopback. The person chose the target; a redirect to another host is checked as
        always.
        """
        from yarl import URL

        base = self.read_policy(provider_trust)
        try:
            parsed = URL(url)
            host, port = parsed.raw_host, parsed.port
        except (ValueError, TypeError):
            return base  # the fetch names what is wrong with it
        if not host or port is None:
            return base
        entry = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            return _policy(self, (*base.private_hosts, entry))
        except ValueError:
            return base

    def full_policy(self) -> RetrievalPolicy:
        """The policy with every private host applied (to tell why a host was refused)."""
        return _policy(self, self.private_hosts)

    def search_policy(self, url: str, *, max_redirects: int = 3) -> RetrievalPolicy:
        """The policy of a search backend at ``url``: private only if listed in private_hosts.

        Only the ``private_hosts`` entries naming the backend's own host apply, so a redirect
        from it cannot reach another private host.
        """
        entries = self._own_entries(self.full_policy().private_hosts, url)
        return _policy(self, entries, max_redirects=max_redirects, negotiate=())

    def confluence_policy(self) -> RetrievalPolicy:
        """The policy of ``search_confluence``: the site's own host private (when listed) and
        signed in to (when listed in ``negotiate_hosts``), every hop inside ``confluence_url``.

        :raises ValueError: no ``confluence_url`` is set.
        """
        url = self.confluence_url
        if url is None:
            raise ValueError(f"{SECTION} confluence_url is not set")
        full = self.full_policy()
        return _policy(
            self,
            self._own_entries(full.private_hosts, url),
            max_redirects=3,
            negotiate=self._own_entries(full.negotiate_hosts, url),
            within=url.strip(),
        )

    @staticmethod
    def _own_entries(entries: tuple[str, ...], url: str) -> tuple[str, ...]:
        """The entries of ``entries`` that name the host (and port) of ``url``."""
        from yarl import URL

        parsed = URL(url.strip())
        host = (parsed.raw_host or "").lower()
        port = parsed.port or 0
        return tuple(entry for entry in entries if _entry_matches(entry, host, port))


def _entry_matches(entry: str, host: str, port: int) -> bool:
    from toolwire.net import RetrievalPolicy

    return RetrievalPolicy(private_hosts=(entry,)).is_private_host(host, port)


@functools.lru_cache(maxsize=64)
def _policy(
    settings: WebSettings,
    private_hosts: tuple[str, ...],
    *,
    max_redirects: int = 5,
    negotiate: tuple[str, ...] | None = None,
    within: str | None = None,
) -> RetrievalPolicy:
    """A policy from the settings; sign-in goes to ``negotiate`` (by default the
    ``negotiate_hosts`` among ``private_hosts``)."""
    from toolwire.net import RetrievalPolicy

    if negotiate is None:
        negotiate = settings.negotiate_hosts if private_hosts else ()
    try:
        return RetrievalPolicy(
            private_hosts=private_hosts,
            allowed_ports=settings.allowed_ports,
            max_bytes=int(settings.max_bytes),
            timeout=float(settings.timeout),
            max_redirects=max_redirects,
            negotiate_hosts=negotiate,
            ca_file=settings.ca_file,
            within=within,
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{SECTION}: {exc}") from None


def _check_negotiate_hosts(settings: WebSettings) -> None:
    """Every ``negotiate_hosts`` entry must also be a private host: sign-in is for the
    intranet, and only private hosts may resolve to private addresses."""
    from yarl import URL

    full = _policy(settings, settings.private_hosts, negotiate=settings.negotiate_hosts)
    for entry in full.negotiate_hosts:
        parsed = URL(f"https://{entry}")
        host, port = (parsed.raw_host or "").lower(), parsed.port or 443
        if not full.is_private_host(host, port):
            raise ValueError(
                f"{SECTION} negotiate_hosts lists {entry!r}, which private_hosts does not: "
                "operating-system sign-in goes only to private hosts; list it in both"
            )
