"""The two ways a retrieval fails: refused by policy, or failed on the way."""

from __future__ import annotations

import attrs

_MAX_SHOWN = 300
# A reason holds the server's words (a reason phrase, a bad status line, trailing bytes): any
# length, any bytes. It is shown escaped and cut to this.
_MAX_REASON = 500


def _shown(text: str, limit: int) -> str:
    cut = text[: limit + 1]
    shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in cut)
    return shown if len(text) <= limit and len(shown) <= limit else f"{shown[:limit]}…"


def shown_url(url: str) -> str:
    """``url`` made safe to print: unprintable characters escaped, length capped."""
    return _shown(url, _MAX_SHOWN)


def shown_reason(reason: str) -> str:
    """A failure's reason made safe to print: unprintable characters escaped, length capped."""
    return _shown(reason, _MAX_REASON)


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
        return f"refused {shown_url(self.url)}{via}: {shown_reason(self.reason)}"


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
    :param challenges: for a 401, the authentication schemes the server asked for
        (``WWW-Authenticate``), lower-case: ``("negotiate",)`` is a site that wants the operating
        system's sign-in.
    """

    url: str
    reason: str
    status: int | None = attrs.field(default=None, kw_only=True)
    retryable: bool = attrs.field(default=False, kw_only=True)
    challenges: tuple[str, ...] = attrs.field(default=(), kw_only=True)

    def __str__(self) -> str:
        return f"could not fetch {shown_url(self.url)}: {shown_reason(self.reason)}"
