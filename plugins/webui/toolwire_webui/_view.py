"""Run events turned into the small view messages the chat page applies, one by one.

A view message is a JSON object with a ``kind``. Streaming kinds (argument pieces, text pieces,
the status line, progress) matter only while a turn runs; the others are also kept in the
conversation's log, so that replaying them rebuilds the page. Argument pieces are appended, never
re-sent: a long argument costs the server and the page time linear in its size.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from toolwire import Tool, ToolResult
from toolwire.events import (
    ArgumentScanner,
    ContentFiltered,
    DuplicateSuppressed,
    Event,
    EventVisitor,
    InvalidArguments,
    LimitReached,
    PluginFailed,
    ProviderFallback,
    ProviderRetry,
    RequestSent,
    ResponseReceived,
    RunFinished,
    TextDelta,
    ThinkingDelta,
    ToolBlockedEvent,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolCompleted,
    ToolDeferred,
    ToolDenied,
    ToolFailed,
    ToolProgress,
    ToolStarted,
    UnknownTool,
)
from toolwire.loop import Run
from toolwire.messages import ToolCall
from toolwire.usage import describe_usage

from ._markdown import markdown_tree, safe_href

View = dict[str, Any]
"""One view message."""

STREAMING_KINDS = frozenset(
    {"status", "status_clear", "text", "arg_key", "arg_append", "card_progress"}
)
"""View kinds that are not kept in the conversation log (their end state is sent again)."""

RESULT_TEXT_LIMIT = 64 * 1024
"""Characters of a result the page shows; the rest is cut with a note."""


def tool_card(
    tool: Tool | None, name: str, title: str | None = None, *, provider: bool = False
) -> View:
    """What a card shows about its tool: title (``title``, translated, when given), icon, side
    effects and approval; a call the provider runs itself says so."""
    if provider:
        return {"title": name, "icon": None, "risk": [], "approval": False, "provider": True}
    if tool is None:
        return {"title": name, "icon": None, "risk": ["unknown tool"], "approval": False}
    return {
        "title": title or tool.title or name,
        "icon": tool.icon,
        "risk": list(tool.policy.risk),
        "approval": tool.policy.requires_approval,
    }


def _source_view(url: str, title: str | None) -> View:
    return {"url": url, "title": title, "link": safe_href(url) is not None}


def result_view(result: ToolResult) -> View:
    """A result as the card shows it: status, text (capped), data as JSON, sources (``link``:
    whether the page may make the address a link)."""
    text = result.content or ""
    truncated = len(text) > RESULT_TEXT_LIMIT
    data = None
    if result.data is not None:
        data = json.dumps(result.data, ensure_ascii=False, indent=2, default=str)
        if len(data) > RESULT_TEXT_LIMIT:
            data, truncated = data[:RESULT_TEXT_LIMIT], True
    if not text and data is None:
        text = result.model_text()
    return {
        "status": result.status.value,
        "text": text[:RESULT_TEXT_LIMIT],
        "data": data,
        "truncated": truncated,
        "sources": [_source_view(s.url, s.title) for s in result.sources],
    }


class ViewTranslator(EventVisitor[list[View]]):
    """Turns the events of one conversation's runs into view messages (:meth:`translate`).

    :param tool_of: the registered tool of a name (None for a name the host does not know).
    :param title_of: a tool's title as people read it (``Host.tool_display``); default its own.
    """

    def __init__(
        self,
        tool_of: Callable[[str], Tool | None],
        title_of: Callable[[Tool], str] | None = None,
    ) -> None:
        self._tool_of = tool_of
        self._title_of = title_of
        self._arguments: dict[str, ArgumentScanner] = {}
        self._opened: set[str] = set()
        self._resulted: set[str] = set()
        self._completed: set[str] = set()
        self._provider: set[str] = set()  # cards of calls the provider runs
        self._sources: dict[str, dict[str, View]] = {}  # run id → url → source, in order

    @staticmethod
    def card_key(run_id: str, call_id: str) -> str:
        """The page's key of a call's card (call ids are unique only within a run)."""
        return f"{run_id}/{call_id}"

    def completed(self, card: str) -> bool:
        """True once the card's call was shown complete (its final arguments were sent)."""
        return card in self._completed

    def _open(self, event: Event, call_id: str, name: str, *, provider: bool = False) -> list[View]:
        card = self.card_key(event.run_id, call_id)
        if provider:
            self._provider.add(card)
        if card in self._opened:
            return []
        self._opened.add(card)
        return [
            {
                "kind": "card_open",
                "card": card,
                "call_id": call_id,
                "name": name,
                "at": time.time(),
                **self._card(name, provider),
            }
        ]

    def _card(self, name: str, provider: bool = False) -> View:
        tool = None if provider else self._tool_of(name)
        title = self._title_of(tool) if tool is not None and self._title_of is not None else None
        return tool_card(tool, name, title, provider=provider)

    def _note_sources(self, run_id: str, result: ToolResult) -> None:
        known = self._sources.setdefault(run_id, {})
        for source in result.sources:
            seen = known.get(source.url)
            if seen is None or (seen["title"] is None and source.title):
                known[source.url] = _source_view(source.url, source.title)

    def _card_result(self, event: Event, call_id: str, result: ToolResult) -> View:
        self._note_sources(event.run_id, result)
        view = {
            "kind": "card_result",
            "card": self.card_key(event.run_id, call_id),
            "at": time.time(),
            **result_view(result),
        }
        numbers = list(self._sources.get(event.run_id, {}))
        for source in view["sources"]:
            source["n"] = numbers.index(source["url"]) + 1
        return view

    def _answer(self, turn: str, run_id: str, text: str, final: bool) -> View:
        """The complete text of one answer, as Markdown; the final answer of a run also lists
        the run's sources, which its ``[n]`` markers link to."""
        sources = list(self._sources.get(run_id, {}).values()) if final else []
        view: View = {"kind": "text_final", "turn": turn, "text": text}
        blocks = markdown_tree(text, len(sources))
        if blocks is not None:
            view["blocks"] = blocks
        if sources:
            view["sources"] = [{**s, "n": i} for i, s in enumerate(sources, 1)]
        return view

    def _call_views(self, event: Event, call: ToolCall) -> list[View]:
        out = self._open(event, call.id, call.name, provider=call.provider_executed)
        card = self.card_key(event.run_id, call.id)
        self._arguments.pop(card, None)
        self._completed.add(card)
        out.append(
            {
                "kind": "card_args",
                "card": card,
                "arguments": dict(call.arguments) if call.arguments is not None else None,
                "raw": call.raw_arguments if call.arguments is None else None,
                "invalid": call.invalid_reason,
                "provider": call.provider_executed,
            }
        )
        return out

    def translate(self, event: Event) -> list[View]:
        """The view messages one event stands for (none for events the page does not show); the
        events of a run started as a tool become notes in the card of the call that started it."""
        if event.parent is not None:
            return self._nested(event)
        return self.visit(event)

    def _nested(self, event: Event) -> list[View]:
        """A run started as a tool: its calls and how it ended, as notes in the card of the
        call that started it."""
        parent = event.parent
        assert parent is not None
        card = self.card_key(parent.run_id, parent.call_id)
        if isinstance(event, ToolStarted):
            text = f"↳ {event.name}"
        elif isinstance(event, ToolCompleted | ToolFailed | ToolBlockedEvent | ToolDenied):
            text = f"↳ {event.name}: {event.result.status.value}"
        elif isinstance(event, RunFinished) and event.stop_reason != "answered":
            text = f"↳ stopped: {event.stop_reason}"
        else:
            return []
        return [{"kind": "card_note", "card": card, "text": text}]

    # -- events (``visit`` gives the view messages one event stands for) -----------------------

    def on_event(self, event: Event) -> list[View]:
        """Nothing: the page does not show this event."""
        return []

    def on_request_sent(self, event: RequestSent) -> list[View]:
        return [{"kind": "status", "text": "The model is deciding…"}]

    def on_thinking_delta(self, event: ThinkingDelta) -> list[View]:
        return [{"kind": "status", "text": "The model is thinking…"}]

    def on_provider_retry(self, event: ProviderRetry) -> list[View]:
        return [
            {
                "kind": "status",
                "text": f"The provider asked to wait ({event.reason}); retrying in "
                f"{event.delay:g} s",
            }
        ]

    def on_text_delta(self, event: TextDelta) -> list[View]:
        turn = f"{event.run_id}:{event.round}"
        return [{"kind": "status_clear"}, {"kind": "text", "turn": turn, "text": event.text}]

    def on_tool_call_started(self, event: ToolCallStarted) -> list[View]:
        card = self.card_key(event.run_id, event.call_id)
        self._arguments[card] = ArgumentScanner()
        provider = event.provider_executed
        return [
            {"kind": "status_clear"},
            *self._open(event, event.call_id, event.name, provider=provider),
        ]

    def on_tool_call_arguments_delta(self, event: ToolCallArgumentsDelta) -> list[View]:
        card = self.card_key(event.run_id, event.call_id)
        scanner = self._arguments.get(card)
        if scanner is None or not event.delta:
            return []
        return [
            {"kind": "arg_key", "card": card, "key": key}
            if text is None
            else {"kind": "arg_append", "card": card, "key": key, "text": text}
            for key, text in scanner.feed(event.delta)
        ]

    def on_tool_call_completed(self, event: ToolCallCompleted) -> list[View]:
        return self._call_views(event, event.call)

    def on_response_received(self, event: ResponseReceived) -> list[View]:
        out: list[View] = [{"kind": "status_clear"}]
        text = event.message.text
        calls = event.message.tool_calls
        if text:
            final = not any(not c.provider_executed for c in calls)
            out.append(self._answer(f"{event.run_id}:{event.round}", event.run_id, text, final))
        for call in calls:
            if self.card_key(event.run_id, call.id) not in self._opened:
                out += self._call_views(event, call)
        return out

    def on_tool_started(self, event: ToolStarted) -> list[View]:
        card = self.card_key(event.run_id, event.call_id)
        return [
            *self._open(event, event.call_id, event.name),
            {
                "kind": "card_running",
                "card": card,
                "arguments": dict(event.arguments),
                "at": time.time(),
            },
        ]

    def on_tool_progress(self, event: ToolProgress) -> list[View]:
        card = self.card_key(event.run_id, event.call_id)
        return [
            {
                "kind": "card_progress",
                "card": card,
                "message": event.message,
                "fraction": event.fraction,
            }
        ]

    def on_tool_completed(
        self, event: ToolCompleted | ToolFailed | ToolBlockedEvent | ToolDenied
    ) -> list[View]:
        card = self.card_key(event.run_id, event.call_id)
        self._resulted.add(card)
        view = self._card_result(event, event.call_id, event.result)
        if card in self._provider:
            view["provider"] = True
        return [*self._open(event, event.call_id, event.name), view]

    on_tool_failed = on_tool_completed
    on_tool_blocked = on_tool_completed
    on_tool_denied = on_tool_completed

    def on_tool_deferred(self, event: ToolDeferred) -> list[View]:
        card = self.card_key(event.run_id, event.call_id)
        return [{"kind": "card_note", "card": card, "text": f"Waiting: {event.reason}"}]

    def on_unknown_tool(self, event: UnknownTool) -> list[View]:
        offered = ", ".join(event.offered) or "none"
        return [
            {
                "kind": "warning",
                "text": f"The model called {event.name!r}, which is not offered "
                f"(offered: {offered}); {event.action}",
            }
        ]

    def on_invalid_arguments(self, event: InvalidArguments) -> list[View]:
        card = self.card_key(event.run_id, event.call_id)
        if event.recovery != "repaired":
            return []  # the card says it already: its arguments and its result
        return [
            {
                "kind": "card_note",
                "card": card,
                "text": f"Arguments {event.recovery}: {event.reason}",
            }
        ]

    def on_duplicate_suppressed(self, event: DuplicateSuppressed) -> list[View]:
        card = self.card_key(event.run_id, event.call_id)
        return [
            {
                "kind": "card_note",
                "card": card,
                "text": f"Not run again: the same call was made as {event.first_call_id}",
            }
        ]

    def on_limit_reached(self, event: LimitReached) -> list[View]:
        return [{"kind": "warning", "text": f"Limit reached: {event.limit} = {event.value}"}]

    def on_provider_fallback(self, event: ProviderFallback) -> list[View]:
        return [
            {
                "kind": "warning",
                "text": f"{event.failed} could not answer ({event.error}); asking {event.next}",
            }
        ]

    def on_content_filtered(self, event: ContentFiltered) -> list[View]:
        # The report names where the content came from (the tool and its source).
        return [{"kind": "warning", "filter": True, "text": event.report}]

    def on_plugin_failed(self, event: PluginFailed) -> list[View]:
        return [
            {
                "kind": "warning",
                "text": f"Plugin {event.plugin} failed in {event.hook}: {event.error}",
            }
        ]

    def on_run_finished(self, event: RunFinished) -> list[View]:
        self._arguments.clear()
        return [
            {"kind": "status_clear"},
            {"kind": "finished", "stop_reason": event.stop_reason, "detail": event.detail},
        ]

    on_run_started = on_event
    on_round_started = on_event
    on_round_finished = on_event
    on_tool_omitted = on_event
    on_tool_resolution_corrected = on_event
    on_tools_deferred = on_event
    on_tools_promoted = on_event
    on_tool_choice_degraded = on_event
    on_request_body = on_event
    on_tool_call_recovered = on_event
    on_tool_approved = on_event
    on_arguments_adjusted = on_event
    on_invalid_output = on_event
    on_context_compacted = on_event

    def settle(self, run: Run) -> list[View]:
        """Results for the cards the run's events left open (calls answered by a cancellation,
        or cut off before they were complete); a call the cancellation answered is labelled
        ``cancelled`` whatever its events said."""
        out: list[View] = []
        for record in run.tool_calls:
            card = self.card_key(run.id, record.call.id)
            cancelled = record.outcome == "cancelled"
            if record.result is not None and (cancelled or card not in self._resulted):
                self._resulted.add(card)
                view = {"kind": "card_result", "card": card, "at": time.time()}
                view.update(result_view(record.result))
                if cancelled:
                    view["status"] = "cancelled"
                out.append(view)
            elif record.outcome == "provider_executed" and card not in self._resulted:
                self._resulted.add(card)
                out.append(_ended(card, "provider", "Run by the provider."))
        for card in sorted(self._opened - self._resulted):
            self._resulted.add(card)
            out.append(_ended(card, "not_run", "The turn ended before this call ran."))
        self._sources.pop(run.id, None)
        spent = describe_usage(run.usage, run.cost)
        if spent:
            out.append({"kind": "usage", "text": spent, "cost": run.cost})
        return out


def _ended(card: str, status: str, text: str) -> View:
    return {
        "kind": "card_result",
        "card": card,
        "at": time.time(),
        "status": status,
        "text": text,
        "data": None,
        "truncated": False,
        "sources": [],
    }


def compact(views: list[View]) -> list[View]:
    """The views worth keeping in the log: the streaming kinds are left out."""
    return [v for v in views if v.get("kind") not in STREAMING_KINDS]
