"""One guarded retrieval session per host, event loop and policy, closed with the host; a tool's
fetch through it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from toolwire import ToolContext

if TYPE_CHECKING:
    import aiohttp

    from toolwire.net import RetrievalPolicy, Retrieved

_STASH_KEY = "toolwire_web.sessions"


def shared_session(
    context: ToolContext | None, policy: RetrievalPolicy
) -> aiohttp.ClientSession | None:
    """The host's guarded session for ``policy`` (opened on first use), or None without a host.

    Reusing the session keeps connections (and TLS handshakes) across calls of a run. A session
    belongs to the event loop that opened it, so a host driven from another loop gets another one.
    """
    host: Any = context.services.get("host") if context is not None else None
    stash = getattr(host, "stash", None)
    if stash is None:
        return None
    import toolwire.net as net

    sessions: dict[tuple[int, RetrievalPolicy], aiohttp.ClientSession] = stash.setdefault(
        _STASH_KEY, {}
    )
    key = (id(asyncio.get_running_loop()), policy)
    session = sessions.get(key)
    if session is None or session.closed:
        session = net.open_session(policy)
        sessions[key] = session
        host.on_close(session.close)
    return session


async def fetch_for(context: ToolContext, url: str, policy: RetrievalPolicy) -> Retrieved:
    """``toolwire.net.fetch`` of ``url`` for a tool call: through the host's shared session, and
    with the operating system's sign-in when the policy lists hosts for it.

    :raises toolwire.net.RetrievalBlocked: the policy refused the address or a redirect.
    :raises toolwire.net.RetrievalError: the retrieval failed.
    """
    import toolwire.net as net

    from ._signin import sign_in_for

    return await net.fetch(
        url,
        policy=policy,
        session=shared_session(context, policy),
        sign_in=sign_in_for(context) if policy.negotiate_hosts else None,
    )
