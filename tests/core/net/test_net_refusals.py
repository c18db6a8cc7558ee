"""URLs an attacker would try: each refused before any connection, literals before any lookup."""

from __future__ import annotations

import pytest
from loopback_net import PUBLIC_V4, Network

import toolwire.net as net
from toolwire.net import RetrievalBlocked, RetrievalPolicy

# (url, a fragment the refusal must contain). Each is refused by the default policy.
REFUSED_LITERALS: list[tuple[str, str]] = [
    # schemes
    ("file:///etc/passwd", "scheme 'file'"),
    ("FILE:///etc/passwd", "scheme 'file'"),
    ("ftp://example.com/", "scheme 'ftp'"),
    ("gopher://example.com:70/_GET", "scheme 'gopher'"),
    ("data:text/html,<script>alert(1)</script>", "scheme 'data'"),
    ("javascript:alert(1)", "scheme 'javascript'"),
    ("ws://example.com/", "scheme 'ws'"),
    ("jar:http://example.com!/", "scheme 'jar'"),
    ("dict://127.0.0.1:11211/", "scheme 'dict'"),
    ("//example.com/", "has no scheme"),
    ("example.com", "has no scheme"),
    ("http:example.com", "has no host"),
    ("http:/example.com/", "has no host"),
    ("http:///etc/passwd", "has no host"),
    ("", "the URL is empty"),
    # userinfo
    ("http://user@example.com/", "credentials"),
    ("http://user:pass@example.com/", "credentials"),
    ("http://@example.com/", "credentials"),
    ("http://example.com@127.0.0.1/", "credentials"),
    ("http://127.0.0.1:80@example.com/", "credentials"),
    ("http://example.com:80@169.254.169.254/", "credentials"),
    # backslashes, whitespace, control characters, percent signs
    ("http://example.com\\@127.0.0.1/", "backslash"),
    ("http://127.0.0.1\\.example.com/", "backslash"),
    ("http://example.com/\\..\\..\\", "backslash"),
    ("http://exa mple.com/", "whitespace"),
    ("http://example.com /", "whitespace"),
    ("http://example.com\u3000/", "whitespace"),
    (" http://example.com/", "whitespace"),
    ("http://example.com/ ", "whitespace"),
    ("http://exa\tmple.com/", "U+0009"),
    ("http://example.com\n.127.0.0.1/", "U+000A"),
    ("http://example.com/\r\nX-Injected: 1", "U+000D"),
    ("http://127.0.0.1\x00.example.com/", "U+0000"),
    ("http://example.com\x7f/", "U+007F"),
    ("http://%31%32%37.0.0.1/", "'%'"),
    ("http://127.0.0.1%2f@example.com/", "credentials"),
    ("http://127.0.0.1%2f.example.com/", "'%'"),
    ("http://exa%6dple.com/", "'%'"),
    ("http://[fe80::1%25eth0]/", "'%'"),
    ("http://[fe80::1%eth0]/", "'%'"),
    ("http://[::1%25lo]/", "'%'"),
    # malformed hosts
    ("http://a..b/", "not a valid host name"),
    ("http://.example.com/", "not a valid host name"),
    ("http://example.com../", "not a valid host name"),
    ("http://exam<ple.com/", "not a valid host name"),
    ("http://[127.0.0.1]/", "not a valid URL"),
    ("http://[::1/", "not a valid URL"),
    ("http://ｅｘａｍｐｌｅ．ｃｏｍ／＠127.0.0.1/", "not a valid URL"),
    ("http://example.com＠127.0.0.1/", "not a valid"),
    ("http://example.com：22/", "not a valid"),
    # ports
    ("http://example.com:22/", "port 22 is not allowed"),
    ("http://example.com:25/", "port 25 is not allowed"),
    ("http://example.com:0/", "port 0 is not allowed"),
    ("http://example.com:6379/", "port 6379 is not allowed"),
    ("https://example.com:65535/", "port 65535 is not allowed"),
    ("http://example.com:99999/", "not a valid URL"),
    ("http://example.com:80a/", "not a valid URL"),
    # IPv4 loopback in every spelling
    ("http://127.0.0.1/", "is loopback"),
    ("http://127.255.255.254:8080/", "is loopback"),
    ("http://127.1/", "legacy numeric form"),
    ("http://127.0.1/", "legacy numeric form"),
    ("http://2130706433/", "legacy numeric form"),
    ("http://0x7f000001/", "legacy numeric form"),
    ("http://0X7F000001/", "legacy numeric form"),
    ("http://0x7f.0x0.0x0.0x1/", "legacy numeric form"),
    ("http://0177.0.0.1/", "legacy numeric form"),
    ("http://0177.1/", "legacy numeric form"),
    ("http://017700000001/", "legacy numeric form"),
    ("http://127.000.000.001/", "legacy numeric form"),
    ("http://127.0.0.1./", "not a valid IPv4 address"),
    ("http://１２７.０.０.１/", "is loopback"),
    ("http://127。0。0。1/", "is loopback"),
    ("http://①②⑦.0.0.1/", "is loopback"),
    ("http://１２７.１/", "legacy numeric form"),
    ("http://1.2.3.4.5/", "not a valid IPv4 address"),
    ("http://0x/", "not a valid IPv4 address"),
    ("http://08.0.0.1/", "not a valid IPv4 address"),
    # a legacy form of a global address is refused too: parsers disagree on it
    ("http://134744072/", "legacy numeric form"),
    ("http://0x08080808/", "legacy numeric form"),
    # unspecified, private, link-local, CGNAT, multicast, reserved, benchmarking, documentation
    ("http://0/", "is unspecified"),
    ("http://0.0.0.0/", "is unspecified"),
    ("http://0.1.2.3/", "'this network'"),
    ("http://10.0.0.1/", "is private (10.0.0.0/8)"),
    ("http://10.255.255.255/", "is private"),
    ("http://172.16.0.1/", "is private (172.16.0.0/12)"),
    ("http://172.31.255.255/", "is private"),
    ("http://192.168.1.1/", "is private (192.168.0.0/16)"),
    ("http://0xc0a80101/", "is private"),
    ("http://3232235777/", "is private"),
    ("http://169.254.169.254/latest/meta-data/", "is link-local"),
    ("http://100.64.0.1/", "carrier-grade NAT"),
    ("http://100.100.100.200/", "carrier-grade NAT"),
    ("http://100.127.255.254/", "carrier-grade NAT"),
    ("http://224.0.0.1/", "is multicast"),
    ("http://239.255.255.250/", "is multicast"),
    ("http://240.0.0.1/", "is reserved"),
    ("http://255.255.255.255/", "limited broadcast"),
    ("http://192.0.0.8/", "IETF protocol assignments"),
    ("http://198.18.0.1/", "benchmarking"),
    ("http://198.19.255.255/", "benchmarking"),
    ("http://192.88.99.1/", "6to4 relay anycast"),
    ("http://192.0.2.1/", "documentation"),
    ("http://198.51.100.7/", "documentation"),
    ("http://203.0.113.9/", "documentation"),
    # IPv6
    ("http://[::1]/", "is loopback (::1)"),
    ("http://[0:0:0:0:0:0:0:1]/", "is loopback"),
    ("http://[::]/", "is unspecified"),
    ("http://[fe80::1]/", "is link-local"),
    ("http://[febf:ffff::1]/", "is link-local"),
    ("http://[fec0::1]/", "is site-local"),
    ("http://[fc00::1]/", "is unique-local"),
    ("http://[fd00:ec2::254]/", "is unique-local"),
    ("http://[ff02::1]/", "is multicast"),
    ("http://[ff0e::1]/", "is multicast"),
    ("http://[2001:db8::1]/", "documentation (2001:db8::/32)"),
    ("http://[3fff::1]/", "documentation (3fff::/20)"),
    ("http://[2001:2::1]/", "benchmarking"),
    ("http://[2001:10::1]/", "ORCHID"),
    ("http://[2001:100::1]/", "IETF protocol assignments"),
    ("http://[100::1]/", "discard-only"),
    ("http://[5f00::1]/", "outside the global unicast range"),
    ("http://[4000::1]/", "outside the global unicast range"),
    ("http://[::ffff:0:127.0.0.1]/", "outside the global unicast range"),
    # IPv4 embedded in IPv6
    ("http://[::ffff:127.0.0.1]/", "IPv4-mapped"),
    ("http://[::ffff:7f00:1]/", "IPv4-mapped"),
    ("http://[0:0:0:0:0:ffff:127.0.0.1]/", "IPv4-mapped"),
    ("http://[::ffff:10.0.0.1]/", "is private"),
    ("http://[::ffff:169.254.169.254]/", "is link-local"),
    ("http://[::127.0.0.1]/", "IPv4-compatible"),
    ("http://[::10.0.0.1]/", "IPv4-compatible"),
    ("http://[::8.8.8.8]/", "deprecated form"),
    ("http://[2002:7f00:1::]/", "6to4"),
    ("http://[2002:a00:1::1]/", "6to4"),
    ("http://[2002:c0a8:101::1]/", "6to4"),
    ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "Teredo client"),
    ("http://[2001:0:a00:1::f7f7:f7f7]/", "Teredo server"),
    ("http://[2001:0:808:808::3f57:fefe]/", "Teredo client"),
    ("http://[64:ff9b::127.0.0.1]/", "NAT64"),
    ("http://[64:ff9b::a9fe:a9fe]/", "is link-local"),
    ("http://[64:ff9b:1::808:808]/", "local-use IPv4/IPv6 translation"),
    ("http://[2607:f8b0::200:5efe:c0a8:101]/", "ISATAP"),
]

