"""Operating-system sign-in (HTTP Negotiate, RFC 4559) for the hops that may receive it.

The token itself comes from a :class:`NegotiateTokens` source the caller gives ``fetch`` (the
web tools use the operating system's Kerberos through pyspnego); this module decides, for one
hop, whether a token may be sent at all. The decision needs the addresses the hop resolved to,
which only the retrieval knows, so it is made here, on the answers already checked (never a
second lookup).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from ._addresses import refusal
from ._policy import RetrievalPolicy
from ._resolver import Checked
from ._urls import Target


@runtime_checkable
class NegotiateTokens(Protocol):
    """A source of ``Authorization: Negotiate`` tokens: the operating system's sign-in.

    :meth:`token` is called in a worker thread (making a Kerberos token may ask the KDC over the
    network), once for each hop that answered ``401`` with ``WWW-Authenticate: Negotiate`` and
    passed every check (https, a host in ``negotiate_hosts``, every address non-public).

    **Example** (a fixed token, as in tests)::

        class Fixed:
            def token(self, host: str) -> bytes:
                return b"token for " + host.encode()
    """

    def token(self, host: str) -> bytes:
        """The initial token for the service ``HTTP@host``.

        :raises SignInUnavailable: no token can be made (no credentials, no Kerberos); the
            message says why and what to set up.
        """
        ...


class SignInUnavailable(Exception):
    """A :class:`NegotiateTokens` source cannot sign in; the message says why and what to do."""


def challenge_schemes(values: Iterable[str]) -> tuple[str, ...]:
    """The authentication schemes named by ``WWW-Authenticate`` header values, lower-case.

    A value may list several challenges (``Negotiate, Basic realm="x"``); a scheme is the
    first word of a comma-separated part, unless that word is a parameter (``charset="x"``).
    """
    schemes: list[str] = []
    for value in values:
        for part in value.split(","):
            word = part.strip().split(" ", 1)[0]
            if word and "=" not in word and '"' not in word and word.lower() not in schemes:
                schemes.append(word.lower())
    return tuple(schemes)


def sign_in_refusal(
    target: Target, checked: Checked, policy: RetrievalPolicy, sign_in: NegotiateTokens | None
) -> str | None:
    """Why no Negotiate token may go to this hop, or None when one may.

    A token goes only to a host listed in ``negotiate_hosts``, over https, when every address
    the host resolved to is non-public: a name that also resolves to a public address (a
    DNS answer an attacker mixed in, a split-horizon mistake) gets none.
    """
    host = target.host
    if not policy.signs_in_to(host, target.port):
        return (
            f"{host} asks for operating-system sign-in (Negotiate), which is used only for "
            f"hosts listed in {policy.negotiate_hosts_setting}"
        )
    if sign_in is None:
        return f"{host} asks for operating-system sign-in (Negotiate), which is not available here"
    if target.url.scheme != "https":
        return (
            "operating-system sign-in is sent only over https, and this address is "
            f"{target.url.scheme}://"
        )
    if any(refusal(address) is None for address in checked.addresses):
        return (
            f"{host} resolves to a public address, and operating-system sign-in is sent only to "
            "hosts whose every address is private"
        )
    return None


def authorization(token: object, host: str) -> str:
    """The ``Authorization`` header value for ``token``.

    :raises SignInUnavailable: the source returned something that is not a token.
    """
    if not isinstance(token, bytes | bytearray) or not token:
        raise SignInUnavailable(
            f"the sign-in for {host} produced no token (got {type(token).__name__})"
        )
    return f"Negotiate {base64.b64encode(bytes(token)).decode('ascii')}"
