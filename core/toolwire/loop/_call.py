"""``call_tool``: run one tool call without a model (``toolwire tools call``)."""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._trust import TrustLevel, levels_in_use
from ..tools._context import TYPED_BY_PERSON
from ..tools._result import ToolResult
from ._loop import ToolCallingLoop

if TYPE_CHECKING:
    from ._protocol import LoopHost


async def call_tool(host: LoopHost, name: str, arguments: Mapping[str, Any]) -> ToolResult:
    """Run one call of the registered tool ``name`` through the host's execution pipeline.

    See :meth:`ToolCallingLoop.call`. No model, no ledger, no approval: the person calling the
    tool directly is the approval. No provider either, so the call runs at the highest trust
    (``TrustLevel.highest()``): what a tool keeps from providers trusted less than some level
    (an allowlisted private host, say) is the caller's own to read.

    :raises KeyError: when no tool of that name is registered (the message lists them).
    """
    loop = ToolCallingLoop(host)
    loop.ledger = None
    with levels_in_use(host.config.trust.levels):  # the top of the host's scheme
        loop._trust = TrustLevel.highest()
    loop._services = types.MappingProxyType({**loop._services, TYPED_BY_PERSON: True})
    return await loop.call(name, arguments)