# Host names, answered by the test DNS table.
DNS = {
    "localhost.test": ["127.0.0.1"],
    "private.test": ["10.0.0.5"],
    "metadata.test": ["169.254.169.254"],
    "cgnat.test": ["100.100.100.200"],
    "zero.test": ["0.0.0.0"],
    "multicast.test": ["224.0.0.251"],
    "multi.test": [PUBLIC_V4, "8.8.8.8", "192.168.0.10"],
    "multi6.test": ["2606:4700:4700::1111", "fd12:3456::1"],
    "mapped.test": ["::ffff:127.0.0.1"],
    "nat64.test": ["64:ff9b::a9fe:a9fe"],
    "sixtofour.test": ["2002:c0a8:101::1"],
    "teredo.test": ["2001:0:4136:e378:8000:63bf:80ff:fffe"],
    "ula.test": ["fd00:ec2::254"],
    "linklocal6.test": ["fe80::1%2"],
    "scoped.test": ["2606:4700:4700::1111%2"],
}

REFUSED_NAMES: list[tuple[str, str, str]] = [
    ("http://localhost/", "localhost", "is loopback"),
    ("http://LOCALHOST/", "localhost", "is loopback"),
    ("http://localhost./", "localhost.", "is loopback"),
    ("http://ｌｏｃａｌｈｏｓｔ/", "localhost", "is loopback"),
    ("http://localhost.test:8080/", "localhost.test", "is loopback"),
    ("https://private.test/", "private.test", "is private"),
    ("http://metadata.test/latest/meta-data/", "metadata.test", "is link-local"),
    ("http://cgnat.test/", "cgnat.test", "carrier-grade NAT"),
    ("http://zero.test/", "zero.test", "is unspecified"),
    ("http://multicast.test/", "multicast.test", "is multicast"),
    ("http://multi.test/", "multi.test", "is private"),
    ("http://multi6.test/", "multi6.test", "is unique-local"),
    ("http://mapped.test/", "mapped.test", "IPv4-mapped"),
    ("http://nat64.test/", "nat64.test", "NAT64"),
    ("http://sixtofour.test/", "sixtofour.test", "6to4"),
    ("http://teredo.test/", "teredo.test", "Teredo client"),
    ("http://ula.test/", "ula.test", "is unique-local"),
    ("http://linklocal6.test/", "linklocal6.test", "is link-local"),
    ("http://scoped.test/", "scoped.test", "zone id"),
]


