"""What the stages of a run see of the loop (:class:`LoopView`): its host, config, pipeline and
ledger, where events go, and how what is shown is redacted."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from .._redact import redacted_message
from ..events import Event, ToolCallArgumentsDelta
from ..messages import AssistantMessage, ToolCall
from ._admission import every_sensitive, sensitive_of, sensitive_of_call

if TYPE_CHECKING:
    from .._trust import TrustLevel
    from ..config import Config
    from ._execution import CoarseBounds
    from ._ledger import Ledger
    from ._offer import OfferCache
    from ._protocol import LoopHost
    from ._state import RunState

_NONE: frozenset[str] = frozenset()


class LoopView:
    """The loop as the stages of one run see it: what they read, and where events go.

    Built by the driver when a run starts (so a ``ledger`` or ``retry_backoff`` set on the loop
    before the run applies to it); the stages take it explicitly instead of sharing the loop.
    """

    __slots__ = (
        "coarse",
        "config",
        "event_loop",
        "host",
        "ledger",
        "limited",
        "offers",
        "pipeline",
        "retry_backoff",
        "retry_backoff_max",
        "sensitive_in",
        "services",
        "settings",
        "thread",
        "trust",
    )

    def __init__(
        self,
        host: LoopHost,
        *,
        ledger: Ledger | None,
        trust: TrustLevel,
        retry_backoff: float,
        retry_backoff_max: float,
        services: Mapping[str, Any],
        offers: OfferCache | None = None,
        coarse: CoarseBounds | None = None,
    ) -> None:
        self.host = host
        self.offers = offers
        self.coarse = coarse
        self.config: Config = host.config
        self.limited = self.config.limits.any  # a limit of [limits] is set: check each round
        self.pipeline = host.pipeline
        self.ledger = ledger
        self.trust = trust
        self.retry_backoff = retry_backoff
        self.retry_backoff_max = retry_backoff_max
        self.services = services
        self.thread = threading.get_ident()
        self.event_loop: asyncio.AbstractEventLoop | None = None
        self.settings: dict[str | None, Any] = {}  # plugin settings, looked up once per plugin
        # The tool mapping last asked whether any tool has sensitive arguments, and the answer.
        self.sensitive_in: tuple[Mapping[str, Any], bool] | None = None

    def bind(self) -> None:
        """Remember the thread and event loop of the run (progress from other threads goes
        through this loop)."""
        self.event_loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()

    def plugin_settings(self, plugin: str | None) -> Any:
        """The settings of the plugin ``plugin`` (None when the host has none for it), asked
        of the host once per run."""
        try:
            return self.settings[plugin]
        except KeyError:
            pass
        try:
            settings = self.host.plugin_settings(plugin)
        except Exception:
            settings = None
        self.settings[plugin] = settings
        return settings

    def any_sensitive(self) -> bool:
        """Whether any registered tool has sensitive arguments (asked again only when the
        host's tool mapping changes): without one, nothing a call shows is redacted."""
        tools = self.host.tools
        known = self.sensitive_in
        if known is None or known[0] is not tools:
            known = self.sensitive_in = (tools, bool(every_sensitive(tools)))
        return known[1]

    def sensitive(self, name: str) -> frozenset[str]:
        """The arguments to redact in a call named ``name`` wherever it is shown (the tool's,
        whatever spelling the model used: see :func:`~toolwire.loop._admission.sensitive_of`)."""
        if not self.any_sensitive():
            return _NONE
        return sensitive_of(self.host.tools, self.config.loop, name)

    def sensitive_call(self, call: ToolCall) -> frozenset[str]:
        """:meth:`sensitive` for a whole call: a bridge call (``tool_call``) by the tool it
        names, inside its arguments."""
        if not self.any_sensitive():
            return _NONE
        return sensitive_of_call(self.host.tools, self.config.loop, call)

    def shown(self, message: AssistantMessage) -> AssistantMessage:
        """The model's answer as events show it: each call's sensitive arguments redacted."""
        if not self.any_sensitive():
            return message
        return redacted_message(
            message, lambda p: self.sensitive_call(p) if isinstance(p, ToolCall) else _NONE
        )

    def emit(self, state: RunState, event: Event) -> None:
        """Record ``event`` in the run, then give it to the host's observers and the run's sink."""
        if isinstance(event, ToolCallArgumentsDelta) and event.partial_arguments is not None:
            # The partial value is the parser's live object, right only at emit time; the run
            # keeps the delta text, from which the arguments at any point can be rebuilt.
            state.events.append(_without_partial(event))
        else:
            state.events.append(event)
        self.host.emit(event)
        if state.control.sink is not None:
            state.control.sink(event)


def _without_partial(event: ToolCallArgumentsDelta) -> ToolCallArgumentsDelta:
    """``event`` without its partial arguments (built directly: this runs on every delta)."""
    if type(event) is not ToolCallArgumentsDelta:
        return attrs.evolve(event, partial_arguments=None)
    return ToolCallArgumentsDelta(
        run_id=event.run_id,
        round=event.round,
        parent=event.parent,
        call_id=event.call_id,
        delta=event.delta,
    )
