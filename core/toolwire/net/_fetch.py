"""``fetch``: a model-chosen URL retrieved under a ``RetrievalPolicy``, every hop checked."""

from __future__ import annotations

import asyncio
import functools
import ssl
import zlib
from collections.abc import Mapping
from types import MappingProxyType

import aiohttp
import attrs

from ._body import BodyReader, UnsupportedEncoding, media_type_refusal
from ._errors import RetrievalBlocked, RetrievalError
from ._policy import RetrievalPolicy
from ._resolver import (
    Checked,
    CheckedResolver,
    checked_answers,
    open_checked_socket,
    resolve_checked,
)
from ._signin import (
    NegotiateTokens,
    SignInUnavailable,
    authorization,
    challenge_schemes,
    sign_in_refusal,
)
from ._urls import Target, check_redirect, check_url

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
RETRYABLE_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
SAFE_HEADERS = (
    "cache-control",
    "content-language",
    "content-length",
    "content-location",
    "content-type",
    "date",
    "etag",
    "expires",
    "last-modified",
    "link",
    "x-robots-tag",
)
_ACCEPT = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,text/*;q=0.8,"
    "application/json;q=0.8,*/*;q=0.1"
)
# Bytes read from the wire may exceed the decoded cap a little (headers of compressed formats,
# incompressible data); past this the body is cut even if it decoded to nothing.
_WIRE_SLACK = 64 * 1024


@attrs.frozen(kw_only=True)
class Retrieved:
    """A fetched text response.

    :param url: the final URL, after redirects.
    :param status: the HTTP status (2xx).
    :param content_type: the media type, lower-case, without parameters (``text/html``); empty for
        a response with no body and no Content-Type.
    :param charset: the ``charset`` parameter of the Content-Type, lower-case, if any.
    :param headers: a safe subset of the response headers, names lower-case (content type,
        language, length, location, caching, ``Link``, ``X-Robots-Tag``; never cookies).
    :param body: the body, decompressed, at most the policy's ``max_bytes``.
    :param truncated: whether the body was cut at ``max_bytes``.
    :param redirects: the URLs that answered with a redirect, in order, starting with the URL
        asked for; empty when there was none.
    """

    url: str
    status: int
    content_type: str
    charset: str | None
    headers: Mapping[str, str]
    body: bytes
    truncated: bool
    redirects: tuple[str, ...] = ()

    def text(self) -> str:
        """The body decoded with its charset (UTF-8 when absent or unknown), bad bytes replaced."""
        try:
            return self.body.decode(self.charset or "utf-8", errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


class GuardedConnector(aiohttp.TCPConnector):
    """A TCP connector that resolves through the policy and opens sockets to checked addresses."""

    def __init__(self, policy: RetrievalPolicy) -> None:
        super().__init__(
            resolver=CheckedResolver(policy),
            use_dns_cache=False,
            socket_factory=open_checked_socket,
            ssl=_tls_context(policy.ca_file) if policy.ca_file else True,
        )
        self.policy = policy


@functools.lru_cache(maxsize=8)
def _tls_context(ca_file: str) -> ssl.SSLContext:
    """The system's trusted authorities plus those of ``ca_file``, verified as usual."""
    context = ssl.create_default_context()
    try:
        context.load_verify_locations(cafile=ca_file)
    except (OSError, ssl.SSLError) as exc:
        raise ValueError(
            f"ca_file {ca_file!r} cannot be read as PEM certificate authorities: {exc}"
        ) from None
    return context


def open_session(policy: RetrievalPolicy) -> aiohttp.ClientSession:
    """Open an aiohttp session for :func:`fetch` under ``policy``; close it when done.

    Its connector resolves through the policy with the DNS cache off and opens sockets only to
    checked addresses; it keeps no cookies, ignores proxy environment variables and leaves
    decompression to ``fetch`` (which caps it). Reuse one session for many fetches under the
    same policy. Model-chosen URLs belong in ``fetch``: used directly (``session.get``), the
    session still opens new connections to global unicast addresses only, but applies none of the
    URL, port, content-type and size rules. Call it from a coroutine::

        async with toolwire.net.open_session(policy) as session:
            page = await toolwire.net.fetch(url, policy=policy, session=session)
    """
    return aiohttp.ClientSession(
        connector=GuardedConnector(policy),
        cookie_jar=aiohttp.DummyCookieJar(),
        trust_env=False,
        auto_decompress=False,
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=policy.connect_timeout),
        headers={
            "User-Agent": policy.user_agent,
            "Accept": _ACCEPT,
            "Accept-Encoding": "gzip, deflate",
        },
    )


