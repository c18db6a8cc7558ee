"""Operating-system sign-in (Negotiate) in fetch: to whom a token goes, and to whom it never goes.

The servers are loopback HTTPS servers with a certificate from a test authority (trustme) that
the policy trusts through ``ca_file``; names resolve through the test network's DNS table, so a
name can have private, public or mixed addresses while the connection stays on loopback.
"""

from __future__ import annotations

import base64
import pathlib
import ssl
import threading
from collections.abc import AsyncIterator, Awaitable, Callable

import attrs
import pytest
from aiohttp import web
from loopback_net import PUBLIC_V4, Network, ServerFactory

import toolwire.net as net
from toolwire.net import RetrievalBlocked, RetrievalError, RetrievalPolicy, SignInUnavailable

trustme = pytest.importorskip("trustme")

PRIVATE_V4 = "10.20.30.40"
OTHER_V4 = "10.20.30.41"


@attrs.define
class Tokens:
    """A token source that records the hosts it was asked for (from worker threads)."""

    asked: list[str] = attrs.Factory(list)
    threads: set[int] = attrs.Factory(set)
    failure: str | None = None

    def token(self, host: str) -> bytes:
        self.asked.append(host)
        self.threads.add(threading.get_ident())
        if self.failure is not None:
            raise SignInUnavailable(self.failure)
        return f"ticket for {host}".encode()


def expected(host: str) -> str:
    return "Negotiate " + base64.b64encode(f"ticket for {host}".encode()).decode()


@attrs.define
class Site:
    port: int
    authorizations: list[str | None]


SiteFactory = Callable[[Callable[[web.Request], Awaitable[web.StreamResponse]]], Awaitable[Site]]


@pytest.fixture
def authority(tmp_path: pathlib.Path) -> tuple[object, str]:
    ca = trustme.CA()
    path = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return ca, str(path)


@pytest.fixture
async def https(authority: tuple[object, str]) -> AsyncIterator[SiteFactory]:
    """Start loopback HTTPS servers whose certificate names the test hosts."""
    ca, _ = authority
    runners: list[web.AppRunner] = []
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("intranet.test", "mixed.test", "other.test", "public.test").configure_cert(  # type: ignore[attr-defined]
        context
    )

    async def start(handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> Site:
        site = Site(port=0, authorizations=[])

        async def record(request: web.Request) -> web.StreamResponse:
            site.authorizations.append(request.headers.get("Authorization"))
            return await handler(request)

        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", record)
        runner = web.AppRunner(app, shutdown_timeout=0.5)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context).start()
        runners.append(runner)
        site.port = runner.addresses[0][1]
        return site

    yield start
    for runner in runners:
        await runner.cleanup()


