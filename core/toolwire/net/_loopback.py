"""The names a server bound to a loopback address answers to: its guard against DNS rebinding.

A page on another site can make a browser send requests to a loopback server by pointing a
name it controls at 127.0.0.1 (DNS rebinding); such a request carries that name in its ``Host``
header, and the page's site in ``Origin``. A loopback server that answers only the ``Host``
values naming the loopback address it is bound to, and only those origins, cannot be driven so.
"""

from __future__ import annotations

import ipaddress

_ALWAYS = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(address: str) -> bool:
    """True for ``localhost`` and loopback IP addresses (``127.0.0.0/8``, ``::1`` in any
    spelling, bracketed or not)."""
    if address.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def loopback_authorities(bind: str, port: int) -> frozenset[str]:
    """The ``Host`` header values (``name:port``, lower case) a server bound to the loopback
    address ``bind`` answers to: ``127.0.0.1``, ``localhost`` and ``[::1]``, and ``bind`` itself
    as given and in its shortest spelling (``127.0.0.2``, ``[0:0:0:0:0:0:0:1]`` and ``[::1]``).
    """
    names = set(_ALWAYS)
    bare = bind.strip("[]").lower()
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        names.add(bare)
    else:
        if address.version == 6:
            names.update({f"[{bare}]", f"[{address.compressed}]"})
        else:
            names.add(str(address))
    return frozenset(f"{name}:{port}" for name in names)


def loopback_origins(bind: str, port: int) -> frozenset[str]:
    """The ``Origin`` values of pages served by such a server itself (``http://name:port``)."""
    return frozenset(f"http://{authority}" for authority in loopback_authorities(bind, port))
