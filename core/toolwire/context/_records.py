"""What a plugin learns about a request it may add context to, and what it answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .._trust import TrustLevel
from ..messages import Message, UserMessage
from ..tools._result import Source


def _sources(value: Any) -> tuple[Source, ...]:
    items = tuple(value)
    for index, item in enumerate(items):
        if not isinstance(item, Source):
            raise TypeError(
                f"RequestContext sources[{index}] is a {type(item).__name__}, not a "
                "toolwire.tools.Source"
            )
    return items


def _trust(value: TrustLevel | str | int | None) -> TrustLevel | None:
    return None if value is None else TrustLevel.parse(value)


@attrs.frozen(kw_only=True)
class ContextRequest:
    """The request of one round, as ``toolwire_request_context`` sees it.

    :param run_id: the run's id.
    :param round: the round being prepared (from 1).
    :param messages: the conversation so far (without the system prompt).
    :param offered: the names of the functions offered to the model this round, in offer order;
        a plugin whose tool is among them usually has nothing to add.
    :param api: the adapter's API name (``openai-chat``, ``prompted`` …).
    :param model: the configured model name, when set.
    :param provider_trust: how far the provider of this round is trusted.
    :param native_tools: False when the model gets tools through the prompted path.
    :param services: the host's services for the run (``"host"``, ``"emit"``,
        ``"filter_untrusted"`` …), as a tool call gets them.
    """

    run_id: str
    round: int
    messages: tuple[Message, ...]
    offered: tuple[str, ...] = ()
    api: str = ""
    model: str | None = None
    provider_trust: TrustLevel = TrustLevel.MEDIUM
    native_tools: bool = True
    services: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def query(self) -> str | None:
        """The text of the latest user message, or None when the conversation has none."""
        for message in reversed(self.messages):
            if isinstance(message, UserMessage):
                text = message.text.strip()
                return text or None
        return None


@attrs.frozen(kw_only=True)
class RequestContext:
    """Context one plugin adds to one request.

    :param text: what the model reads before the latest user message's own text (already cut
        and filtered by the plugin: the host adds it as given). Empty text adds nothing.
    :param sources: the documents the text came from; they become sources of the run.
    :param required_trust: the trust level the text requires from every later provider of the
        run (it only ever tightens the run's requirement); None when it requires nothing.
    """

    text: str = attrs.field(validator=attrs.validators.instance_of(str))
    sources: tuple[Source, ...] = attrs.field(default=(), converter=_sources)
    required_trust: TrustLevel | None = attrs.field(default=None, converter=_trust)
