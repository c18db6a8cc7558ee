"""The operating system's sign-in for intranet sites: Kerberos tokens for HTTP Negotiate.

:class:`KerberosSignIn` makes the tokens with pyspnego (SSPI on Windows, GSSAPI elsewhere),
from the credentials the operating system already holds: a domain login, or a ticket from
``kinit``. No password is ever read or stored. An application can give its own source as the
host service ``negotiate_tokens`` (any :class:`toolwire.net.NegotiateTokens`), which the web
tools then use instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._settings import SECTION

if TYPE_CHECKING:
    from toolwire import ToolContext
    from toolwire.net import NegotiateTokens

SERVICE = "negotiate_tokens"
"""The name of the host service that replaces the operating system's sign-in."""

_SET_UP = (
    "sign in to the domain, or get a Kerberos ticket with `kinit` (check it with `klist`); on "
    "Linux and macOS Kerberos also needs the gssapi package (`pip install 'pyspnego[kerberos]'`, "
    "which builds against the system's Kerberos library)"
)


class KerberosSignIn:
    """Tokens for ``HTTP@host`` from the operating system's Kerberos credentials.

    The token is a SPNEGO token carrying a Kerberos ticket, as browsers send. Credentials are
    never delegated to the server. NTLM is not used: it needs a password here, and three legs
    on one connection.
    """

    def token(self, host: str) -> bytes:
        """The initial Negotiate token for ``host``.

        :raises toolwire.net.SignInUnavailable: naming the host, pyspnego's reason and what
            to set up (no credentials, no Kerberos library, an unknown service principal).
        """
        from toolwire.net import SignInUnavailable

        try:
            import spnego
        except ImportError:
            raise SignInUnavailable(
                f"it needs the pyspnego package, which is not installed ({SECTION}); {_SET_UP}"
            ) from None
        try:
            context = spnego.client(
                hostname=host,
                service="HTTP",
                protocol="negotiate",
                options=spnego.NegotiateOptions.negotiate_kerberos,
            )
            token = context.step()
        except (ImportError, spnego.exceptions.SpnegoError) as exc:
            raise SignInUnavailable(
                f"Kerberos gave no ticket for HTTP@{host} (pyspnego: {_reason(exc)}); {_SET_UP}"
            ) from None
        if not token:
            raise SignInUnavailable(f"Kerberos gave no ticket for HTTP@{host}; {_SET_UP}")
        return token


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 400 else f"{text[:399]}…"


def sign_in_for(context: ToolContext | None) -> NegotiateTokens:
    """The host's ``negotiate_tokens`` service when it has one, else :class:`KerberosSignIn`."""
    from toolwire.net import NegotiateTokens

    given = context.services.get(SERVICE) if context is not None else None
    return given if isinstance(given, NegotiateTokens) else KerberosSignIn()
