"""The address rules: global unicast only, embedded IPv4 judged as IPv4, and URLs that pass."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address, ip_address

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.net import RetrievalPolicy
from toolwire.net._addresses import refusal
from toolwire.net._urls import check_url

GLOBAL = [
    "8.8.8.8",
    "1.1.1.1",
    PUBLIC := "93.184.215.14",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.0.1.255",
    "192.88.98.255",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "2a00:1450:4001::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
    "2001:1::1",
    "2001:3::1",
    "2001:20::1",
    "2607:f8b0::200:5efe:808:808",
]


@pytest.mark.parametrize("text", GLOBAL)
def test_global_unicast_addresses_pass(text: str) -> None:
    assert refusal(ip_address(text)) is None


def test_teredo_client_is_the_inverted_last_32_bits() -> None:
    # Server 65.54.227.120, client 127.0.0.1 (0x7f000001 inverted is 0x80fffffe).
    address = IPv6Address("2001:0:4136:e378:8000:63bf:80ff:fffe")
    assert address.teredo == (IPv4Address("65.54.227.120"), IPv4Address("127.0.0.1"))
    assert refusal(address) == (
        "embeds 127.0.0.1 (Teredo client, 2001::/32), which is loopback (127.0.0.0/8)"
    )


def test_scoped_addresses_are_refused() -> None:
    reason = refusal(IPv6Address("2606:4700:4700::1111%eth0"))
    assert reason is not None
    assert "zone id" in reason


ipv4 = st.integers(0, 2**32 - 1).map(IPv4Address)


@given(ipv4)
def test_everything_ipaddress_calls_non_global_is_refused(address: IPv4Address) -> None:
    if not address.is_global or address.is_multicast or address.is_reserved:
        assert refusal(address) is not None


@given(ipv4)
def test_embedded_ipv4_is_judged_as_ipv4(address: IPv4Address) -> None:
    value = int(address)
    inverted = value ^ 0xFFFFFFFF
    teredo = 0x20010000 << 96
    refused = refusal(address) is not None
    embeddings = {
        "mapped": IPv6Address((0xFFFF << 32) | value),
        "nat64": IPv6Address((0x64FF9B << 96) | value),
        "6to4": IPv6Address((0x2002 << 112) | (value << 80) | 1),
        "teredo client": IPv6Address(teredo | (0x08080808 << 64) | inverted),
        "teredo server": IPv6Address(teredo | (value << 64) | (0x08080808 ^ 0xFFFFFFFF)),
    }
    for form, embedded in embeddings.items():
        assert (refusal(embedded) is not None) is refused, form


@given(st.integers(0, 2**128 - 1).map(IPv6Address))
def test_ipv6_outside_global_unicast_is_refused(address: IPv6Address) -> None:
    value = int(address)
    in_2000_3 = value >> 125 == 1
    mapped_or_nat64 = value >> 32 in (0xFFFF, 0x64FF9B << 64)
    if not in_2000_3 and not mapped_or_nat64:
        assert refusal(address) is not None
    if address.is_multicast or address.is_link_local or address.is_site_local:
        assert refusal(address) is not None


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/",
        "HTTPS://Example.COM/path?q=a b#frag",
        "https://例え.jp/",
        "http://ｅｘａｍｐｌｅ.com/",
        "http://example.com./",
        "http://under_score.example.com/",
        "http://example.com:8080/",
        "https://example.com:8443/",
        "http://example.com:0080/",
        "http://8.8.8.8/",
        f"http://{PUBLIC}/",
        "http://[2606:4700:4700::1111]/",
        "http://[::ffff:8.8.8.8]/",
        "http://[64:ff9b::8.8.8.8]/",
        "http://[2002:808:808::1]/",
        "http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/",
        "http://example.com/?next=http://127.0.0.1/",
        "http://example.com/%2e%2e/%00",
        "http://1.example.com/",
        "http://0x7f000001.example.com/",
    ],
)
def test_urls_that_pass_the_checks(url: str) -> None:
    target = check_url(url, RetrievalPolicy())
    assert target.url.scheme in ("http", "https")
    assert not target.private


def test_ip_literal_target_carries_its_address() -> None:
    target = check_url("http://[::ffff:8.8.8.8]:8080/", RetrievalPolicy())
    # The host is the address's compressed form, which Python 3.13 writes in dotted form for an
    # IPv4-mapped address ("::ffff:8.8.8.8") and earlier versions in hex ("::ffff:808:808").
    assert (target.address, target.port, target.host) == (
        IPv6Address("::ffff:8.8.8.8"),
        8080,
        IPv6Address("::ffff:8.8.8.8").compressed,
    )
    assert check_url("http://example.com/", RetrievalPolicy()).address is None
