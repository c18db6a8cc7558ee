"""Redaction of a secret from what a provider sends: text, raw bytes and parsed JSON."""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["REDACTED", "redact_json", "redact_raw", "redact_text"]

REDACTED: Final = "[redacted]"
"""What stands where a secret was."""

# Shorter "secrets" are not worth the damage of replacing them everywhere in a text.
_SHORTEST: Final = 6


def _secret(secret: str | None) -> str | None:
    return secret if secret is not None and len(secret) >= _SHORTEST else None


def redact_text(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced by :data:`REDACTED`."""
    needle = _secret(secret)
    if needle is not None and needle in text:
        return text.replace(needle, REDACTED)
    return text


def redact_json(value: Any, secret: str | None) -> Any:
    """A parsed JSON value with ``secret`` redacted from every string in it, keys included.

    The value is rebuilt only when the secret is in it.
    """
    needle = _secret(secret)
    if needle is None or isinstance(value, str):
        return value if needle is None else redact_text(value, needle)
    if not isinstance(value, dict | list):
        return value
    encoded = json.dumps(value, ensure_ascii=False)
    escaped = json.dumps(needle, ensure_ascii=False)[1:-1]
    if escaped not in encoded:
        return value
    return json.loads(encoded.replace(escaped, REDACTED))


def redact_raw(raw: bytes, secret: str | None) -> bytes:
    """Raw bytes of an answer with the UTF-8 of ``secret`` replaced by :data:`REDACTED`."""
    needle = _secret(secret)
    if needle is None:
        return raw
    encoded = needle.encode("utf-8")
    return raw.replace(encoded, REDACTED.encode("ascii")) if encoded in raw else raw
