"""Fallback across providers: ``[[provider.fallback]]`` entries tried in order.

Each request starts with the first provider. One that cannot answer it (a connection error, a
429 or 5xx the transport's retries did not get past, a refusal of tools) hands it to the next,
and a ``ProviderFallback`` event says so. Every provider receives the conversation rendered by
its own adapter from the canonical messages; what one provider put into its answers for itself
alone (signed thinking, reasoning items, server-tool blocks, ids of its own) is taken out of
the turns it did not write, so another provider is never sent data it cannot check.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import attrs

from ..events import ProviderFallback
from ..messages import AssistantMessage, AssistantPart, Message, OpaquePart, ThinkingPart, ToolCall
from ..tools._spec import FunctionSpec
from ._base import (
    AdapterCapabilities,
    EmitEvent,
    ModelRequest,
    ProviderAdapter,
    ProviderError,
    ToolsNotSupportedError,
)
from ._rendered import RenderedMessages
from ._streaming import _WIRE_ID

__all__ = ["FallbackAdapter", "falls_back", "foreign_message"]


def falls_back(error: ProviderError) -> bool:
    """Whether the next provider should be asked after ``error``: a refusal of tools, a
    connection error, a 429 or a 5xx (all left after the transport's retries). A stream that
    broke after content was shown, a 4xx and a bad answer are not: another provider would
    repeat what was shown, or fail the same way."""
    if isinstance(error, ToolsNotSupportedError):
        return True
    status = error.status
    if status is None:
        return error.retryable
    return status == 429 or status >= 500


def _foreign_part(part: AssistantPart) -> AssistantPart | None:
    if isinstance(part, OpaquePart):
        return None
    if isinstance(part, ThinkingPart):
        if part.redacted or not part.text:
            return None
        return ThinkingPart(text=part.text)
    if isinstance(part, ToolCall):
        if part.provider_executed:
            return None
        wire = (part.provider_data or {}).get(_WIRE_ID)
        return attrs.evolve(part, provider_data={_WIRE_ID: wire} if wire else None)
    return part


def foreign_message(message: AssistantMessage) -> AssistantMessage:
    """``message`` as another provider may be sent it: its text, its reasoning as plain
    unsigned text, and its calls; without the parts and data only its own provider can read
    (opaque items, signatures, redacted thinking, calls the provider ran itself) and without
    its API, so every adapter renders it as a turn some other API wrote."""
    parts = [kept for part in message.parts if (kept := _foreign_part(part)) is not None]
    return attrs.evolve(message, parts=tuple(parts), api=None)


def _capabilities(adapters: Sequence[ProviderAdapter]) -> AdapterCapabilities:
    every = [adapter.capabilities for adapter in adapters]
    choices = frozenset.intersection(*(c.tool_choice for c in every))
    return AdapterCapabilities(
        native_tools=all(c.native_tools for c in every),
        tool_choice=choices,
        streaming=all(c.streaming for c in every),
        binds_strict_schemas=all(c.binds_strict_schemas for c in every),
        accepts_parallel_tool_calls=all(c.accepts_parallel_tool_calls for c in every),
        max_tool_name_length=min(c.max_tool_name_length for c in every),
        native_output=all(c.native_output for c in every),
    )


class FallbackAdapter(ProviderAdapter):
    """The configured provider and its ``[[provider.fallback]]`` entries as one adapter.

    :param providers: each provider's name (as :attr:`AssistantMessage.provider` records it)
        and adapter, the configured one first.

    Its capabilities are what every provider has (the shortest tool-name limit, native
    output only when all have it …), so a request the loop builds fits whichever answers.
    Each answer names the provider that gave it in ``provider``; a turn with no name was
    written by the first.
    """

    api: ClassVar[str] = "fallback"

    def __init__(self, providers: Sequence[tuple[str, ProviderAdapter]]) -> None:
        if len(providers) < 2:
            raise ValueError("a fallback adapter needs at least two providers")
        first = providers[0][1]
        super().__init__(first.config, first.transport)
        self.providers = tuple(providers)
        # One foreign form per turn, kept while the turn lives: a provider's own message cache
        # then renders it once, not on every request.
        self._foreign: RenderedMessages[AssistantMessage] = RenderedMessages(
            lambda message, _: foreign_message(message)
        )
        # Events and the run's records name the first provider's API.
        vars(self)["api"] = first.api

    @property
    def capabilities(self) -> AdapterCapabilities:
        """What every provider of the list supports."""
        return _capabilities([adapter for _, adapter in self.providers])

    def render_tools(self, functions: tuple[FunctionSpec, ...]) -> Any:
        """What the first provider receives for these functions."""
        return self.providers[0][1].render_tools(functions)

    def render_notes(self, functions: tuple[FunctionSpec, ...]) -> list[str]:
        """The first provider's notes on these functions."""
        return self.providers[0][1].render_notes(functions)

    def request_for(self, request: ModelRequest, index: int) -> ModelRequest:
        """``request`` as the provider at ``index`` receives it: the turns other providers
        wrote made :func:`foreign_message`."""
        name = self.providers[index][0]
        first = self.providers[0][0]
        messages: list[Message] = []
        changed = False
        for message in request.messages:
            if isinstance(message, AssistantMessage) and (message.provider or first) != name:
                message = self._foreign.get(message)
                changed = True
            messages.append(message)
        return attrs.evolve(request, messages=tuple(messages)) if changed else request

    async def complete(self, request: ModelRequest, emit: EmitEvent) -> AssistantMessage:
        """Ask each provider in turn until one answers; the answer names it.

        :raises ProviderError: the last provider's error, or the first error that is no
            reason to fall back (:func:`falls_back`).
        """
        last = len(self.providers) - 1
        for index, (name, adapter) in enumerate(self.providers):
            try:
                message = await adapter.complete(self.request_for(request, index), emit)
            except ProviderError as exc:
                if index == last or not falls_back(exc):
                    raise
                emit(
                    ProviderFallback(
                        run_id=request.run_id,
                        round=request.round,
                        failed=name,
                        error=str(exc),
                        next=self.providers[index + 1][0],
                        status=exc.status,
                    )
                )
                continue
            return attrs.evolve(message, provider=name)
        raise AssertionError("unreachable: the last provider answers or raises")

    async def aclose(self) -> None:
        """Close every provider's adapter."""
        for _, adapter in self.providers:
            await adapter.aclose()


def provider_names(labels: Sequence[tuple[str | None, str | None]]) -> list[str]:
    """A name for each provider of a fallback list, from its adapter and model
    (``openai-chat/gpt-4o-mini``), numbered where two would have the same."""
    base = [f"{adapter or 'default'}/{model or 'default'}" for adapter, model in labels]
    names: list[str] = []
    for index, name in enumerate(base):
        names.append(name if base.count(name) == 1 else f"{name}#{index + 1}")
    return names
