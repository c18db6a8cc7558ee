"""The two ways a retrieval fails: refused by policy, or failed on the way."""

from __future__ import annotations

import attrs

_MAX_SHOWN = 300


def shown_url(url: str) -> str:
    """``url`` made safe to print: unprintable characters escaped, length capped."""
    text = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in url)
    return text if len(text) <= _MAX_SHOWN else f"{text[:_MAX_SHOWN]}…"


@attrs.frozen(auto_exc=True)
class RetrievalBlocked(Exception):
    """A URL, redirect or response refused by the retrieval policy.

    Nothing past the refusal is requested or read: a refused URL is never connected to, a refused
    redirect is not followed, a refused content type leaves the body unread.

    :param url: the URL refused (for a redirect, the hop's target).
    :param reason: what was refused and why, naming the setting that would allow it if any.
    :param redirected_from: for a refused redirect, the URL whose response pointed there.
    """

    url: str
    reason: str
    redirected_from: str | None = attrs.field(default=None, kw_only=True)

    def __str__(self) -> str:
        via = f" (redirect from {shown_url(self.redirected_from)})" if self.redirected_from else ""
        return f"refused {shown_url(self.url)}{via}: {self.reason}"


@attrs.frozen(auto_exc=True)
class RetrievalError(Exception):
    """A retrieval the policy allowed that did not produce a page.

    Covers resolution and connection failures, timeouts, malformed responses and HTTP error
    statuses (4xx and 5xx are errors, not results: the body of an error page is not read).

    :param url: the URL being fetched when it failed (after any redirects).
    :param reason: what went wrong.
    :param status: the HTTP status, when a response arrived.
    :param retryable: whether trying again later may succeed (timeouts, connection failures, 408,
        425, 429 and 5xx gateway/availability statuses).
    """

    url: str
    reason: str
    status: int | None = attrs.field(default=None, kw_only=True)
    retryable: bool = attrs.field(default=False, kw_only=True)

    def __str__(self) -> str:
        return f"could not fetch {shown_url(self.url)}: {self.reason}"