def test_the_table_is_long_enough() -> None:
    assert len(REFUSED_LITERALS) + len(REFUSED_NAMES) >= 80


@pytest.mark.parametrize(("url", "reason"), REFUSED_LITERALS)
async def test_refused_without_lookup_or_connection(
    network: Network, url: str, reason: str
) -> None:
    with pytest.raises(RetrievalBlocked) as caught:
        await net.fetch(url, policy=RetrievalPolicy())
    assert reason in caught.value.reason
    assert caught.value.url == url
    assert str(caught.value).startswith("refused ")
    assert network.connects == []
    assert not network.lookups


@pytest.mark.parametrize(("url", "name", "reason"), REFUSED_NAMES)
async def test_refused_after_one_lookup_without_connection(
    network: Network, url: str, name: str, reason: str
) -> None:
    for host, answer in DNS.items():
        network.answer(host, answer)
    network.answer("localhost.", ["127.0.0.1", "::1"])
    with pytest.raises(RetrievalBlocked) as caught:
        await net.fetch(url, policy=RetrievalPolicy())
    assert reason in caught.value.reason
    assert f"host {name} resolves to an address that" in caught.value.reason
    assert "[tools.web] private_hosts" in caught.value.reason
    assert network.lookups == {name: 1}
    assert network.connects == []