async def fetch(
    url: str,
    *,
    policy: RetrievalPolicy,
    session: aiohttp.ClientSession | None = None,
    sign_in: NegotiateTokens | None = None,
) -> Retrieved:
    """Fetch a model-chosen ``url`` as text, under ``policy``.

    Every hop (the URL and each redirect target) is checked the same way before anything is sent:
    http or https only, no userinfo, a well-formed host, an allowed port; the host is resolved
    once and every address must be global unicast unless the host is in ``private_hosts``; the
    connection goes to those checked addresses, never to a second lookup. Redirects are followed
    by hand up to ``max_redirects``. A non-text Content-Type is refused before the body is read;
    the body is read up to ``max_bytes`` decoded bytes and cut there (``truncated=True``).

    A hop that answers ``401`` with ``WWW-Authenticate: Negotiate`` is asked once more with a
    token from ``sign_in``, when its host is in the policy's ``negotiate_hosts``, the URL is
    https and every address the host resolved to is non-public; the token goes to that hop
    alone, never to a redirect target.

    :param url: the URL, as the model wrote it.
    :param policy: what may be reached and read.
    :param session: a session from :func:`open_session` with the same policy, reused across
        fetches; without one a session is opened and closed for this call.
    :param sign_in: the operating system's sign-in, for the policy's ``negotiate_hosts``.
    :returns: the final response.
    :raises RetrievalBlocked: a URL, redirect or response the policy refuses.
    :raises RetrievalError: resolution, connection, timeout, malformed response, or an HTTP 4xx or
        5xx status (``status`` and ``retryable`` say which).
    :raises TypeError: ``session`` does not come from :func:`open_session`.
    :raises ValueError: ``session`` was opened for a different policy.
    """
    if session is None:
        async with open_session(policy) as own:
            return await _fetch(url, policy, own, sign_in)
    connector = session.connector
    if not isinstance(connector, GuardedConnector):
        raise TypeError(
            "session must come from toolwire.net.open_session(policy): a plain aiohttp session "
            "resolves names again and connects to unchecked addresses"
        )
    if connector.policy is not policy and connector.policy != policy:
        raise ValueError(
            "session was opened for a different RetrievalPolicy; "
            "open one with toolwire.net.open_session(policy)"
        )
    return await _fetch(url, policy, session, sign_in)


async def _fetch(
    url: str,
    policy: RetrievalPolicy,
    session: aiohttp.ClientSession,
    sign_in: NegotiateTokens | None,
) -> Retrieved:
    target = check_url(url, policy)
    redirects: list[str] = []
    try:
        async with asyncio.timeout(policy.timeout):
            while True:
                hop = await _request(target, policy, session, redirects, sign_in)
                if isinstance(hop, Retrieved):
                    return hop
                redirects.append(str(target.url))
                target = hop
    except TimeoutError:
        raise RetrievalError(
            str(target.url), f"timed out after {policy.timeout:g} s", retryable=True
        ) from None


async def _checked(target: Target, policy: RetrievalPolicy, redirected_from: str | None) -> Checked:
    if target.address is not None:
        return Checked.literal(target.host, target.port, target.address)
    return await resolve_checked(
        target.host,
        target.port,
        policy,
        url=str(target.url),
        private=target.private,
        redirected_from=redirected_from,
    )


async def _request(
    target: Target,
    policy: RetrievalPolicy,
    session: aiohttp.ClientSession,
    redirects: list[str],
    sign_in: NegotiateTokens | None,
) -> Retrieved | Target:
    """One hop: the response, or the checked target of its redirect."""
    url = str(target.url)
    checked = await _checked(target, policy, redirects[-1] if redirects else None)
    token = checked_answers.set(checked)
    headers: dict[str, str] | None = None
    try:
        while True:
            async with session.get(target.url, allow_redirects=False, headers=headers) as response:
                status = response.status
                schemes: tuple[str, ...] = ()
                note = ""
                if status == 401:
                    schemes = challenge_schemes(response.headers.getall("WWW-Authenticate", []))
                    if headers is not None:
                        note = f"; {target.host} did not accept the operating-system sign-in"
                    elif "negotiate" in schemes:
                        refused = sign_in_refusal(target, checked, policy, sign_in)
                        if refused is None and sign_in is not None:
                            headers = {"Authorization": await _token(url, target.host, sign_in)}
                            continue  # the same hop again, on the same checked addresses
                        note = f"; {refused}"
                if status in REDIRECT_STATUSES:
                    return _redirect(target, response, policy, redirects)
                if status >= 400:
                    raise RetrievalError(
                        url,
                        f"HTTP {status} {response.reason or ''}".rstrip() + note,
                        status=status,
                        retryable=status in RETRYABLE_STATUSES,
                        challenges=schemes,
                    )
                if status >= 300:
                    raise RetrievalError(
                        url, f"HTTP {status} is not a redirect that can be followed", status=status
                    )
                return await _read(target, response, policy, redirects)
    except (RetrievalBlocked, RetrievalError):
        raise
    except aiohttp.ClientSSLError as exc:
        raise RetrievalError(url, f"the TLS connection failed ({exc})") from None
    except aiohttp.ClientConnectorError as exc:
        raise RetrievalError(
            url,
            f"could not connect to {target.url.host}:{target.port}: {exc.os_error.strerror or exc}",
            retryable=True,
        ) from None
    except aiohttp.ClientPayloadError as exc:
        raise RetrievalError(url, f"the response body is malformed or cut off ({exc})") from None
    except aiohttp.ClientResponseError as exc:
        raise RetrievalError(url, f"the response is malformed ({exc.message})") from None
    except (aiohttp.ClientError, OSError) as exc:
        raise RetrievalError(url, f"the connection failed ({exc})", retryable=True) from None
    finally:
        checked_answers.reset(token)


