"""A server's elicitation put to the person behind the call that caused it.

The host side is :mod:`toolwire.elicitation`: the surface running the call (``toolwire chat``,
the web chat) set an elicitor for it. The question arrives in the MCP loop; it is put to the
person in the host's loop, where the call runs, and the answer goes back to the server. Where
nobody can be asked (``toolwire batch``, ``mcp serve``, a script) the server gets an error that
says so. The server's message and field texts are outside content: they are cut and filtered
before anyone sees them.
"""

from __future__ import annotations

import asyncio
from typing import Any

import mcp.types as mt

from toolwire.elicitation import (
    ElicitationRequest,
    NoElicitor,
    current_elicitor,
    elicit,
    eliciting,
)

from ._listing import DESCRIPTION_CHARS, TITLE_CHARS, outside_text

_NOBODY = object()


def elicitation_request(
    server: str, tool: str, params: mt.ElicitRequestParams
) -> ElicitationRequest:
    """The host's request for one elicitation of ``server`` during a call of ``tool``."""
    message = outside_text(params.message, DESCRIPTION_CHARS)
    if isinstance(params, mt.ElicitRequestURLParams):
        return ElicitationRequest(
            source=f"MCP server {server!r}", tool=tool, message=message, url=params.url
        )
    schema = params.requested_schema
    raw = (
        schema.model_dump(by_alias=True, mode="json", exclude_none=True)
        if hasattr(schema, "model_dump")
        else dict(schema)
    )
    found = raw.get("properties")
    properties: dict[str, Any] = found if isinstance(found, dict) else {}
    shown: dict[str, Any] = {}
    for name, spec in properties.items():
        spec = dict(spec) if isinstance(spec, dict) else {}
        for key in ("title", "description"):
            if key in spec:
                spec[key] = outside_text(spec[key], TITLE_CHARS if key == "title" else 1_000)
        shown[name] = spec
    return ElicitationRequest(
        source=f"MCP server {server!r}",
        tool=tool,
        message=message,
        schema={**raw, "properties": shown},
    )


def asker_for(server: str, tool: str, host_loop: asyncio.AbstractEventLoop) -> tuple[object, Any]:
    """``(whom, ask)`` for a call of ``tool`` about to run in ``host_loop``: the current task's
    elicitor (or nobody) and the function the connection calls with a server's question."""
    elicitor = current_elicitor()

    async def ask(params: mt.ElicitRequestParams) -> mt.ElicitResult | mt.ErrorData:
        request = elicitation_request(server, tool, params)

        async def in_host() -> Any:
            with eliciting(elicitor):
                return await elicit(request)

        future = asyncio.run_coroutine_threadsafe(in_host(), host_loop)
        try:
            answer = await asyncio.wrap_future(future)
        except NoElicitor as exc:
            return mt.ErrorData(code=mt.INVALID_REQUEST, message=str(exc))
        except ValueError as exc:
            return mt.ErrorData(code=mt.INVALID_PARAMS, message=f"the answer does not fit: {exc}")
        content = dict(answer.content) if answer.action == "accept" and answer.content else None
        return mt.ElicitResult(action=answer.action, content=content)

    return (elicitor if elicitor is not None else _NOBODY), ask
