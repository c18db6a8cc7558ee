"""Secrets kept out of what the config prints: passwords in URLs, settings named as secrets."""

from __future__ import annotations

import itertools
import re

# The words of names (settings, URL query parameters) that say they hold a secret.
_SECRET_WORDS = frozenset(
    {
        "secret", "token", "password", "passwd", "pwd", "passphrase", "apikey", "auth",
        "authorization", "credential", "credentials", "cookie", "session", "signature", "sig",
        "bearer", "jwt",
    }
)  # fmt: skip
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key")})


def without_password(url: str) -> str:
    """``url`` with its password, if any, shown as ``***`` (for messages)."""
    return re.sub(r"//([^:/@]*):[^@/]*@", r"//\1:***@", url)


def secret_name(name: str) -> bool:
    """True when a name says it holds a secret (``GITHUB_TOKEN``, ``apiKey``, ``x-api-key``)."""
    words = re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower())
    return any(word in _SECRET_WORDS for word in words) or any(
        pair in _SECRET_PAIRS for pair in itertools.pairwise(words)
    )


def without_credentials(url: str) -> str:
    """``url`` with everything that may be a credential shown as ``***``: the password, a user
    name standing alone (``https://TOKEN@host``), and the values of query parameters whose name
    says they are secret (``?api_key=…``, ``&sig=…``)."""
    shown = re.sub(r"//([^:/@?#]*):[^@/?#]*@", r"//\1:***@", url)
    shown = re.sub(r"//[^:/@?#]+@", "//***@", shown)

    def query(match: re.Match[str]) -> str:
        if not match[3] or not secret_name(match[2]):
            return match[0]
        return f"{match[1]}{match[2]}=***"

    return re.sub(r"([?&;])([^=&;#]+)=([^&;#]*)", query, shown)