def test_refusal_message_names_address_reason_and_setting() -> None:
    error = RetrievalBlocked("http://127.0.0.1/", "address 127.0.0.1 is loopback (127.0.0.0/8); …")
    assert str(error) == "refused http://127.0.0.1/: address 127.0.0.1 is loopback (127.0.0.0/8); …"


async def test_refusal_message_escapes_control_characters() -> None:
    with pytest.raises(RetrievalBlocked) as caught:
        await net.fetch("http://a\x00b/\x1b[2J", policy=RetrievalPolicy())
    assert "\x00" not in str(caught.value)
    assert "\\x00" in str(caught.value)


async def test_refusal_names_the_configured_setting() -> None:
    policy = RetrievalPolicy(private_hosts_setting="[tools.crawler] private_hosts")
    with pytest.raises(RetrievalBlocked, match=r"add the host to \[tools\.crawler\] private_hosts"):
        await net.fetch("http://10.0.0.1/", policy=policy)


async def test_very_long_urls_are_refused() -> None:
    with pytest.raises(RetrievalBlocked, match="longer than 8000 characters") as caught:
        await net.fetch("http://example.com/" + "a" * 8000, policy=RetrievalPolicy())
    assert len(str(caught.value)) < 500


async def test_allowed_ports_can_be_configured(network: Network) -> None:
    policy = RetrievalPolicy(allowed_ports=[443])
    with pytest.raises(RetrievalBlocked, match=r"port 80 is not allowed \(allowed ports: 443\)"):
        await net.fetch("http://example.com/", policy=policy)
    assert not network.lookups


async def test_private_host_entry_admits_only_its_own_port(network: Network) -> None:
    network.answer("intranet.test", ["10.0.0.7"])
    policy = RetrievalPolicy(private_hosts=["intranet.test:8081"])
    with pytest.raises(RetrievalBlocked, match="port 8082 is not allowed"):
        await net.fetch("http://intranet.test:8082/", policy=policy)
    with pytest.raises(RetrievalBlocked, match="is private"):
        await net.fetch("http://intranet.test/", policy=policy)
    assert network.connects == []
