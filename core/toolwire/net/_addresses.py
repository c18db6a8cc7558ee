"""Which IP addresses retrieval may connect to: global unicast only, embedded IPv4 included."""

from __future__ import annotations

import re
import socket
from ipaddress import IPv4Address, IPv6Address, ip_address

IPAddress = IPv4Address | IPv6Address

_DOTTED_QUAD = re.compile(r"(?:0|[1-9][0-9]{0,2})(?:\.(?:0|[1-9][0-9]{0,2})){3}")

# Ranges refused outright, first match wins. Written as (network, prefix length, phrase); the phrase
# completes "address X ..." in a refusal. Sources: the IANA IPv4 and IPv6 special-purpose address
# registries, RFC 6598 (shared address space), RFC 9637 (3fff::/20).
_IPV4_REFUSED: tuple[tuple[str, int, str], ...] = (
    ("0.0.0.0", 32, "is unspecified (0.0.0.0)"),
    ("0.0.0.0", 8, "is in 'this network' (0.0.0.0/8)"),
    ("10.0.0.0", 8, "is private (10.0.0.0/8)"),
    ("100.64.0.0", 10, "is carrier-grade NAT shared space (100.64.0.0/10)"),
    ("127.0.0.0", 8, "is loopback (127.0.0.0/8)"),
    ("169.254.0.0", 16, "is link-local (169.254.0.0/16)"),
    ("172.16.0.0", 12, "is private (172.16.0.0/12)"),
    ("192.0.0.0", 24, "is reserved for IETF protocol assignments (192.0.0.0/24)"),
    ("192.0.2.0", 24, "is reserved for documentation (192.0.2.0/24)"),
    ("192.88.99.0", 24, "is the deprecated 6to4 relay anycast range (192.88.99.0/24)"),
    ("192.168.0.0", 16, "is private (192.168.0.0/16)"),
    ("198.18.0.0", 15, "is reserved for benchmarking (198.18.0.0/15)"),
    ("198.51.100.0", 24, "is reserved for documentation (198.51.100.0/24)"),
    ("203.0.113.0", 24, "is reserved for documentation (203.0.113.0/24)"),
    ("224.0.0.0", 4, "is multicast (224.0.0.0/4)"),
    ("255.255.255.255", 32, "is the limited broadcast address"),
    ("240.0.0.0", 4, "is reserved (240.0.0.0/4)"),
)

_IPV6_REFUSED: tuple[tuple[str, int, str], ...] = (
    ("64:ff9b:1::", 48, "is in the local-use IPv4/IPv6 translation prefix (64:ff9b:1::/48)"),
    ("100::", 64, "is discard-only (100::/64)"),
    ("2001:2::", 48, "is reserved for benchmarking (2001:2::/48)"),
    ("2001:10::", 28, "is a deprecated ORCHID address (2001:10::/28)"),
    ("2001:db8::", 32, "is reserved for documentation (2001:db8::/32)"),
    ("3fff::", 20, "is reserved for documentation (3fff::/20)"),
    ("fc00::", 7, "is unique-local (fc00::/7)"),
    ("fe80::", 10, "is link-local (fe80::/10)"),
    ("fec0::", 10, "is site-local (fec0::/10)"),
    ("ff00::", 8, "is multicast (ff00::/8)"),
)

# Inside 2001::/23 (IETF protocol assignments, not globally reachable as a whole) these are.
_IPV6_IETF_GLOBAL: tuple[tuple[str, int], ...] = (
    ("2001:1::1", 128),
    ("2001:1::2", 128),
    ("2001:1::3", 128),
    ("2001:3::", 32),
    ("2001:4:112::", 48),
    ("2001:20::", 28),
    ("2001:30::", 28),
)


def _compile(
    table: tuple[tuple[str, int, str], ...], bits: int
) -> tuple[tuple[int, int, str], ...]:
    compiled = []
    for network, prefix, phrase in table:
        mask = ((1 << prefix) - 1) << (bits - prefix)
        compiled.append((int(ip_address(network)) & mask, mask, phrase))
    return tuple(compiled)


