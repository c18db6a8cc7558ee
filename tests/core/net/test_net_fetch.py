"""fetch against loopback servers: redirects, rebinding, the private-host allowlist, caps, types."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import functools
import gzip
import pathlib
import socket
import ssl
import tracemalloc
import zlib
from collections.abc import Iterator
from urllib.parse import quote

import aiohttp
import pytest
from aiohttp import web
from loopback_net import PUBLIC_V4, Network, RawServerFactory, Server, ServerFactory
from yarl import URL

import toolwire.net as net
from toolwire.net import RetrievalBlocked, RetrievalError, RetrievalPolicy

BOMB_SIZE = 32 * 1024 * 1024


@functools.cache
def bomb() -> bytes:
    """A gzip body of BOMB_SIZE zero bytes, a few hundred kilobytes on the wire."""
    compressor = zlib.compressobj(1, wbits=31)
    block = bytes(1024 * 1024)
    chunks = [compressor.compress(block) for _ in range(BOMB_SIZE // len(block))]
    return b"".join(chunks) + compressor.flush()


def site(server: Server) -> web.Application:
    """The pages every test server offers."""
    routes = web.RouteTableDef()

    @routes.get("/page")
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<p>hello</p>", content_type="text/html")

    @routes.get("/redirect")
    async def redirect(request: web.Request) -> web.Response:
        status = int(request.query.get("status", "302"))
        return web.Response(status=status, headers={"Location": request.query["to"]})

    @routes.get("/hops/{n}")
    async def hops(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        status = int(request.query["status"])
        location = f"/hops/{n - 1}?status={status}" if n else f"//{request.host}/page"
        return web.Response(status=status, headers={"Location": location})

    @routes.get("/loop/{n}")
    async def loop(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        return web.Response(status=302, headers={"Location": f"/loop/{n + 1}"})

    @routes.get("/big")
    async def big(request: web.Request) -> web.StreamResponse:
        size = int(request.query["size"])
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        if "length" in request.query:
            response.content_length = size
        await response.prepare(request)
        sent = 0
        while sent < size:
            chunk = b"x" * min(16384, size - sent)
            await response.write(chunk)
            sent += len(chunk)
        await response.write_eof()
        return response

    @routes.get("/typed")
    async def typed(request: web.Request) -> web.StreamResponse:
        # Headers and one chunk, then the body stalls until the test ends: a client that read
        # on would time out instead of refusing.
        headers = {}
        if "type" in request.query:
            headers["Content-Type"] = request.query["type"]
        response = web.StreamResponse(headers=headers)
        await response.prepare(request)
        await response.write(b"%PDF-1.7\n" + bytes(1000))
        await server.release.wait()
        return response

    @routes.get("/encoded")
    async def encoded(request: web.Request) -> web.Response:
        kind = request.query["kind"]
        text = b"hello " * 1000
        bodies = {
            "gzip": gzip.compress(text),
            "deflate": zlib.compress(text),
            "rawdeflate": zlib.compress(text, wbits=-15),
            "br": b"\x0b\x02\x80hello\x03",
            "corrupt": b"\x1f\x8b\x08\x00garbage-garbage-garbage",
        }
        encoding = {"rawdeflate": "deflate", "corrupt": "gzip"}.get(kind, kind)
        return web.Response(
            body=bodies[kind],
            headers={"Content-Type": "text/plain", "Content-Encoding": encoding},
        )

    @routes.get("/bomb")
    async def gzip_bomb(request: web.Request) -> web.Response:
        return web.Response(
            body=bomb(),
            headers={"Content-Type": "text/plain", "Content-Encoding": "gzip"},
        )

    @routes.get("/status/{code}")
    async def status(request: web.Request) -> web.Response:
        return web.Response(status=int(request.match_info["code"]), text="error page")

    @routes.get("/latin1")
    async def latin1(request: web.Request) -> web.Response:
        return web.Response(
            body="café".encode("latin-1"),
            headers={"Content-Type": "text/plain; charset=ISO-8859-1"},
        )

    @routes.get("/cookie")
    async def cookie(request: web.Request) -> web.Response:
        response = web.Response(text=request.headers.get("Cookie", "none"))
        response.set_cookie("session", "secret")
        response.headers["X-Internal"] = "1"
        return response

    @routes.get("/slow")
    async def slow(request: web.Request) -> web.Response:
        await server.release.wait()
        return web.Response(text="late")

    @routes.get("/empty")
    async def empty(request: web.Request) -> web.Response:
        return web.Response(status=204)

    app = web.Application()
    app.add_routes(routes)
    return app


def private_port(port: int) -> RetrievalPolicy:
    """A policy listing 127.0.0.1:port as a private host."""
    return RetrievalPolicy(private_hosts=[f"127.0.0.1:{port}"])


def allow(*servers: Server, **options: object) -> RetrievalPolicy:
    """A policy listing each server (127.0.0.1:port) as a private host."""
    hosts = [f"127.0.0.1:{s.port}" for s in servers]
    return RetrievalPolicy(private_hosts=hosts, **options)  # type: ignore[arg-type]


async def public(serve: ServerFactory, network: Network, name: str = "public.test") -> Server:
    """A server that the test network calls ``name`` at a global address, on port 80."""
    server = await serve(site)
    network.answer(name, [PUBLIC_V4])
    network.route(PUBLIC_V4, 80, ("127.0.0.1", server.port))
    return server


# --- the private-host allowlist ------------------------------------------------------------------


async def test_allowlist_admits_exactly_the_listed_loopback_server(serve: ServerFactory) -> None:
    listed = await serve(site)
    other = await serve(site)
    policy = RetrievalPolicy(
        private_hosts=[f"127.0.0.1:{listed.port}"],
        allowed_ports=net.DEFAULT_PORTS | {listed.port, other.port},
    )
    page = await net.fetch(f"{listed.base}/page", policy=policy)
    assert (page.status, page.body, page.content_type) == (200, b"<p>hello</p>", "text/html")

    with pytest.raises(RetrievalBlocked, match=r"address 127\.0\.0\.1 is loopback") as caught:
        await net.fetch(f"{other.base}/page", policy=policy)
    assert "[tools.web] private_hosts" in str(caught.value)
    assert other.hits() == 0


async def test_allowlist_matches_the_host_as_written(
    serve: ServerFactory, network: Network
) -> None:
    server = await serve(site)
    policy = allow(server)
    for alias in (f"http://localhost:{server.port}/page", f"http://[::1]:{server.port}/page"):
        with pytest.raises(RetrievalBlocked):
            await net.fetch(alias, policy=policy)
    assert server.hits() == 0


async def test_allowlisted_name_resolves_to_loopback(
    serve: ServerFactory, network: Network
) -> None:
    server = await serve(site)
    network.answer("intranet.test", ["127.0.0.1"])
    policy = RetrievalPolicy(private_hosts=[f"intranet.test:{server.port}"])
    page = await net.fetch(f"http://intranet.test:{server.port}/page", policy=policy)
    assert page.body == b"<p>hello</p>"
    assert server.requests == [("/page", f"intranet.test:{server.port}")]


async def test_entry_without_port_needs_an_allowed_port(serve: ServerFactory) -> None:
    server = await serve(site)
    with pytest.raises(RetrievalBlocked, match=f"port {server.port} is not allowed"):
        await net.fetch(f"{server.base}/page", policy=RetrievalPolicy(private_hosts=["127.0.0.1"]))
    policy = RetrievalPolicy(
        private_hosts=["127.0.0.1"], allowed_ports=net.DEFAULT_PORTS | {server.port}
    )
    assert (await net.fetch(f"{server.base}/page", policy=policy)).status == 200


# --- public names, rebinding ---------------------------------------------------------------------


async def test_public_name_connects_to_its_checked_address(
    serve: ServerFactory, network: Network
) -> None:
    server = await public(serve, network)
    page = await net.fetch("http://public.test/page", policy=RetrievalPolicy())
    assert page.url == "http://public.test/page"
    assert server.requests == [("/page", "public.test")]
    assert network.connects == [(PUBLIC_V4, 80)]
    assert network.lookups["public.test"] == 1


async def test_public_ipv6_literal_is_fetched(serve: ServerFactory, network: Network) -> None:
    server = await serve(site)
    network.route("2606:4700:4700::1111", 80, ("::1", server.port))
    try:
        page = await net.fetch("http://[2606:4700:4700::1111]/page", policy=RetrievalPolicy())
    except RetrievalError as exc:  # the sandbox may lack an IPv6 loopback
        pytest.skip(f"no IPv6 loopback: {exc}")
    assert page.body == b"<p>hello</p>"
    assert network.connects == [("2606:4700:4700::1111", 80)]


async def test_rebinding_connects_to_the_first_checked_answer(
    serve: ServerFactory, network: Network
) -> None:
    server = await serve(site)
    network.answer("rebind.test", [PUBLIC_V4], ["127.0.0.1"])
    network.route(PUBLIC_V4, 80, ("127.0.0.1", server.port))
    page = await net.fetch("http://rebind.test/page", policy=RetrievalPolicy())
    assert page.status == 200
    assert network.lookups["rebind.test"] == 1
    assert network.connects == [(PUBLIC_V4, 80)]
    assert server.requests == [("/page", "rebind.test")]

    # The next fetch resolves again, once, and now gets the private answer.
    with pytest.raises(RetrievalBlocked, match="resolves to an address that is loopback"):
        await net.fetch("http://rebind.test/page", policy=RetrievalPolicy())
    assert network.lookups["rebind.test"] == 2
    assert server.hits() == 1


async def test_one_private_answer_among_public_ones_refuses_the_host(network: Network) -> None:
    network.answer("multi.test", [PUBLIC_V4, "8.8.8.8", "10.0.0.1"])
    with pytest.raises(RetrievalBlocked, match=r"is private \(10\.0\.0\.0/8\)") as caught:
        await net.fetch("http://multi.test/", policy=RetrievalPolicy())
    assert "10.0.0.1" not in str(caught.value)  # the internal address is not revealed
    assert network.connects == []


async def test_unknown_name_is_an_error(network: Network) -> None:
    with pytest.raises(RetrievalError, match=r"could not resolve host nowhere\.test"):
        await net.fetch("http://nowhere.test/", policy=RetrievalPolicy())
    assert network.connects == []


async def test_tls_server_name_is_the_url_host(network: Network, tmp_path: pathlib.Path) -> None:
    cert, key = _self_signed(tmp_path, "public.test")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    names: list[str | None] = []
    context.sni_callback = lambda sock, name, ctx: names.append(name)

    async def close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(close, "127.0.0.1", 0, ssl=context)
    try:
        network.answer("public.test", [PUBLIC_V4])
        network.route(PUBLIC_V4, 443, ("127.0.0.1", server.sockets[0].getsockname()[1]))
        # The certificate is self-signed, so verification fails; the name sent is what counts.
        with pytest.raises(RetrievalError, match="TLS connection failed") as caught:
            await net.fetch("https://public.test/page", policy=RetrievalPolicy())
    finally:
        server.close()
        await server.wait_closed()
    assert names == ["public.test"]
    assert network.connects == [(PUBLIC_V4, 443)]
    assert not caught.value.retryable


def _self_signed(directory: pathlib.Path, name: str) -> tuple[pathlib.Path, pathlib.Path]:
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


# --- redirects -----------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_redirects_are_followed_and_recorded(
    serve: ServerFactory, network: Network, status: int
) -> None:
    server = await public(serve, network)
    page = await net.fetch(f"http://public.test/hops/2?status={status}", policy=RetrievalPolicy())
    assert (page.url, page.body) == ("http://public.test/page", b"<p>hello</p>")
    assert page.redirects == (
        f"http://public.test/hops/2?status={status}",
        f"http://public.test/hops/1?status={status}",
        f"http://public.test/hops/0?status={status}",
    )
    assert server.hits() == 4


async def test_redirect_from_public_to_loopback_is_refused(
    serve: ServerFactory, network: Network
) -> None:
    await public(serve, network)
    private = await serve(site)
    policy = RetrievalPolicy(allowed_ports=net.DEFAULT_PORTS | {private.port})
    start = "http://public.test/redirect?to=" + quote(f"{private.base}/page", safe="")
    with pytest.raises(RetrievalBlocked, match="is loopback") as caught:
        await net.fetch(start, policy=policy)
    assert caught.value.url == f"{private.base}/page"
    assert caught.value.redirected_from == str(URL(start))
    assert "(redirect from http://public.test/redirect" in str(caught.value)
    assert private.hits() == 0


async def test_redirect_from_allowlisted_server_to_another_loopback_server_is_refused(
    serve: ServerFactory,
) -> None:
    first = await serve(site)
    second = await serve(site)
    policy = allow(first, allowed_ports=net.DEFAULT_PORTS | {second.port})
    with pytest.raises(RetrievalBlocked, match="is loopback"):
        await net.fetch(
            f"{first.base}/redirect?to=" + quote(f"{second.base}/page", safe=""), policy=policy
        )
    assert (first.hits(), second.hits()) == (1, 0)


async def test_redirect_from_public_to_an_allowlisted_private_host_is_refused(
    serve: ServerFactory, network: Network
) -> None:
    await public(serve, network)
    private = await serve(site)
    policy = allow(private)
    start = "http://public.test/redirect?to=" + quote(f"{private.base}/page", safe="")
    with pytest.raises(
        RetrievalBlocked, match=r"may not enter the private host 127\.0\.0\.1"
    ) as caught:
        await net.fetch(start, policy=policy)
    assert caught.value.redirected_from == str(URL(start))
    assert private.hits() == 0
    # Asked for directly, the allowlisted host is reached.
    page = await net.fetch(f"{private.base}/page", policy=policy)
    assert page.body == b"<p>hello</p>"


async def test_redirect_between_private_hosts_and_out_of_them_is_followed(
    serve: ServerFactory, network: Network
) -> None:
    await public(serve, network)
    private = await serve(site)
    policy = allow(private)
    page = await net.fetch(
        f"{private.base}/redirect?to=" + quote(f"{private.base}/page", safe=""), policy=policy
    )
    assert page.body == b"<p>hello</p>"
    page = await net.fetch(
        f"{private.base}/redirect?to=" + quote("http://public.test/page", safe=""), policy=policy
    )
    assert page.url == "http://public.test/page"


async def test_redirect_to_a_private_name_is_refused_without_connecting(
    serve: ServerFactory, network: Network
) -> None:
    await public(serve, network)
    network.answer("private.test", ["10.1.2.3"])
    with pytest.raises(RetrievalBlocked, match=r"host private\.test resolves to an address"):
        await net.fetch(
            "http://public.test/redirect?to=http%3A%2F%2Fprivate.test%2F", policy=RetrievalPolicy()
        )
    assert network.connects == [(PUBLIC_V4, 80)]


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        ("file:///etc/passwd", "scheme 'file' is not allowed"),
        ("ftp://example.com/file", "scheme 'ftp' is not allowed"),
        ("data:text/html,<script>alert(1)</script>", "scheme 'data' is not allowed"),
        ("javascript:alert(1)", "scheme 'javascript' is not allowed"),
        ("gopher://example.com:70/", "scheme 'gopher' is not allowed"),
        ("http://user:pw@public.test/", "credentials are not accepted"),
        ("http://[::1]/", "is loopback"),
        ("http://2130706433/", "legacy numeric form"),
        ("http://169.254.169.254/latest/meta-data/", "is link-local"),
        ("http://public.test:22/", "port 22 is not allowed"),
        ("http://public.test\\@127.0.0.1/", "backslash"),
    ],
)
async def test_redirect_targets_are_checked_like_urls(
    serve: ServerFactory, network: Network, location: str, reason: str
) -> None:
    server = await public(serve, network)
    with pytest.raises(RetrievalBlocked, match=reason):
        await net.fetch(
            "http://public.test/redirect?to=" + quote(location, safe=""),
            policy=RetrievalPolicy(),
        )
    assert server.hits() == 1


async def test_redirect_hop_limit(serve: ServerFactory, network: Network) -> None:
    server = await public(serve, network)
    with pytest.raises(RetrievalBlocked, match=r"too many redirects \(the limit is 5;") as caught:
        await net.fetch("http://public.test/loop/0", policy=RetrievalPolicy())
    assert caught.value.url == "http://public.test/loop/0"
    assert server.hits() == 6

    with pytest.raises(RetrievalBlocked, match=r"too many redirects \(the limit is 0;"):
        await net.fetch("http://public.test/loop/0", policy=RetrievalPolicy(max_redirects=0))
    assert server.hits() == 7


async def test_empty_location_loops_into_the_hop_limit(raw_server: RawServerFactory) -> None:
    port = await raw_server(b"HTTP/1.1 302 Found\r\nLocation: \r\nContent-Length: 0\r\n\r\n")
    with pytest.raises(RetrievalBlocked, match=r"too many redirects \(the limit is 1;"):
        await net.fetch(
            f"http://127.0.0.1:{port}/",
            policy=RetrievalPolicy(private_hosts=[f"127.0.0.1:{port}"], max_redirects=1),
        )


async def test_redirect_without_location_is_an_error(serve: ServerFactory) -> None:
    server = await serve(site)
    with pytest.raises(RetrievalError, match="HTTP 302 redirect with no Location header"):
        await net.fetch(f"{server.base}/status/302", policy=allow(server))


# --- size caps and decompression -----------------------------------------------------------------


@pytest.mark.parametrize("declared", [False, True])
async def test_body_is_cut_at_max_bytes(serve: ServerFactory, declared: bool) -> None:
    server = await serve(site)
    length = "&length=1" if declared else ""
    page = await net.fetch(
        f"{server.base}/big?size=1000000{length}", policy=allow(server, max_bytes=5000)
    )
    assert (len(page.body), page.truncated) == (5000, True)


@pytest.mark.parametrize("declared", [False, True])
async def test_body_of_exactly_max_bytes_is_whole(serve: ServerFactory, declared: bool) -> None:
    server = await serve(site)
    length = "&length=1" if declared else ""
    url = f"{server.base}/big?size=5000{length}"
    page = await net.fetch(url, policy=allow(server, max_bytes=5000))
    assert (len(page.body), page.truncated) == (5000, False)


async def test_decompression_bomb_is_cut_without_inflating(serve: ServerFactory) -> None:
    server = await serve(site)
    policy = allow(server, max_bytes=100_000)
    bomb()
    tracemalloc.start()
    try:
        page = await net.fetch(f"{server.base}/bomb", policy=policy)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (len(page.body), page.truncated) == (100_000, True)
    assert page.body == bytes(100_000)
    assert len(bomb()) < 1_000_000 < BOMB_SIZE
    assert peak < 8 * 1024 * 1024  # far below the 32 MiB the bomb expands to


@pytest.mark.parametrize("kind", ["gzip", "deflate", "rawdeflate"])
async def test_compressed_bodies_are_decoded(serve: ServerFactory, kind: str) -> None:
    server = await serve(site)
    page = await net.fetch(f"{server.base}/encoded?kind={kind}", policy=allow(server))
    assert page.body == b"hello " * 1000
    assert not page.truncated


async def test_compressed_body_cut_at_decoded_size(serve: ServerFactory) -> None:
    server = await serve(site)
    page = await net.fetch(f"{server.base}/encoded?kind=gzip", policy=allow(server, max_bytes=10))
    assert (page.body, page.truncated) == (b"hello hell", True)


@pytest.mark.parametrize(
    ("kind", "reason"),
    [("br", "Content-Encoding 'br' is not supported"), ("corrupt", "compressed body is corrupt")],
)
async def test_undecodable_bodies_are_errors(serve: ServerFactory, kind: str, reason: str) -> None:
    server = await serve(site)
    with pytest.raises(RetrievalError, match=reason):
        await net.fetch(f"{server.base}/encoded?kind={kind}", policy=allow(server))


# --- content types -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        "application/pdf",
        "image/png",
        "image/svg+xml",
        "audio/mpeg",
        "video/mp4",
        "application/zip",
        "application/gzip",
        "application/x-tar",
        "application/octet-stream",
        "font/woff2",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "multipart/form-data; boundary=x",
    ],
)
async def test_binary_content_is_refused_at_the_headers(
    serve: ServerFactory, content_type: str | None
) -> None:
    server = await serve(site)
    url = f"{server.base}/typed?type={quote(content_type)}"
    with pytest.raises(RetrievalBlocked, match="is binary or not text"):
        await net.fetch(url, policy=allow(server, timeout=5.0))


async def test_missing_content_type_is_refused(raw_server: RawServerFactory) -> None:
    port = await raw_server(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
    with pytest.raises(RetrievalBlocked, match="the response has no Content-Type"):
        await net.fetch(
            f"http://127.0.0.1:{port}/", policy=RetrievalPolicy(private_hosts=[f"127.0.0.1:{port}"])
        )


async def test_several_locations_are_an_error(raw_server: RawServerFactory) -> None:
    port = await raw_server(
        b"HTTP/1.1 302 Found\r\nLocation: /a\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n"
    )
    with pytest.raises(RetrievalError, match="several Location headers"):
        await net.fetch(
            f"http://127.0.0.1:{port}/", policy=RetrievalPolicy(private_hosts=[f"127.0.0.1:{port}"])
        )


@pytest.mark.parametrize(
    "content_type",
    [
        "text/html; charset=utf-8",
        "text/plain",
        "text/csv",
        "text/markdown",
        "application/json",
        "application/ld+json",
        "application/xml",
        "application/rss+xml",
        "application/xhtml+xml",
        "application/yaml",
        "application/x-yaml",
    ],
)
async def test_text_content_is_read(serve: ServerFactory, content_type: str) -> None:
    server = await serve(site)
    server.release.set()
    url = f"{server.base}/typed?type={quote(content_type)}"
    page = await net.fetch(url, policy=allow(server))
    assert page.content_type == content_type.split(";")[0]
    assert page.body.startswith(b"%PDF-1.7\n")


async def test_charset_and_text(serve: ServerFactory) -> None:
    server = await serve(site)
    page = await net.fetch(f"{server.base}/latin1", policy=allow(server))
    assert (page.charset, page.text()) == ("iso-8859-1", "café")


async def test_empty_response_needs_no_content_type(serve: ServerFactory) -> None:
    server = await serve(site)
    page = await net.fetch(f"{server.base}/empty", policy=allow(server))
    assert (page.status, page.body, page.content_type) == (204, b"", "")


async def test_headers_are_a_safe_subset_and_cookies_are_not_kept(serve: ServerFactory) -> None:
    server = await serve(site)
    policy = allow(server)
    async with net.open_session(policy) as session:
        first = await net.fetch(f"{server.base}/cookie", policy=policy, session=session)
        second = await net.fetch(f"{server.base}/cookie", policy=policy, session=session)
    assert "set-cookie" not in first.headers
    assert "x-internal" not in first.headers
    assert first.headers["content-type"].startswith("text/plain")
    assert second.body == b"none"


# --- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "retryable"), [(404, False), (403, False), (429, True), (503, True)]
)
async def test_http_error_statuses_are_errors(
    serve: ServerFactory, code: int, retryable: bool
) -> None:
    server = await serve(site)
    with pytest.raises(RetrievalError, match=f"HTTP {code}") as caught:
        await net.fetch(f"{server.base}/status/{code}", policy=allow(server))
    assert (caught.value.status, caught.value.retryable) == (code, retryable)


async def test_not_modified_is_an_error(serve: ServerFactory) -> None:
    server = await serve(site)
    with pytest.raises(RetrievalError, match="HTTP 304 is not a redirect") as caught:
        await net.fetch(f"{server.base}/status/304", policy=allow(server))
    assert caught.value.status == 304


async def test_timeout_is_a_retryable_error(serve: ServerFactory) -> None:
    server = await serve(site)
    with pytest.raises(RetrievalError, match=r"timed out after 0\.2 s") as caught:
        await net.fetch(f"{server.base}/slow", policy=allow(server, timeout=0.2))
    assert caught.value.retryable


async def test_connection_refused_is_a_retryable_error() -> None:
    with (
        closed_port() as port,
        pytest.raises(RetrievalError, match="could not connect") as caught,
    ):
        await net.fetch(f"http://127.0.0.1:{port}/", policy=private_port(port))
    assert caught.value.retryable


# --- sessions ------------------------------------------------------------------------------------


async def test_session_is_reused_across_fetches(serve: ServerFactory, network: Network) -> None:
    server = await public(serve, network)
    policy = RetrievalPolicy()
    async with net.open_session(policy) as session:
        for _ in range(3):
            await net.fetch("http://public.test/page", policy=policy, session=session)
    assert server.hits() == 3
    assert network.connects == [(PUBLIC_V4, 80)]  # one kept-alive connection
    assert network.lookups["public.test"] == 3  # but every fetch checks the name again


async def test_concurrent_fetches_keep_their_own_checked_answers(
    serve: ServerFactory, network: Network
) -> None:
    public_server = await public(serve, network)
    private_server = await serve(site)
    network.answer("private.test", ["127.0.0.1"])
    policy = allow(private_server, allowed_ports=net.DEFAULT_PORTS | {private_server.port})
    async with net.open_session(policy) as session:
        results = await asyncio.gather(
            *(
                net.fetch(url, policy=policy, session=session)
                for url in [
                    "http://public.test/page",
                    f"{private_server.base}/page",
                    f"http://private.test:{private_server.port}/page",
                ]
                * 5
            ),
            return_exceptions=True,
        )
    outcomes = [type(result).__name__ for result in results]
    assert outcomes == ["Retrieved", "Retrieved", "RetrievalBlocked"] * 5
    assert all("is loopback" in str(result) for result in results[2::3])
    assert (public_server.hits(), private_server.hits()) == (5, 5)


async def test_plain_aiohttp_session_is_rejected() -> None:
    async with aiohttp.ClientSession() as session:
        with pytest.raises(TypeError, match=r"must come from toolwire\.net\.open_session"):
            await net.fetch("http://example.com/", policy=RetrievalPolicy(), session=session)


async def test_session_of_another_policy_is_rejected() -> None:
    async with net.open_session(RetrievalPolicy(max_bytes=10)) as session:
        with pytest.raises(ValueError, match="different RetrievalPolicy"):
            await net.fetch("http://example.com/", policy=RetrievalPolicy(), session=session)
        equal = RetrievalPolicy(max_bytes=10)
        with pytest.raises(RetrievalBlocked):  # an equal policy is accepted
            await net.fetch("http://127.0.0.1/", policy=equal, session=session)


async def test_guarded_session_used_directly_reaches_no_private_address(
    serve: ServerFactory, network: Network
) -> None:
    server = await serve(site)
    network.answer("private.test", ["127.0.0.1"])
    async with net.open_session(allow(server)) as session:
        for url in (f"{server.base}/page", f"http://private.test:{server.port}/page"):
            with pytest.raises(aiohttp.ClientConnectorError, match="refused"):
                await session.get(url)
    assert server.hits() == 0
    assert network.connects == []


@contextlib.contextmanager
def closed_port() -> Iterator[int]:
    """A loopback port that is bound but not listening: connections to it are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]