def challenging(host: str) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """A page that wants the Negotiate token for ``host``."""

    async def handler(request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != expected(host):
            return web.Response(status=401, headers={"WWW-Authenticate": "Negotiate"})
        return web.Response(text="<p>intranet</p>", content_type="text/html")

    return handler


def intranet(network: Network, site: Site, name: str = "intranet.test") -> None:
    """``name`` resolves to one private address, routed to ``site``."""
    network.answer(name, [PRIVATE_V4])
    network.route(PRIVATE_V4, 443, ("127.0.0.1", site.port))


def policy(ca_file: str, *hosts: str, negotiate: tuple[str, ...] | None = None) -> RetrievalPolicy:
    return RetrievalPolicy(
        private_hosts=hosts,
        negotiate_hosts=hosts if negotiate is None else negotiate,
        ca_file=ca_file,
    )


async def test_a_negotiate_challenge_is_answered_once_from_the_sign_in(
    network: Network, https: SiteFactory, authority: tuple[object, str]
) -> None:
    site = await https(challenging("intranet.test"))
    intranet(network, site)
    tokens = Tokens()
    page = await net.fetch(
        "https://intranet.test/wiki", policy=policy(authority[1], "intranet.test"), sign_in=tokens
    )
    assert page.body == b"<p>intranet</p>"
    assert site.authorizations == [None, expected("intranet.test")]
    assert tokens.asked == ["intranet.test"]
    assert threading.get_ident() not in tokens.threads  # made off the event loop
    assert network.lookups["intranet.test"] == 1  # the second request used the checked answer


async def test_no_token_for_a_host_with_a_public_address(
    network: Network, https: SiteFactory, authority: tuple[object, str]
) -> None:
    site = await https(challenging("mixed.test"))
    network.answer("mixed.test", [PRIVATE_V4, PUBLIC_V4])
    network.route(PRIVATE_V4, 443, ("127.0.0.1", site.port))
    network.route(PUBLIC_V4, 443, ("127.0.0.1", site.port))
    tokens = Tokens()
    with pytest.raises(RetrievalError) as caught:
        await net.fetch(
            "https://mixed.test/", policy=policy(authority[1], "mixed.test"), sign_in=tokens
        )
    assert caught.value.status == 401
    assert caught.value.challenges == ("negotiate",)
    assert "mixed.test resolves to a public address" in str(caught.value)
    assert tokens.asked == []
    assert site.authorizations == [None]


async def test_no_token_for_a_public_host(
    network: Network, https: SiteFactory, authority: tuple[object, str]
) -> None:
    site = await https(challenging("public.test"))
    network.answer("public.test", [PUBLIC_V4])
    network.route(PUBLIC_V4, 443, ("127.0.0.1", site.port))
    tokens = Tokens()
    listed = RetrievalPolicy(negotiate_hosts=["public.test"], ca_file=authority[1])
    with pytest.raises(RetrievalError, match="resolves to a public address"):
        await net.fetch("https://public.test/", policy=listed, sign_in=tokens)
    assert (tokens.asked, site.authorizations) == ([], [None])


async def test_no_token_over_plain_http(serve: ServerFactory) -> None:
    def app(server: object) -> web.Application:
        application = web.Application()
        application.router.add_get("/", challenging("127.0.0.1"))
        return application

    server = await serve(app)
    entry = f"127.0.0.1:{server.port}"
    tokens = Tokens()
    with pytest.raises(RetrievalError, match=r"sent only over https") as caught:
        await net.fetch(
            f"{server.base}/",
            policy=RetrievalPolicy(private_hosts=[entry], negotiate_hosts=[entry]),
            sign_in=tokens,
        )
    assert caught.value.status == 401
    assert tokens.asked == []


async def test_no_token_for_a_host_not_listed(
    network: Network, https: SiteFactory, authority: tuple[object, str]
) -> None:
    site = await https(challenging("intranet.test"))
    intranet(network, site)
    tokens = Tokens()
    unlisted = policy(authority[1], "intranet.test", negotiate=())
    with pytest.raises(RetrievalError) as caught:
        await net.fetch("https://intranet.test/", policy=unlisted, sign_in=tokens)
    assert "used only for hosts listed in [tools.web] negotiate_hosts" in str(caught.value)
    assert caught.value.challenges == ("negotiate",)
    assert tokens.asked == []
    # Listed, but nobody gave a sign-in: no token either, and the reason says so.
    with pytest.raises(RetrievalError, match="not available here"):
        await net.fetch("https://intranet.test/", policy=policy(authority[1], "intranet.test"))


async def test_the_token_never_follows_a_redirect(
    network: Network, https: SiteFactory, authority: tuple[object, str]
) -> None:
    async def landing(request: web.Request) -> web.StreamResponse:
        return web.Response(text="landed", content_type="text/plain")

    other = await https(landing)

    async def redirecting(request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != expected("intranet.test"):
            return web.Response(status=401, headers={"WWW-Authenticate": "Negotiate"})
        raise web.HTTPFound("https://other.test/landing")

    first = await https(redirecting)
    network.answer("intranet.test", [PRIVATE_V4])
    network.answer("other.test", [OTHER_V4])
    network.route(PRIVATE_V4, 443, ("127.0.0.1", first.port))
    network.route(OTHER_V4, 443, ("127.0.0.1", other.port))
    tokens = Tokens()
    both = policy(authority[1], "intranet.test", "other.test")
    page = await net.fetch("https://intranet.test/start", policy=both, sign_in=tokens)
    assert (page.url, page.body) == ("https://other.test/landing", b"landed")
    assert first.authorizations == [None, expected("intranet.test")]
    assert other.authorizations == [None]  # it did not ask, so it got nothing
    assert tokens.asked == ["intranet.test"]


async def test_a_token_the_host_refuses_is_an_error(
    network: Network, https: SiteFactory, authority: tuple[object, str]
) -> None:
    site = await https(challenging("someone.else"))
    intranet(network, site)
    with pytest.raises(RetrievalError, match="did not accept the operating-system sign-in"):
        await net.fetch(
            "https://intranet.test/", policy=policy(authority[1], "intranet.test"), sign_in=Tokens()
        )
    assert site.authorizations == [None, expected("intranet.test")]  # asked again once only


async def test_a_sign_in_that_cannot_be_made_names_the_host_and_why(
    network: Network, https: SiteFactory, authority: tuple[object, str]
) -> None:
    site = await https(challenging("intranet.test"))
    intranet(network, site)
    tokens = Tokens(failure="no Kerberos ticket; run kinit")
    with pytest.raises(RetrievalError) as caught:
        await net.fetch(
            "https://intranet.test/", policy=policy(authority[1], "intranet.test"), sign_in=tokens
        )
    assert "operating-system sign-in to intranet.test failed: no Kerberos ticket" in str(
        caught.value
    )
    assert site.authorizations == [None]


async def test_an_unreadable_ca_file_is_named(tmp_path: pathlib.Path) -> None:
    missing = str(tmp_path / "nowhere.pem")
    with pytest.raises(ValueError, match=r"nowhere\.pem"):
        net.open_session(RetrievalPolicy(ca_file=missing))


# --- within -------------------------------------------------------------------------------------


async def test_within_keeps_every_hop_inside_the_base_address(serve: ServerFactory) -> None:
    def app(server: object) -> web.Application:
        application = web.Application()

        async def inside(request: web.Request) -> web.StreamResponse:
            return web.Response(text="inside", content_type="text/plain")

        async def away(request: web.Request) -> web.StreamResponse:
            raise web.HTTPFound("/elsewhere/page")

        async def within(request: web.Request) -> web.StreamResponse:
            raise web.HTTPFound("/wiki/inside")

        application.router.add_get("/wiki/inside", inside)
        application.router.add_get("/wiki/away", away)
        application.router.add_get("/wiki/within", within)
        return application

    server = await serve(app)
    confined = RetrievalPolicy(
        private_hosts=[f"127.0.0.1:{server.port}"], within=f"{server.base}/wiki"
    )
    page = await net.fetch(f"{server.base}/wiki/within", policy=confined)
    assert page.body == b"inside"
    with pytest.raises(RetrievalBlocked, match=r"outside http://127\.0\.0\.1:\d+/wiki/") as caught:
        await net.fetch(f"{server.base}/wiki/away", policy=confined)
    assert caught.value.redirected_from == f"{server.base}/wiki/away"
    assert server.hits("/elsewhere/page") == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://wiki.test/wikiother/page",
        "https://wiki.test/wiki/page",
        "http://wiki.test:8080/wiki/page",
        "http://other.test/wiki/page",
        "http://wiki.test/wiki/%2e%2e/admin",
        "http://wiki.test/wiki/..;/admin",
    ],
)
def test_within_refuses_addresses_outside_before_anything_is_sent(url: str) -> None:
    from toolwire.net._urls import check_url

    confined = RetrievalPolicy(private_hosts=["wiki.test"], within="http://wiki.test/wiki")
    with pytest.raises(RetrievalBlocked, match=r"outside|segment"):
        check_url(url, confined)
    check_url("http://wiki.test/wiki", confined)
    check_url("http://wiki.test/wiki/x/y?q=1", confined)