_V4 = _compile(_IPV4_REFUSED, 32)
_V6 = _compile(_IPV6_REFUSED, 128)
_V6_IETF_GLOBAL = _compile(tuple((n, p, "") for n, p in _IPV6_IETF_GLOBAL), 128)

_MASK_96 = ((1 << 96) - 1) << 32
_MAPPED = 0xFFFF << 32
_NAT64 = int(IPv6Address("64:ff9b::"))
_MASK_16 = 0xFFFF << 112
_SIX_TO_FOUR = 0x2002 << 112
_MASK_32 = 0xFFFFFFFF << 96
_TEREDO = 0x20010000 << 96
_MASK_23 = ((1 << 23) - 1) << 105
_IETF = 0x2001 << 112
_MASK_3 = 0b111 << 125
_GLOBAL_UNICAST = 0b001 << 125
_LOW_32 = 0xFFFFFFFF
# ISATAP interface identifiers (RFC 5214) carry an IPv4 address: ...:0000:5efe:a.b.c.d or 0200:5efe.
_ISATAP_IDS = (0x00005EFE, 0x02005EFE)


def _v4_refusal(value: int) -> str | None:
    for network, mask, phrase in _V4:
        if value & mask == network:
            return phrase
    return None


def _embedded(value: int, form: str) -> str | None:
    inner = _v4_refusal(value & _LOW_32)
    if inner is None:
        return None
    return f"embeds {IPv4Address(value & _LOW_32)} ({form}), which {inner}"


def _v6_refusal(value: int) -> str | None:
    if value == 0:
        return "is unspecified (::)"
    if value == 1:
        return "is loopback (::1)"
    high = value & _MASK_96
    if high == _MAPPED:
        return _embedded(value, "IPv4-mapped, ::ffff:0:0/96")
    if high == 0:
        return _embedded(value, "IPv4-compatible, ::/96") or (
            "is IPv4-compatible (::/96), a deprecated form that is not routed"
        )
    if high == _NAT64:
        return _embedded(value, "NAT64, 64:ff9b::/96")
    if value & _MASK_16 == _SIX_TO_FOUR:
        return _embedded(value >> 80, "6to4, 2002::/16")
    if value & _MASK_32 == _TEREDO:
        # RFC 4380: the server is bits 32-63; the client is the last 32 bits, inverted.
        server = _embedded(value >> 64, "Teredo server, 2001::/32")
        return server or _embedded(~value, "Teredo client, 2001::/32")
    for network, mask, phrase in _V6:
        if value & mask == network:
            return phrase
    if value & _MASK_3 != _GLOBAL_UNICAST:
        return "is reserved (outside the global unicast range 2000::/3)"
    if value & _MASK_23 == _IETF and not any(value & m == n for n, m, _ in _V6_IETF_GLOBAL):
        return "is reserved for IETF protocol assignments (2001::/23)"
    if (value >> 32) & _LOW_32 in _ISATAP_IDS:
        return _embedded(value, "ISATAP interface identifier")
    return None


def refusal(address: IPAddress) -> str | None:
    """Say why ``address`` may not be fetched, or return None when it is global unicast.

    The answer completes "address X …", e.g. ``"is loopback (127.0.0.0/8)"``. IPv4 addresses
    carried inside IPv6 ones (mapped, compatible, 6to4, Teredo server and client, NAT64, ISATAP)
    are judged by the IPv4 rules. ``ipaddress``'s ``is_global`` is not consulted: it calls
    multicast and several embedded forms global.
    """
    if isinstance(address, IPv4Address):
        return _v4_refusal(int(address))
    if address.scope_id:
        return f"carries a zone id (%{address.scope_id}), which only local addresses use"
    return _v6_refusal(int(address))


def parse_address(text: str) -> IPAddress | None:
    """Parse a canonical IPv4 dotted quad or an IPv6 address, or return None."""
    if ":" in text:
        try:
            return IPv6Address(text)
        except ValueError:
            return None
    if _DOTTED_QUAD.fullmatch(text) is None:
        return None
    try:
        return IPv4Address(socket.inet_pton(socket.AF_INET, text))
    except OSError:  # an octet above 255
        return None
