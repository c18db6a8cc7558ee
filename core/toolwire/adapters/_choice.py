"""Checking a request's tool choice before anything is sent."""

from __future__ import annotations

from ._base import ModelRequest, NamedToolChoice, ProviderError


def check_tool_choice(request: ModelRequest, api: str) -> None:
    """Refuse a tool choice the request cannot satisfy, before anything is sent.

    :raises ProviderError: naming the API, for a named tool the request does not offer (the
        offered ones listed), for ``required`` when no tool is offered, and for a value that is
        no tool choice.
    """
    choice = request.tool_choice
    if isinstance(choice, NamedToolChoice):
        names = [f.name for f in request.functions]
        if choice.name not in names:
            raise ProviderError(
                f"{api}: tool_choice names the tool {choice.name!r}, which is not offered in this "
                f"request (offered: {', '.join(names) or 'none'})",
                api=api,
            )
    elif choice == "required" and not request.functions:
        raise ProviderError(
            f"{api}: tool_choice 'required' needs at least one offered tool, and this request "
            "offers none",
            api=api,
        )
    elif choice not in ("auto", "none", "required"):
        raise ProviderError(
            f"{api}: tool_choice {choice!r} is not valid; use 'auto', 'none', 'required' or "
            "NamedToolChoice(name)",
            api=api,
        )
