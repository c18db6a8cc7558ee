"""Run events turned into the small view messages the chat page applies, one by one.

A view message is a JSON object with a ``kind``. Streaming kinds (argument pieces, text pieces,
the status line, progress) matter only while a turn runs; the others are also kept in the
conversation's log, so that replaying them rebuilds the page. Argument pieces are appended, never
re-sent: a long argument costs the server and the page time linear in its size.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from toolwire import Tool, ToolResult
from toolwire.events import (
    ArgumentScanner,
    ContentFiltered,
    DuplicateSuppressed,
    Event,
    InvalidArguments,
    LimitReached,
    PluginFailed,
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

View = dict[str, Any]
"""One view message."""

STREAMING_KINDS = frozenset(
    {"status", "status_clear", "text", "arg_key", "arg_append", "card_progress"}
)
"""View kinds that are not kept in the conversation log (their end state is sent again)."""

RESULT_TEXT_LIMIT = 64 * 1024
"""Characters of a result the page shows; the rest is cut with a note."""


def tool_card(tool: Tool | None, name: str, title: str | None = None) -> View:
    """What a card shows about its tool: title (``title``, translated, when given), icon, side
    effects and approval."""
    if tool is None:
        return {"title": name, "icon": None, "risk": ["unknown tool"], "approval": False}
    return {
        "title": title or tool.title or name,
        "icon": tool.icon,
        "risk": list(tool.policy.risk),
        "approval": tool.policy.requires_approval,
    }


def result_view(result: ToolResult) -> View:
    """A result as the card shows it: status, text (capped), data as JSON, sources."""
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
        "sources": [{"url": s.url, "title": s.title} for s in result.sources],
    }


class ViewTranslator:
    """Turns the events of one conversation's runs into view messages.

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

    @staticmethod
    def card_key(run_id: str, call_id: str) -> str:
        """The page's key of a call's card (call ids are unique only within a run)."""
        return f"{run_id}/{call_id}"

    def completed(self, card: str) -> bool:
        """True once the card's call was shown complete (its final arguments were sent)."""
        return card in self._completed

    def _open(self, event: Event, call_id: str, name: str) -> list[View]:
        card = self.card_key(event.run_id, call_id)
        if card in self._opened:
            return []
        self._opened.add(card)
        return [
            {
                "kind": "card_open",
                "card": card,
                "call_id": call_id,
                "name": name,
                **self._card(name),
            }
        ]

    def _card(self, name: str) -> View:
        tool = self._tool_of(name)
        title = self._title_of(tool) if tool is not None and self._title_of is not None else None
        return tool_card(tool, name, title)

    def _call_views(self, event: Event, call: ToolCall) -> list[View]:
        out = self._open(event, call.id, call.name)
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
        if call.provider_executed:
            # The provider ran it and keeps its result in its own turn: the card ends here.
            self._resulted.add(card)
            out.append(
                {
                    "kind": "card_result",
                    "card": card,
                    "status": "provider",
                    "text": "Run by the provider.",
                    "data": None,
                    "truncated": False,
                    "sources": [],
                }
            )
        return out

    def translate(self, event: Event) -> list[View]:
        """The view messages one event stands for (none for events the page does not show)."""
        turn = f"{event.run_id}:{event.round}"
        if isinstance(event, RequestSent):
            return [{"kind": "status", "text": "The model is deciding…"}]
        if isinstance(event, ThinkingDelta):
            return [{"kind": "status", "text": "The model is thinking…"}]
        if isinstance(event, ProviderRetry):
            return [
                {
                    "kind": "status",
                    "text": f"The provider asked to wait ({event.reason}); retrying in "
                    f"{event.delay:g} s",
                }
            ]
        if isinstance(event, TextDelta):
            return [{"kind": "status_clear"}, {"kind": "text", "turn": turn, "text": event.text}]
        if isinstance(event, ToolCallStarted):
            card = self.card_key(event.run_id, event.call_id)
            self._arguments[card] = ArgumentScanner()
            return [{"kind": "status_clear"}, *self._open(event, event.call_id, event.name)]
        if isinstance(event, ToolCallArgumentsDelta):
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
        if isinstance(event, ToolCallCompleted):
            return self._call_views(event, event.call)
        if isinstance(event, ResponseReceived):
            out: list[View] = [{"kind": "status_clear"}]
            text = event.message.text
            if text:
                out.append({"kind": "text_final", "turn": turn, "text": text})
            for call in event.message.tool_calls:
                if self.card_key(event.run_id, call.id) not in self._opened:
                    out += self._call_views(event, call)
            return out
        if isinstance(event, ToolStarted):
            card = self.card_key(event.run_id, event.call_id)
            return [
                *self._open(event, event.call_id, event.name),
                {"kind": "card_running", "card": card, "arguments": dict(event.arguments)},
            ]
        if isinstance(event, ToolProgress):
            card = self.card_key(event.run_id, event.call_id)
            return [
                {
                    "kind": "card_progress",
                    "card": card,
                    "message": event.message,
                    "fraction": event.fraction,
                }
            ]
        if isinstance(event, ToolCompleted | ToolFailed | ToolBlockedEvent | ToolDenied):
            card = self.card_key(event.run_id, event.call_id)
            self._resulted.add(card)
            return [
                *self._open(event, event.call_id, event.name),
                {"kind": "card_result", "card": card, **result_view(event.result)},
            ]
        if isinstance(event, ToolDeferred):
            card = self.card_key(event.run_id, event.call_id)
            return [{"kind": "card_note", "card": card, "text": f"Waiting: {event.reason}"}]
        if isinstance(event, UnknownTool):
            offered = ", ".join(event.offered) or "none"
            return [
                {
                    "kind": "warning",
                    "text": f"The model called {event.name!r}, which is not offered "
                    f"(offered: {offered}); {event.action}",
                }
            ]
        if isinstance(event, InvalidArguments):
            card = self.card_key(event.run_id, event.call_id)
            return [
                {
                    "kind": "card_note",
                    "card": card,
                    "text": f"Arguments {event.recovery}: {event.reason}",
                }
            ]
        if isinstance(event, DuplicateSuppressed):
            card = self.card_key(event.run_id, event.call_id)
            return [
                {
                    "kind": "card_note",
                    "card": card,
                    "text": f"Not run again: the same call was made as {event.first_call_id}",
                }
            ]
        if isinstance(event, LimitReached):
            return [{"kind": "warning", "text": f"Limit reached: {event.limit} = {event.value}"}]
        if isinstance(event, ContentFiltered):
            # The report names where the content came from (the tool and its source).
            return [{"kind": "warning", "filter": True, "text": event.report}]
        if isinstance(event, PluginFailed):
            return [
                {
                    "kind": "warning",
                    "text": f"Plugin {event.plugin} failed in {event.hook}: {event.error}",
                }
            ]
        if isinstance(event, RunFinished):
            self._arguments.clear()
            return [
                {"kind": "status_clear"},
                {"kind": "finished", "stop_reason": event.stop_reason, "detail": event.detail},
            ]
        return []

    def settle(self, run: Run) -> list[View]:
        """Results for the cards the run's events left open (calls answered by a cancellation,
        or cut off before they were complete)."""
        out: list[View] = []
        for record in run.tool_calls:
            card = self.card_key(run.id, record.call.id)
            if record.result is not None and card not in self._resulted:
                self._resulted.add(card)
                out.append({"kind": "card_result", "card": card, **result_view(record.result)})
        for card in sorted(self._opened - self._resulted):
            self._resulted.add(card)
            out.append(
                {
                    "kind": "card_result",
                    "card": card,
                    "status": "not_run",
                    "text": "The turn ended before this call ran.",
                    "data": None,
                    "truncated": False,
                    "sources": [],
                }
            )
        return out


def compact(views: list[View]) -> list[View]:
    """The views worth keeping in the log: the streaming kinds are left out."""
    return [v for v in views if v.get("kind") not in STREAMING_KINDS]
