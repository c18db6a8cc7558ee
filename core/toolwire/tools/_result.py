"""Outcomes of tool calls: ``ToolResult``, its status, sources, and ``ToolBlocked``."""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .._fieldwise import record_eq, record_hash, record_repr
from .._trust import TrustLevel
from ..usage import Usage


class ToolStatus(enum.StrEnum):
    """How a tool call ended."""

    OK = "ok"
    ERROR = "error"
    BLOCKED = "blocked"
    DENIED = "denied"


@attrs.frozen
class Source:
    """A document a tool used, shown to people under the answer (url and title)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    url: str
    title: str | None = None


def _freeze_sources(value: Sequence[Source]) -> tuple[Source, ...]:
    return tuple(value)


def _freeze_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return dict(value) if value else {}


_PARTS = ("TextPart", "OpaquePart")


def _freeze_follow_up(value: str | Sequence[Any] | None) -> tuple[Any, ...]:
    """Follow-up content as a tuple of text (a ``TextPart`` becomes its text) and
    ``OpaquePart`` items."""
    if not value:
        return ()
    items: list[Any] = [value] if isinstance(value, str) else list(value)
    for index, item in enumerate(items):
        kind = type(item)
        if isinstance(item, str):
            continue
        if kind.__module__ == "toolwire.messages" and kind.__name__ in _PARTS:
            if kind.__name__ == "TextPart":
                items[index] = item.text
            continue
        raise TypeError(
            f"ToolResult(follow_up=...) takes text, TextPart or OpaquePart items; got "
            f"{kind.__name__} {item!r:.60}"
        )
    return tuple(items)


def _trust_or_none(value: TrustLevel | str | None) -> TrustLevel | None:
    """A result's ``required_trust``, given as a level or as its name (``"internal"``)."""
    if value is None or type(value) is TrustLevel:
        return value
    return TrustLevel.parse(value)


@attrs.frozen(kw_only=True)
class ToolResult:
    """The outcome of one tool call.

    ``content`` (text) and ``data`` (any JSON value) are what the model sees; ``artifacts`` are kept
    for the caller and never sent to the model. ``required_trust`` is the trust level this result
    requires from every later provider of the run (it only ever tightens the run's requirement).
    ``exception`` keeps the exception of a failed tool for the caller; it is never rendered.
    ``follow_up`` is content for the model that a provider takes only in a user turn (an image
    as an ``OpaquePart`` of that API, a document, text): the loop sends the follow-ups of a
    turn's results as one user message right after the batch of results, in call order.
    ``usage`` and ``cost`` are what the call itself spent at providers (a run started as a tool,
    :func:`toolwire.agent_tool`); the loop adds them to the run's.
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    status: ToolStatus = ToolStatus.OK
    content: str | None = None
    data: Any = None
    artifacts: Mapping[str, Any] = attrs.field(factory=dict, converter=_freeze_mapping)
    sources: tuple[Source, ...] = attrs.field(default=(), converter=_freeze_sources)
    retryable: bool = False
    metadata: Mapping[str, Any] = attrs.field(factory=dict, converter=_freeze_mapping)
    required_trust: TrustLevel | None = attrs.field(default=None, converter=_trust_or_none)
    exception: BaseException | None = attrs.field(default=None, eq=False, repr=False)
    follow_up: tuple[Any, ...] = attrs.field(default=(), converter=_freeze_follow_up)
    usage: Usage | None = None
    cost: float | None = None

    @classmethod
    def ok(cls, content: str | None = None, *, data: Any = None, **fields: Any) -> ToolResult:
        """A successful result with text ``content`` and/or JSON ``data``."""
        return cls(status=ToolStatus.OK, content=content, data=data, **fields)

    @classmethod
    def error(cls, message: str, **fields: Any) -> ToolResult:
        """A failed call; ``message`` tells the model what went wrong and how to correct it."""
        return cls(status=ToolStatus.ERROR, content=message, **fields)

    @classmethod
    def blocked(cls, message: str, **fields: Any) -> ToolResult:
        """A call refused by a policy (network guard, config); ``message`` says what and why."""
        return cls(status=ToolStatus.BLOCKED, content=message, **fields)

    @classmethod
    def denied(cls, message: str, **fields: Any) -> ToolResult:
        """A call a person (or an approval policy) declined; ``message`` is shown to the model."""
        return cls(status=ToolStatus.DENIED, content=message, **fields)

    @property
    def is_ok(self) -> bool:
        """True when the call succeeded."""
        return self.status is ToolStatus.OK

    @property
    def is_failure(self) -> bool:
        """True for error and blocked results (providers mark them, e.g. Anthropic ``is_error``)."""
        return self.status in (ToolStatus.ERROR, ToolStatus.BLOCKED)

    def model_text(self) -> str:
        """The text the model receives: ``content``, then ``data`` as JSON (non-ASCII kept)."""
        parts: list[str] = []
        if self.content:
            parts.append(self.content)
        if self.data is not None:
            parts.append(json.dumps(self.data, ensure_ascii=False, default=str))
        if not parts:
            return "" if self.is_ok else f"Tool call {self.status.value}."
        return "\n".join(parts)


class ToolBlocked(Exception):
    """Raised by a tool (or middleware) to refuse a call on policy grounds.

    The call ends with a ``blocked`` result whose content is the message; unlike other exceptions it
    is not reported as a failure of the tool.
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
