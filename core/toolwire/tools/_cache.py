"""``cached_resolver``: a context tool's resolution kept per conversation for a short while."""

from __future__ import annotations

import inspect
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import TYPE_CHECKING

from ._errors import ToolDefinitionError

if TYPE_CHECKING:
    from .._request import OfferRequest
    from ._model import MaybeAwaitable, Resolver, Tool
    from ._spec import FunctionSpec

DEFAULT_TTL = 300.0
"""Seconds a resolution is reused: five minutes, about as long as a provider's prompt cache."""


class _Entry:
    __slots__ = ("expires", "spec")

    def __init__(self, spec: FunctionSpec, expires: float) -> None:
        self.spec = spec
        self.expires = expires


def cached_resolver(
    resolver: Resolver,
    *,
    ttl: float = DEFAULT_TTL,
    key: Callable[[OfferRequest], Hashable] | None = None,
    max_entries: int = 1024,
    clock: Callable[[], float] = time.monotonic,
) -> Resolver:
    """``resolver`` with what it resolves kept per conversation for ``ttl`` seconds.

    A context tool whose resolver fetches something to tailor its function (the user's projects
    as an enum, the columns of a table) then fetches it once per conversation, not once per
    round, and offers the very same function while the entry lives, so the provider's prompt
    cache holds. The resolver may be ``async`` (it fetches): then the function it gives is kept,
    and a kept one is answered at once. ``None`` (nothing to offer yet) is not kept: the
    resolver is asked again next round. An exception is not kept either. At most
    ``max_entries`` conversations are kept, the least recently used dropped first. A request
    whose run's tool choice names the tool (:attr:`~toolwire.OfferRequest.chosen_tool`) is kept
    apart from the others, so what the resolver offers a run that names the tool is not offered
    to the conversation's later runs that do not.

    :param key: the conversation a request belongs to (default
        :attr:`~toolwire.OfferRequest.conversation_key`); return something else to share or split
        entries (per user, per tenant).
    :raises ToolDefinitionError: for a ``ttl`` or ``max_entries`` that is not positive.
    """
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
        raise ToolDefinitionError(f"cached_resolver: ttl must be a positive number; got {ttl!r}")
    if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
        raise ToolDefinitionError(
            f"cached_resolver: max_entries must be an integer >= 1; got {max_entries!r}"
        )
    entries: OrderedDict[Hashable, _Entry] = OrderedDict()
    lock = threading.Lock()

    def keep(slot: Hashable, spec: FunctionSpec | None, now: float) -> FunctionSpec | None:
        if spec is None:
            return None
        with lock:
            entries[slot] = _Entry(spec, now + ttl)
            entries.move_to_end(slot)
            while len(entries) > max_entries:
                entries.popitem(last=False)
        return spec

    async def keep_later(
        slot: Hashable, pending: Awaitable[FunctionSpec | None], now: float
    ) -> FunctionSpec | None:
        return keep(slot, await pending, now)

    def resolve(tool: Tool, request: OfferRequest) -> MaybeAwaitable[FunctionSpec | None]:
        now = clock()
        # A run whose tool choice names this tool gets entries of its own: a resolver may offer
        # a named tool it would otherwise withhold, and that answer must not reach runs that
        # do not name it.
        slot = (
            tool.name,
            request.conversation_key if key is None else key(request),
            request.chosen_tool == tool.name,
        )
        with lock:
            entry = entries.get(slot)
            if entry is not None and entry.expires > now:
                entries.move_to_end(slot)
                return entry.spec
        spec = resolver(tool, request)
        if inspect.isawaitable(spec):
            # An async resolver: what is kept is what its awaitable gives, never the awaitable
            # (which cannot be awaited a second time).
            return keep_later(slot, spec, now)
        return keep(slot, spec, now)

    resolve.__doc__ = resolver.__doc__
    resolve.__wrapped__ = resolver  # type: ignore[attr-defined]
    return resolve
