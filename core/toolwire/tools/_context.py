"""What a running tool learns from the host: ``ToolContext``, and ``Injected`` parameters."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias, TypeVar

import attrs

from .._fieldwise import record_eq, record_hash, record_repr
from .._trust import TrustLevel

if TYPE_CHECKING:
    import asyncio

    from ..events import Event
    from ..messages import Message
    from ._model import Tool

T = TypeVar("T")

FILTERED_SERVICE = "untrusted_filtered"
"""The service through which :func:`toolwire.untrusted.filter_untrusted` tells the loop that a
call filtered its content (called with the call's round and id), so the loop's backstop for
tools returning untrusted content does not filter that result a second time."""

RUN_SERVICES: frozenset[str] = frozenset({"emit", FILTERED_SERVICE})
"""The services the loop adds to each run's (``emit`` records an event in the run): a tool may
ask for them although the host's own services do not hold them."""


def _no_progress(message: str, fraction: float | None = None) -> None:
    """The progress of a call nobody follows."""


def _progress_or_none(
    value: Callable[[str, float | None], None] | None,
) -> Callable[[str, float | None], None]:
    return _no_progress if value is None else value


@attrs.frozen
class Inject:
    """Marks a parameter the host supplies; the model never sees it.

    ``key`` names what to supply (default: the parameter's name), looked up first in the call's
    ``ToolContext.services``, then among the attributes of the ``ToolContext`` itself
    (``settings``, ``messages``, ``call_id`` …), then by type: the one service that is an
    instance of ``T``. Usually written as ``Injected[T]``. Services come from the host
    (``host``, ``config``), from plugins (``toolwire_services``) and from
    ``Host.load(services=...)``; a tool asking for one the host does not have is refused when
    it is registered.
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    key: str | None = None


Injected: TypeAlias = Annotated[T, Inject()]
"""A parameter of type ``T`` supplied by the host, never by the model: ``http: Injected[Client]``.

A value the model sends under that name is discarded.
"""


TYPED_BY_PERSON = "toolwire.typed_by_person"
"""The service a direct call by a person carries (see :attr:`ToolContext.typed_by_person`)."""


@attrs.frozen(kw_only=True)
class ToolContext:
    """The host's side of one tool call, passed to parameters typed ``ToolContext``.

    Built by the loop for every call something reads it for (the tool, a
    ``toolwire_execute_tool`` middleware, the untrusted-content backstop); never shown to the
    model. ``messages`` is the conversation so far, led by the run's base system prompt (a
    ``SystemMessage``) when it has one; a result the host wrote itself has ``by_host`` set.
    ``settings`` is the tool plugin's settings; ``services`` holds host services by name
    (``"filter_untrusted"``, ``"http"`` …); ``cancelled`` is set when the run is cancelled, so a
    long tool can stop early.

    About the invocation: ``call_id`` and ``tool_name``; ``raw_arguments``, the argument JSON
    as the provider sent it (when the adapter kept no text, the JSON of ``call_arguments``,
    the arguments as parsed, written only when a tool reads it);
    ``conversation_id``, which stays the same for one conversation across its rounds and runs
    (the rule of ``OfferRequest.conversation_key``); ``message_id``, the provider's id of the
    answer that made the call, when it gave one; ``values``, the application's own values
    passed to ``run(..., context={...})``; ``approved``, set when a person (or the run's
    approver) approved this call, so a tool that raised ``ApprovalRequired`` does not ask
    again. ``progress`` is always callable.
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    tool: Tool
    call_id: str
    run_id: str
    round: int
    messages: tuple[Message, ...] = ()
    settings: Any = None
    provider_trust: TrustLevel = TrustLevel.MEDIUM
    services: Mapping[str, Any] = attrs.field(factory=dict)
    progress: Callable[[str, float | None], None] = attrs.field(
        default=None, converter=_progress_or_none, eq=False, repr=False
    )
    cancelled: asyncio.Event | None = attrs.field(default=None, eq=False, repr=False)
    _raw_arguments: str | None = attrs.field(default=None, alias="raw_arguments")
    call_arguments: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    conversation_id: str | None = None
    message_id: str | None = None
    values: Mapping[str, Any] = attrs.field(factory=dict)
    approved: bool = False

    @property
    def raw_arguments(self) -> str | None:
        """The call's argument JSON as the provider sent it; when the adapter kept no text, the
        compact JSON of ``call_arguments`` (None when neither is known)."""
        if self._raw_arguments is not None or self.call_arguments is None:
            return self._raw_arguments
        return json.dumps(dict(self.call_arguments), ensure_ascii=False, separators=(",", ":"))

    @property
    def typed_by_person(self) -> bool:
        """Whether a person typed this call's arguments (``toolwire tools call``): no model chose
        them, so a tool may lift rules about what a model may choose (a web reader reaches the
        loopback or private address the person named)."""
        return self.services.get(TYPED_BY_PERSON) is True

    @property
    def tool_name(self) -> str:
        """The name of the tool being called."""
        return self.tool.name

    def emit(self, event: Event) -> None:
        """Add ``event`` to the run's stream: recorded in the run (``Run.events``), given to
        every ``toolwire_event`` observer and to a reader of ``host.stream``. A tool's own
        events subclass :class:`toolwire.events.Event` and name this call's ``run_id`` and
        ``round``. Safe from a worker thread (a plain function runs in one); a no-op when the
        call runs outside a run."""
        send = self.services.get("emit")
        if callable(send):
            send(event)

    def report_progress(self, message: str, fraction: float | None = None) -> None:
        """Tell the caller how far the tool got; ``fraction`` is between 0 and 1 when known."""
        if fraction is not None and not 0.0 <= fraction <= 1.0:
            raise ValueError(f"progress fraction must be between 0 and 1; got {fraction!r}")
        self.progress(message, fraction)

    @property
    def is_cancelled(self) -> bool:
        """True once the run this call belongs to was cancelled."""
        return self.cancelled is not None and self.cancelled.is_set()