async def _token(url: str, host: str, sign_in: NegotiateTokens) -> str:
    """The ``Authorization`` value from ``sign_in`` for ``host``, made in a worker thread."""
    try:
        made = await asyncio.to_thread(sign_in.token, host)
        return authorization(made, host)
    except SignInUnavailable as exc:
        reason = str(exc)
    except Exception as exc:  # a source's own failure costs this retrieval only
        reason = f"{type(exc).__name__}: {exc}"
    raise RetrievalError(
        url,
        f"operating-system sign-in to {host} failed: {reason}",
        status=401,
        challenges=("negotiate",),
    )


def _redirect(
    target: Target,
    response: aiohttp.ClientResponse,
    policy: RetrievalPolicy,
    redirects: list[str],
) -> Target:
    url = str(target.url)
    locations = response.headers.getall("Location", [])
    if len(set(locations)) != 1:
        found = "no Location header" if not locations else "several Location headers"
        raise RetrievalError(url, f"HTTP {response.status} redirect with {found}")
    if len(redirects) >= policy.max_redirects:
        raise RetrievalBlocked(
            redirects[0] if redirects else url,
            f"too many redirects (the limit is {policy.max_redirects}; last hop: {url})",
        )
    return check_redirect(target, locations[0], policy)


async def _read(
    target: Target,
    response: aiohttp.ClientResponse,
    policy: RetrievalPolicy,
    redirects: list[str],
) -> Retrieved:
    url = str(target.url)
    has_type = "Content-Type" in response.headers
    media_type = response.content_type if has_type else ""
    if response.status not in (204, 205) and response.content_length != 0:
        refusal = media_type_refusal(media_type)
        if refusal is not None:
            response.close()
            origin = redirects[-1] if redirects else None
            raise RetrievalBlocked(url, refusal, redirected_from=origin)
    encoding = response.headers.get("Content-Encoding", "")
    length = response.content_length
    if not encoding and length is not None and length <= policy.max_bytes:
        # The parser reads exactly Content-Length bytes: the cap holds without counting.
        body, truncated = await response.read(), False
    else:
        body, truncated = await _read_capped(url, response, encoding, policy.max_bytes)
    headers = response.headers
    return Retrieved(
        url=url,
        status=response.status,
        content_type=media_type,
        charset=response.charset.lower() if has_type and response.charset else None,
        headers=MappingProxyType(
            {name: value for name in SAFE_HEADERS if (value := headers.get(name)) is not None}
        ),
        body=body,
        truncated=truncated,
        redirects=tuple(redirects),
    )


async def _read_capped(
    url: str, response: aiohttp.ClientResponse, encoding: str, limit: int
) -> tuple[bytes, bool]:
    """Read and decode the body as it streams in, stopping at ``limit`` decoded bytes."""
    try:
        reader = BodyReader(encoding, limit)
    except UnsupportedEncoding as exc:
        response.close()
        raise RetrievalError(url, str(exc)) from None
    wire_limit = limit + _WIRE_SLACK
    wire = 0
    try:
        while True:
            chunk = await response.content.readany()
            if not chunk:
                break
            wire += len(chunk)
            if reader.feed(chunk) or wire > wire_limit:
                reader.truncated = True
                response.close()
                break
        return reader.finish(), reader.truncated
    except zlib.error as exc:
        response.close()
        raise RetrievalError(url, f"the compressed body is corrupt ({exc})") from None
