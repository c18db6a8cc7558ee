"""Default offer: a tool offers its own function and its own registered instructions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._markers import hookimpl

if TYPE_CHECKING:
    from .._request import OfferRequest
    from ..tools import FunctionSpec, Tool
    from ..tools._model import MaybeAwaitable


@hookimpl(trylast=True)
def toolwire_resolve_function(
    tool: Tool, request: OfferRequest
) -> MaybeAwaitable[FunctionSpec | None]:
    """Ask the tool: its function, or for a ``context`` tool whatever its resolver offers."""
    return tool.resolve(request)


@hookimpl(trylast=True)
def toolwire_system_prompt_instructions(tool: Tool, request: OfferRequest) -> str | None:
    """The tool's registered instructions."""
    return tool.instructions
