"""What the loop needs from its host: a small Protocol (:class:`LoopHost`), so the loop never
imports the host, and the fast paths the host chose (:class:`Pipeline`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from ..events import Event

if TYPE_CHECKING:
    from ..adapters import ProviderAdapter
    from ..config import Config
    from ..tools import Tool


@attrs.frozen(kw_only=True)
class Pipeline:
    """How a host runs the stages the built-in plugins implement, decided once per host.

    When only the built-in implementations of a hook are registered, the loop calls them directly
    (same answers, none of pluggy's machinery per call); any plugin's implementation switches that
    stage back to the hook.
    """

    direct_resolve: bool
    """Only the built-in ``toolwire_resolve_function``: ask the tools themselves."""
    direct_instructions: bool
    """Only the built-in ``toolwire_system_prompt_instructions``: take the tools' own."""
    direct_execution: bool | None
    """None: call ``toolwire_execute_tool``; else run the tool inline, True with the built-in
    ``[policy]`` check before it."""
    request_context: bool
    """A plugin implements ``toolwire_request_context``: gather each round's context."""
    refusal_reason: Callable[[Tool], str | None]
    """Why ``[policy]`` refuses every call of a tool (None when it does not)."""
    approval_reason: Callable[[Tool], str | None]
    """Why ``[policy]`` wants a call of a tool approved first (None when it does not)."""
    access_reason: Callable[[Tool, Mapping[str, Any]], str | None] = lambda tool, arguments: None
    """Why ``[policy]`` refuses a call for a path argument outside the allowed roots (None when
    it does not); asked inline when :attr:`direct_execution` is True."""
    begin_trace: Callable[[str], Any]
    """Start the trace of the run with this id (per ``[trace]``); returns what :attr:`end_trace`
    takes."""
    end_trace: Callable[[Any], None]
    """Close the trace :attr:`begin_trace` started."""


class LoopHost(Protocol):
    """The host as the loop sees it (:class:`toolwire.Host` is one)."""

    @property
    def config(self) -> Config: ...

    @property
    def hook(self) -> Any: ...

    @property
    def tools(self) -> Mapping[str, Tool]: ...

    @property
    def pipeline(self) -> Pipeline: ...

    def emit(self, event: Event) -> None: ...

    def plugin_settings(self, plugin: str | None) -> Any: ...

    async def get_adapter(self) -> ProviderAdapter: ...
