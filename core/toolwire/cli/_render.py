"""Runs on a terminal: live tool-call cards, the status line, approval prompts, ``toolwire run``.

:class:`TerminalRenderer` turns a run's events into text as they happen. On a terminal it uses
colour and redraws one transient line in place (the status line while the model decides, a
progress bar while a tool runs); anywhere else it writes plain, uncoloured lines and nothing
transient. Everything else is appended, never redrawn: a call's arguments grow by the text each
delta adds, so a long argument costs time linear in its size. ``toolwire run`` and
``toolwire chat`` both render through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import signal
import sys
import unicodedata
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from .._effects import SideEffect
from ..chat import Grant, GrantError, Grants, GrantStore, tool_server
from ..config import ConfigError
from ..events import (
    ArgumentScanner,
    ContentFiltered,
    ContextCompacted,
    DuplicateSuppressed,
    Event,
    EventVisitor,
    InvalidArguments,
    InvalidOutput,
    LimitReached,
    PluginFailed,
    ProviderFallback,
    ProviderRetry,
    RequestSent,
    ResponseReceived,
    RoundStarted,
    RunFinished,
    RunStarted,
    TextDelta,
    ThinkingDelta,
    ToolBlockedEvent,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolChoiceDegraded,
    ToolCompleted,
    ToolDeferred,
    ToolDenied,
    ToolFailed,
    ToolProgress,
    ToolStarted,
    UnknownTool,
)
from ..host._host import HostError
from ..host._ready import ready_for_runs
from ..loop._codec import REDACTED, redact_arguments
from ..loop._run import Approve, Decision, DeferredRequest, Deny, Run
from ..loop._state import Approver
from ..messages import AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage
from ..tools._errors import Retry
from ..tools._result import Source, ToolResult, ToolStatus
from ._collector import collector_for_runs
from ._markdown import LineStyler, has_markdown
from ._text import inert

if TYPE_CHECKING:
    from ..host._host import Host
    from ..tools import Tool

_RESULT_PREVIEW = 160
_ARGUMENT_PREVIEW = 60
ARGUMENT_LIMIT = 2000
"""Characters of one argument value a collapsed card shows; the rest is counted, not shown."""
RESULT_LIMIT = 64 * 1024
"""Characters of a result an expanded card shows."""
_BAR_WIDTH = 20
_MIN_BAR_WIDTH = 6
_CATCH_UP_TURNS = 100
_SEND_BACK = "The user sent this call back: call the tool differently, or answer without it."
_SGR_CODE = re.compile(r"\x1b\[[0-9;]*m")


def cells(text: str) -> int:
    """The terminal columns ``text`` takes (colour codes take none; wide characters two;
    combining marks none)."""
    text = _SGR_CODE.sub("", text)
    if text.isascii():
        return len(text)
    width = 0
    for char in text:
        if unicodedata.combining(char) or char in "\u200d\ufe0f":
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def fit(text: str, width: int) -> str:
    """``text`` (no colour codes) cut to ``width`` columns, with "…" when cut."""
    if cells(text) <= width:
        return text
    out: list[str] = []
    used = 0
    for char in text:
        size = cells(char)
        if used + size > width - 1:
            break
        out.append(char)
        used += size
    return "".join(out) + "…"


def _preview(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_arguments(arguments: Mapping[str, Any]) -> str:
    """Arguments as ``name=value, …`` with long values shortened."""
    parts = []
    for key, value in arguments.items():
        shown = json.dumps(value, ensure_ascii=False, default=str)
        parts.append(f"{key}={_preview(shown, _ARGUMENT_PREVIEW)}")
    return ", ".join(parts)


def _result_line(result: ToolResult) -> str:
    return _preview(result.model_text(), _RESULT_PREVIEW)


def render_event(event: Event, out: TextIO) -> None:
    """Write the line(s) one event stands for, in the compact one-line-per-event form (nothing
    for most internal events). :class:`TerminalRenderer` draws cards instead."""
    text = _COMPACT.visit(event)
    if text:
        out.write(text)


class _Notice(EventVisitor[str | None]):
    """The one-line warning an event outside a card stands for (None: not a warning)."""

    def on_event(self, event: Event) -> str | None:
        return None

    def on_unknown_tool(self, event: UnknownTool) -> str:
        offered = ", ".join(event.offered) or "none"
        return f"? unknown tool {event.name!r} ({event.action}; offered: {offered})"

    def on_invalid_arguments(self, event: InvalidArguments) -> str:
        return f"! {event.name}: arguments {event.recovery}: {event.reason}"

    def on_duplicate_suppressed(self, event: DuplicateSuppressed) -> str:
        return f"= {event.name}: same as call {event.first_call_id}, not run again"

    def on_limit_reached(self, event: LimitReached) -> str:
        return f"! limit reached: {event.limit} ({event.value})"

    def on_provider_retry(self, event: ProviderRetry) -> str:
        return f"… {event.api}: {event.reason}; retrying in {event.delay:g} s"

    def on_provider_fallback(self, event: ProviderFallback) -> str:
        return f"… {event.failed} could not answer ({event.error}); asking {event.next}"

    def on_invalid_output(self, event: InvalidOutput) -> str:
        return f"! answer {event.recovery} (attempt {event.attempt}): {event.reason}"

    def on_context_compacted(self, event: ContextCompacted) -> str:
        return (
            f"… context compacted: {len(event.cleared)} result(s) cleared, "
            f"{event.summarised} message(s) summarised (≈{event.tokens_before} → "
            f"{event.tokens_after} tokens)"
        )

    def on_plugin_failed(self, event: PluginFailed) -> str:
        return f"! plugin {event.plugin or '?'} failed in {event.hook}: {event.error}"

    def on_content_filtered(self, event: ContentFiltered) -> str:
        return f"⚠ content filter: {event.report}"

    def on_tool_choice_degraded(self, event: ToolChoiceDegraded) -> str:
        return f"… {event.detail}"

    def on_run_finished(self, event: RunFinished) -> str | None:
        if event.stop_reason == "answered":
            return None
        detail = f": {event.detail}" if event.detail else ""
        return f"[stopped: {event.stop_reason}{detail}]"

    on_run_started = on_event
    on_round_started = on_event
    on_round_finished = on_event
    on_tool_omitted = on_event
    on_tool_resolution_corrected = on_event
    on_tools_deferred = on_event
    on_tools_promoted = on_event
    on_request_sent = on_event
    on_request_body = on_event
    on_response_received = on_event
    on_text_delta = on_event
    on_thinking_delta = on_event
    on_tool_call_started = on_event
    on_tool_call_arguments_delta = on_event
    on_tool_call_completed = on_event
    on_tool_call_recovered = on_event
    on_tool_started = on_event
    on_tool_approved = on_event
    on_arguments_adjusted = on_event
    on_tool_progress = on_event
    on_tool_completed = on_event
    on_tool_failed = on_event
    on_tool_blocked = on_event
    on_tool_denied = on_event
    on_tool_deferred = on_event


_notice = _Notice().visit


class _Compact(EventVisitor[str | None]):
    """What the compact form writes for an event: a card's events as lines of their own, a
    warning indented under them (None: nothing)."""

    def on_event(self, event: Event) -> str | None:
        line = _notice(event)
        return None if line is None else f"  {line}\n"

    def on_text_delta(self, event: TextDelta) -> str:
        return event.text

    def on_tool_started(self, event: ToolStarted) -> str:
        return f"→ {event.name}({format_arguments(event.arguments)})\n"

    def on_tool_progress(self, event: ToolProgress) -> str:
        fraction = f" ({event.fraction:.0%})" if event.fraction is not None else ""
        return f"  … {event.name}: {event.message}{fraction}\n"

    def on_tool_completed(self, event: ToolCompleted) -> str:
        return f"  ✓ {event.name}: {_result_line(event.result)}\n"

    def on_tool_failed(self, event: ToolFailed) -> str:
        return f"  ✗ {event.name} failed: {_result_line(event.result)}\n"

    def on_tool_blocked(self, event: ToolBlockedEvent) -> str:
        return f"  ⊘ {event.name} blocked: {_result_line(event.result)}\n"

    def on_tool_denied(self, event: ToolDenied) -> str:
        return f"  ✗ {event.name} denied: {_result_line(event.result)}\n"

    def on_tool_deferred(self, event: ToolDeferred) -> str:
        return f"  ⏸ {event.name} ({event.call_id}) waits: {event.reason}\n"

    def on_run_finished(self, event: RunFinished) -> str | None:
        line = _notice(event)
        return None if line is None else f"{line}\n"

    on_unknown_tool = on_event
    on_invalid_arguments = on_event
    on_duplicate_suppressed = on_event
    on_limit_reached = on_event
    on_provider_retry = on_event
    on_provider_fallback = on_event
    on_invalid_output = on_event
    on_context_compacted = on_event
    on_plugin_failed = on_event
    on_content_filtered = on_event
    on_run_started = on_event
    on_round_started = on_event
    on_round_finished = on_event
    on_tool_omitted = on_event
    on_tool_resolution_corrected = on_event
    on_tools_deferred = on_event
    on_tools_promoted = on_event
    on_tool_choice_degraded = on_event
    on_request_sent = on_event
    on_request_body = on_event
    on_response_received = on_event
    on_thinking_delta = on_event
    on_tool_call_started = on_event
    on_tool_call_arguments_delta = on_event
    on_tool_call_completed = on_event
    on_tool_call_recovered = on_event
    on_tool_approved = on_event
    on_arguments_adjusted = on_event


_COMPACT = _Compact()


_SGR = {
    "dim": "2",
    "bold": "1",
    "ok": "32",
    "bad": "31",
    "warn": "33",
    "tool": "36",
    "key": "35",
    "italic": "3",
    "underline": "4",
}


class _Palette:
    """SGR colours when ``on``, plain text otherwise."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, style: str, text: str) -> str:
        if not self.on or not text:
            return text
        return f"\x1b[{_SGR[style]}m{text}\x1b[0m"


class _Card:
    """What the renderer keeps of one call's card while its arguments stream."""

    __slots__ = ("call_id", "hidden", "key", "label", "name", "pieces", "scanner", "shown")

    def __init__(self, call_id: str, name: str, label: str) -> None:
        self.call_id = call_id
        self.name = name
        self.label = label  # how lines outside its header name the call
        self.scanner = ArgumentScanner()
        self.key: str | None = None  # the key whose value is arriving
        self.shown = 0  # characters of that value written
        self.hidden = 0  # characters of that value held back (collapsed card)
        self.pieces = 0  # argument pieces written in all


_STATUS_MARK = {
    ToolStatus.OK: ("✓", "ok"),
    ToolStatus.ERROR: ("✗", "bad"),
    ToolStatus.BLOCKED: ("⊘", "bad"),
    ToolStatus.DENIED: ("✗", "bad"),
}


class TerminalRenderer(EventVisitor[None]):
    """Renders a run's events as they happen, one card per tool call.

    While the model decides a status line shows; a card opens when the model starts a call
    (``ToolCallStarted``) with the tool's icon, title, name and declared side effects; the
    arguments fill in key by key as they stream (each delta appended, never redrawn), a progress
    bar moves while the tool runs, and the card closes with the result's status, a preview and
    its sources. Content-filter warnings (also "the filter could not run"), unknown tools,
    limits and failing plugins show as warnings; calls the provider ran itself get a card too.
    The sources of the whole run follow the answer under their own heading.

    Call it with each event (it is a ``toolwire_event``-shaped callable).

    :param out: where to write.
    :param tool_of: the registered tool of a name, for the card's title, icon and risk (None:
        cards show the name only).
    :param live: colour and a redrawn transient line (status, progress); default: whether
        ``out`` is a terminal. ``NO_COLOR`` in the environment turns the colour off.
    :param expanded: show every argument and result in full (default: values over
        :data:`ARGUMENT_LIMIT` characters are cut, a result is one preview line).
    :param title_of: a tool's title as people read it (``Host.tool_display``, translated by
        ``[i18n]``); default the tool's own.

    When several calls are open at once, every result and progress line names its call. The
    transient line always fits the terminal's width (measured at each draw), so a narrow or
    resized terminal keeps no stale copies; call :meth:`resized` on ``SIGWINCH`` to redraw it
    at once. Answers are styled as Markdown line by line (:mod:`~toolwire.cli._markdown`).
    """

    def __init__(
        self,
        out: TextIO,
        *,
        tool_of: Callable[[str], Tool | None] | None = None,
        live: bool | None = None,
        expanded: bool = False,
        title_of: Callable[[Tool], str | None] | None = None,
    ) -> None:
        self.out = out
        self.live = _is_terminal(out) if live is None else live
        self.expanded = expanded
        self._tool_of = tool_of
        self._title_of = title_of
        self._transient_cells = 0  # columns the transient line took when drawn
        self._transient_fit: Callable[[int], str] | None = None  # draws it for a width
        self._opened = 0  # cards opened in this run (past one, lines name their call)
        self._provider: set[str] = set()  # open cards of calls the provider runs
        self._answer = ""  # the streamed answer's line being written (live only)
        self._styler = LineStyler(self._paint_style)
        self._paint = _Palette(self.live and not os.environ.get("NO_COLOR"))
        self._streamed = False
        self._line_open = False  # the cursor is after streamed text, not at a line start
        self._transient: str | None = None  # the transient line shown (live only)
        self._cards: dict[str, _Card] = {}
        self._current: _Card | None = None  # the card whose arguments end at the cursor
        self._shown: set[str] = set()  # calls whose arguments are complete on screen
        self._sources: dict[str, Source] = {}
        self._ending: str | None = None  # the run ended; its stop line waits for settle()

    # -- writing ---------------------------------------------------------------------------

    def _paint_style(self, style: str, text: str) -> str:
        return self._paint(style, text)

    def columns(self) -> int:
        """The terminal's width now (80 when it cannot be asked)."""
        try:
            return os.get_terminal_size(self.out.fileno()).columns or 80
        except (AttributeError, ValueError, OSError):
            return 80

    def _clear(self) -> None:
        if self._transient is not None:
            # A terminal made narrower since the line was drawn may have wrapped it: clear
            # every row it takes now.
            rows = max(1, -(-self._transient_cells // max(1, self.columns())))
            self.out.write("\r\x1b[2K" + "\x1b[1A\x1b[2K" * (rows - 1))
            self._transient = None
            self._transient_cells = 0

    def resized(self) -> None:
        """The terminal changed size: draw the transient line again, fitted to the new width."""
        shown, fitted = self._transient, self._transient_fit
        if shown is None:
            return
        self._clear()
        self._status(shown, fitted)
        self.out.flush()

    def _line(self, text: str) -> None:
        """Write ``text`` as whole line(s), ending whatever the cursor was in."""
        self._clear()
        if self._line_open:
            self.out.write("\n")
            self._line_open = False
            self._answer = ""
        self._current = None
        self.out.write(text + "\n")

    def _status(self, text: str, fitted: Callable[[int], str] | None = None) -> None:
        """Show ``text`` on the transient line (live only; plain output has none), cut to the
        terminal's width (``fitted`` makes the line for a width, when cutting is not enough)."""
        if not self.live or self._transient == text:
            return
        self._clear()
        if self._line_open:
            self.out.write("\n")
            self._line_open = False
            self._answer = ""
        self._current = None
        width = self.columns() - 1
        shown = fitted(width) if fitted is not None else text
        if cells(shown) > width:
            shown = self._paint("dim", fit(_SGR_CODE.sub("", shown), width))
        self.out.write(shown)
        self._transient = text
        self._transient_fit = fitted
        self._transient_cells = cells(shown)

    def pause(self) -> None:
        """Clear the transient line and end an open line, so a prompt starts on a clean line."""
        self._clear()
        if self._line_open:
            self.out.write("\n")
            self._line_open = False
            self._answer = ""
        self._current = None
        self.out.flush()

    def has_shown(self, call_id: str) -> bool:
        """True once the call's complete arguments are on screen (the current run's call)."""
        return call_id in self._shown

    # -- events ----------------------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        if event.parent is not None:  # a run started as a tool: its lines go in the call's card
            self._nested(event)
        else:
            self.visit(event)
        self.out.flush()

    def on_event(self, event: Event) -> None:
        """A warning on a line of its own, for an event that stands for one."""
        notice = _notice(event)
        if notice is not None:
            self._line(self._paint("warn", "  " + inert(notice)))

    def _ignore(self, event: Event) -> None:
        """Nothing to show."""

    def on_run_started(self, event: RunStarted) -> None:
        if self._ending is not None:  # the last run was not settled
            self._finish()
        self._shown.clear()
        self._opened = 0

    def on_round_started(self, event: RoundStarted) -> None:
        self._streamed = False

    def on_text_delta(self, event: TextDelta) -> None:
        self._text(event.text)

    def on_request_sent(self, event: RequestSent) -> None:
        self._status(self._paint("dim", "⋯ the model is deciding…"))

    def on_thinking_delta(self, event: ThinkingDelta) -> None:
        self._status(self._paint("dim", "⋯ the model is thinking…"))

    def on_tool_call_started(self, event: ToolCallStarted) -> None:
        self._open(event.call_id, event.name, event.provider_executed)

    def on_tool_call_arguments_delta(self, event: ToolCallArgumentsDelta) -> None:
        self._arguments_delta(event.call_id, event.delta)

    def on_tool_call_completed(self, event: ToolCallCompleted) -> None:
        self._complete(event.call)

    def on_tool_completed(
        self, event: ToolCompleted | ToolFailed | ToolBlockedEvent | ToolDenied
    ) -> None:
        self._result(event.call_id, event.name, event.result)

    on_tool_failed = on_tool_completed
    on_tool_blocked = on_tool_completed
    on_tool_denied = on_tool_completed

    def _refused(self, event: UnknownTool | DuplicateSuppressed | InvalidArguments) -> None:
        """The call is answered without running: its card closes with the warning."""
        notice = _notice(event)
        assert notice is not None
        self._close(event.call_id, event.name, self._paint("warn", inert(notice)))

    on_unknown_tool = _refused
    on_duplicate_suppressed = _refused

    def on_invalid_arguments(self, event: InvalidArguments) -> None:
        if event.recovery != "repaired":
            self._refused(event)
            return
        notice = _notice(event)
        assert notice is not None
        self._line(self._paint("warn", f"│ {inert(notice)}"))

    def on_tool_deferred(self, event: ToolDeferred) -> None:
        self._line(self._paint("warn", f"│ ⏸ waits: {inert(event.reason)}"))

    def on_provider_retry(self, event: ProviderRetry) -> None:
        if not self.live:
            self.on_event(event)
            return
        notice = _notice(event)
        assert notice is not None
        self._status(self._paint("dim", inert(notice)))

    def on_run_finished(self, event: RunFinished) -> None:
        notice = _notice(event)
        self._ending = self._paint("warn", inert(notice)) if notice is not None else ""
        if not self._cards:
            self._finish()

    on_limit_reached = on_event
    on_provider_fallback = on_event
    on_invalid_output = on_event
    on_context_compacted = on_event
    on_plugin_failed = on_event
    on_content_filtered = on_event
    on_round_finished = _ignore
    on_tool_omitted = _ignore
    on_tool_resolution_corrected = _ignore
    on_tools_deferred = _ignore
    on_tools_promoted = _ignore
    on_tool_choice_degraded = on_event
    on_request_body = _ignore
    on_tool_call_recovered = _ignore
    on_tool_approved = _ignore
    on_arguments_adjusted = _ignore

    def note(self, text: str) -> None:
        """A dim line of its own after the run (what the turn spent, say)."""
        self._clear()
        if self._line_open:
            self.out.write("\n")
            self._line_open = False
            self._answer = ""
        self._line(self._paint("dim", inert(text)))

    def _nested(self, event: Event) -> None:
        """The compact line(s) of an event of a run started as a tool, inside the card of the
        call that started it."""
        if isinstance(event, TextDelta):
            return
        shown = io.StringIO()
        render_event(event, shown)
        for line in shown.getvalue().splitlines():
            if line.strip():
                self._line(self._paint("dim", f"│   ↳ {inert(line.strip())}"))

    def settle(self, run: Run) -> None:
        """Close the cards the run's events left open (calls answered by a cancellation, calls
        deferred or cut off), then end the run's output. Call it once the stream has ended."""
        records = {record.call.id: record for record in run.tool_calls}
        for call_id, card in list(self._cards.items()):
            record = records.get(call_id)
            if record is not None and record.result is not None:
                self._result(call_id, card.name, record.result)
            elif record is not None and record.outcome == "deferred":
                self._close(call_id, card.name, self._paint("warn", "⏸ waits for a decision"))
            else:
                self._close(call_id, card.name, "not run: the turn ended before this call ran")
        if self._ending is None:
            self._ending = ""
        self._finish()
        self.out.flush()

    def _finish(self) -> None:
        """The end of a run: the stop line (when it did not answer) and the run's sources."""
        ending, self._ending = self._ending, None
        if ending:
            self._line(ending)
        self._clear()
        if self._line_open:
            self.out.write("\n")
            self._line_open = False
            self._answer = ""
        self._cards.clear()
        self._current = None
        self._write_sources()

    def _text(self, text: str) -> None:
        if not self._streamed:
            self._styler.reset()
            self._answer = ""
        self._streamed = True
        self._clear()
        if self._current is not None:  # text after a card
            if self._line_open:
                self.out.write("\n")
            self._current = None
            self._answer = ""
        text = inert(text)
        if not self.live:
            self.out.write(text)
            self._line_open = not text.endswith("\n")
            return
        # Each line is written as it arrives, then styled in place once it is complete.
        *complete, rest = text.split("\n")
        for piece in complete:
            self.out.write(piece)
            self._restyle(self._answer + piece)
            self.out.write("\n")
            self._answer = ""
        if rest:
            self.out.write(rest)
            self._answer += rest
        self._line_open = bool(rest) or (not complete and self._line_open)

    def _restyle(self, line: str) -> None:
        """Draw the complete ``line`` (just written, cursor at its end) again, styled."""
        if not self._paint.on or not line or not has_markdown(line):
            self._styler.style(line)  # keeps the fence state
            return
        styled = self._styler.style(line)
        if styled == line:
            return
        rows = max(1, -(-cells(line) // max(1, self.columns())))
        if rows > 4:  # a long paragraph: leave it as written rather than redraw many rows
            return
        self.out.write("\r\x1b[2K" + "\x1b[1A\x1b[2K" * (rows - 1) + styled)

    def _answer_text(self, text: str) -> None:
        """A whole answer at once (not streamed), styled line by line."""
        self._styler.reset()
        lines = inert(text).rstrip("\n").split("\n")
        styled = [self._styler.style(line) for line in lines] if self._paint.on else lines
        self.out.write("\n".join(styled) + "\n")

    def on_response_received(self, event: ResponseReceived) -> None:
        self._clear()
        if self._answer and self.live:
            self._restyle(self._answer)
            self._answer = ""
        if self._line_open:
            self.out.write("\n")
            self._line_open = False
            self._answer = ""
            self._current = None
        text = event.message.text
        if text and not self._streamed:
            self._answer_text(text)
        for call in event.message.tool_calls:
            if call.id not in self._shown:
                self._complete(call)
        for call_id in sorted(self._provider):
            card = self._cards.get(call_id)
            if card is not None:
                self._close(call_id, card.name, self._paint("ok", "◆ run by the provider"))
        self._provider.clear()

    # -- cards -----------------------------------------------------------------------------

    def _title(self, name: str) -> str:
        tool = self._tool_of(name) if self._tool_of is not None else None
        if tool is None:
            return inert(name, one_line=True)
        title = self._title_of(tool) if self._title_of is not None else None
        return inert(title or tool.title or name, one_line=True)

    def _header(self, name: str, provider: bool = False) -> str:
        tool = None if provider else self._tool_of(name) if self._tool_of is not None else None
        paint = self._paint
        if tool is None:
            tag = paint("dim", " · run by the provider") if provider else ""
            return f"╭ {paint('bold', inert(name))}{tag}"
        title = self._title(name)
        icon = f"{inert(tool.icon)} " if tool.icon else ""
        parts = [f"╭ {icon}{paint('bold', title)}"]
        if title != name:
            parts.append(paint("dim", f"({name})"))
        risk = " · ".join(tool.policy.risk)
        if tool.policy.requires_approval:
            risk += " · asks first"
        parts.append(paint("dim", f"· {risk}"))
        return " ".join(parts)

    def _open(self, call_id: str, name: str, provider: bool = False) -> _Card:
        card = self._cards.get(call_id)
        if card is None:
            card = self._cards[call_id] = _Card(call_id, name, self._title(name))
            self._opened += 1
            self._line(self._header(name, provider))
            self._current = card
        return card

    def _naming(self, call_id: str) -> str:
        """How a line outside a card's arguments names its call: by title when another card is
        open too, so each result and progress line is read under the right call."""
        card = self._cards.get(call_id)
        if card is None or self._opened < 2:
            return ""
        return f"{card.label}: "

    def _arguments_delta(self, call_id: str, delta: str) -> None:
        card = self._cards.get(call_id)
        if card is None or not delta:  # a sensitive tool's deltas arrive empty
            return
        for key, text in card.scanner.feed(delta):
            if text is None:
                self._end_value(card)
                card.key, card.shown = None, 0
                self._to_card(card)
                if self._line_open:
                    self.out.write("\n")
                self.out.write(f"│ {self._paint('key', inert(key))}: ")
                self._line_open = True
                card.key = key
                card.pieces += 1
            else:
                self._append(card, text)

    def _to_card(self, card: _Card) -> None:
        """Put the cursor at the end of ``card``'s arguments, marking a value that continues
        after other output."""
        self._clear()
        if self._current is card:
            return
        if self._line_open:
            self.out.write("\n")
            self._line_open = False
            self._answer = ""
        self._current = card
        if card.key is not None:
            continued = self._paint("dim", f"│ ({inert(card.name)}) ")
            self.out.write(f"{continued}{self._paint('key', inert(card.key))}: … ")
            self._line_open = True

    def _append(self, card: _Card, text: str) -> None:
        self._to_card(card)
        room = len(text) if self.expanded else ARGUMENT_LIMIT - card.shown
        if room < len(text):
            card.hidden += len(text) - max(room, 0)
            text = text[: max(room, 0)]
        if text:
            self.out.write(inert(text).replace("\n", "\n│   "))
            card.shown += len(text)
            if not self.expanded and card.shown >= ARGUMENT_LIMIT:
                self.out.write(self._paint("dim", " …"))
        self._line_open = True

    def _end_value(self, card: _Card) -> None:
        if card.hidden:
            self._to_card(card)
            self.out.write(self._paint("dim", f" (+{card.hidden} characters)"))
            card.hidden = 0

    def _complete(self, call: ToolCall) -> None:
        """The call is complete: finish its arguments (or write them, when none streamed)."""
        card = self._open(call.id, call.name, call.provider_executed)
        self._end_value(card)
        if card.pieces == 0 and call.arguments:
            self._clear()
            if self._line_open:
                self.out.write("\n")
            self._line_open = False
            self._current = None
            for key, value in call.arguments.items():
                shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                if not self.expanded and len(shown) > ARGUMENT_LIMIT:
                    hidden = len(shown) - ARGUMENT_LIMIT
                    shown = f"{shown[:ARGUMENT_LIMIT]} … (+{hidden} characters)"
                shown = inert(shown).replace("\n", "\n│   ")
                self.out.write(f"│ {self._paint('key', inert(key))}: {shown}\n")
        if call.invalid_reason is not None:
            self._line(
                self._paint("warn", f"│ ! arguments not valid: {inert(call.invalid_reason)}")
            )
        self._shown.add(call.id)
        if call.provider_executed:
            # Its result, when the provider reports one, closes this same card; the end of the
            # answer closes it otherwise.
            self._provider.add(call.id)

    def on_tool_started(self, event: ToolStarted) -> None:
        if event.call_id not in self._cards:  # a resumed call, or one no event announced
            self._open(event.call_id, event.name)
            self._complete(ToolCall(id=event.call_id, name=event.name, arguments=event.arguments))
        self._status(self._paint("dim", f"│ ⏵ {self._naming(event.call_id)}running…"))

    def on_tool_progress(self, event: ToolProgress) -> None:
        message = inert(event.message, one_line=True)
        fraction = event.fraction
        naming = self._naming(event.call_id)
        if not self.live:
            shown = f" ({fraction:.0%})" if fraction is not None else ""
            self._line(f"│ … {naming}{message}{shown}")
            return
        if fraction is None:
            self._status(self._paint("dim", f"│ ⏵ {naming}{message}"))
            return
        done = max(0.0, min(1.0, fraction))
        paint = self._paint

        def line(width: int) -> str:
            # The bar shrinks before the message is cut: "│ " name, bar, " 100% ", message.
            room = width - 2 - cells(naming) - 6
            bar_width = max(_MIN_BAR_WIDTH, min(_BAR_WIDTH, room - min(cells(message), 12)))
            filled = round(done * bar_width)
            bar = "█" * filled + "░" * (bar_width - filled)
            text = fit(message, max(1, room - bar_width)) if room - bar_width > 1 else ""
            head = fit(naming, max(0, width - bar_width - 8)) if naming else ""
            return f"│ {head}{paint('tool', bar)} {fraction:4.0%} {paint('dim', text)}".rstrip()

        key = f"│ {naming}{done:.4f} {message}"
        self._status(key, line)

    def _result(self, call_id: str, name: str, result: ToolResult) -> None:
        if call_id not in self._cards:
            self._open(call_id, name)
        naming = self._naming(call_id)
        self._cards.pop(call_id, None)
        for source in result.sources:
            known = self._sources.get(source.url)
            if known is None or (known.title is None and source.title):
                self._sources[source.url] = source
        mark, style = _STATUS_MARK[result.status]
        if self.expanded:
            text = result.content if result.content is not None else result.model_text()
            if result.data is not None and result.content is None:
                text = json.dumps(result.data, ensure_ascii=False, indent=2, default=str)
            if len(text) > RESULT_LIMIT:
                text = text[:RESULT_LIMIT] + f" … (+{len(text) - RESULT_LIMIT} characters)"
            body = inert(text).replace("\n", "\n│   ")
        else:
            body = inert(_result_line(result))
        if result.status is ToolStatus.DENIED:
            body = f"denied: {body}"
        self._line(f"╰ {self._paint(style, mark)} {self._paint('bold', naming)}{body}")
        for source in {s.url: s for s in result.sources}.values():
            title = f"{inert(source.title)} — " if source.title else ""
            self._line(self._paint("dim", f"  ↳ {title}{inert(source.url)}"))

    def _close(self, call_id: str, name: str, text: str) -> None:
        """End a call's card with ``text`` (a call the host answered without running it)."""
        if call_id not in self._cards:
            self._open(call_id, name)
        naming = self._naming(call_id)
        self._cards.pop(call_id, None)
        self._line(f"╰ {naming}{text}")

    def replay(self, messages: Iterable[Message], prompt: str = "› ") -> None:
        """Show a saved conversation's turns again: each prompt, each call's card with its
        arguments and result, each answer (styled), and the sources of each turn."""
        results: dict[str, ToolResult] = {}
        for message in messages:
            if isinstance(message, ToolResultMessage):
                results[message.call_id] = message.result
        for message in messages:
            if isinstance(message, UserMessage):
                self._finish()
                self._line(f"{prompt}{inert(message.text)}")
            elif isinstance(message, AssistantMessage):
                self._streamed = False
                if message.text:
                    self.pause()
                    self._answer_text(message.text)
                for call in message.tool_calls:
                    self._complete(call)
                    result = results.get(call.id)
                    if result is not None:
                        self._result(call.id, call.name, result)
                    elif call.provider_executed:
                        self._close(call.id, call.name, self._paint("ok", "◆ run by the provider"))
                self._provider.clear()
        self._cards.clear()
        self._finish()
        self.out.flush()

    def _write_sources(self) -> None:
        if not self._sources:
            return
        out = self.out
        out.write("\nSources:\n")
        for i, source in enumerate(self._sources.values(), 1):
            title = f"{inert(source.title)} — " if source.title else ""
            out.write(f"  [{i}] {title}{inert(source.url)}\n")
        self._sources.clear()


def argument_lines(arguments: Mapping[str, Any]) -> list[str]:
    """Every argument whole, as an approval shows them: ``key: value``, a text as written
    (continued lines indented), anything else as indented JSON; all of it :func:`inert`."""
    lines: list[str] = []
    for key, value in arguments.items():
        shown = (
            value
            if isinstance(value, str)
            else json.dumps(value, ensure_ascii=False, indent=2, default=str)
        )
        first, *rest = inert(shown).split("\n")
        lines.append(f"  {inert(key, one_line=True)}: {first}")
        lines.extend(f"    {line}" for line in rest)
    return lines


class ApprovalPrompter:
    """Asks on a terminal whether each call that needs approval may run.

    The question shows every argument whole; arguments longer than the screen show their
    start and ``v`` opens all of them in ``$PAGER`` (``less``). ``y`` runs the call, ``n``
    denies it (with an optional message for the model), ``e`` edits its arguments as indented
    JSON in ``$VISUAL`` / ``$EDITOR`` (one line typed at the prompt without one), checked against
    the tool's schema before the call runs, ``s`` sends it back to the model with what to do
    instead (a :class:`~toolwire.Retry`), ``a`` runs it and allows such calls from now on (in
    this conversation or always, by tool, MCP server or side effect; needs ``grants``). End of
    input defers the call (the run ends with it deferred).

    :param sensitive: a function giving the sensitive argument names of a tool (shown as
        ``[redacted]`` in the prompt).
    :param ask: reads one answer: given the question, returns the line typed (None at the end
        of input); default: write the question to ``stdout`` and read a line of ``stdin``.
    :param renderer: the :class:`TerminalRenderer` showing the run: the question waits until
        the call's card is complete on screen.
    :param tool_of: the registered tool of a name (its schema checks edited arguments, its
        side effects are offered as grants).
    :param grants: the conversation's :class:`~toolwire.chat.Grants` (None: nothing is granted
        ahead and ``a`` is not offered).
    :param server_of: the MCP server of a tool, for a grant by server.
    :param on_granted: told of each grant made here (the chat saves the conversation's ones).
    """

    def __init__(
        self,
        stdin: TextIO,
        stdout: TextIO,
        *,
        sensitive: Any = None,
        ask: Callable[[str], Awaitable[str | None]] | None = None,
        renderer: TerminalRenderer | None = None,
        tool_of: Callable[[str], Tool | None] | None = None,
        grants: Grants | None = None,
        server_of: Callable[[Tool], str | None] | None = None,
        on_granted: Callable[[], None] | None = None,
    ) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self._sensitive = sensitive
        self._asker = ask
        self._renderer = renderer
        self._tool_of = tool_of
        self.grants = grants
        self._server_of = server_of
        self._on_granted = on_granted

    async def _ask(self, question: str) -> str | None:
        if self._asker is not None:
            answer = await self._asker(question)
            return answer.strip() if answer is not None else None
        self.stdout.write(question)
        self.stdout.flush()
        line = await asyncio.to_thread(self.stdin.readline)
        return line.strip() if line else None

    def _rows(self) -> int:
        try:
            return os.get_terminal_size(self.stdout.fileno()).lines or 24
        except (AttributeError, ValueError, OSError):
            return 24

    async def __call__(self, request: DeferredRequest) -> Decision | None:
        renderer = self._renderer
        if renderer is not None:
            # The loop asks as soon as it admits the call; the events before the question may
            # still wait in the run's stream. Let them through first.
            for _ in range(_CATCH_UP_TURNS):
                if renderer.has_shown(request.call_id):
                    break
                await asyncio.sleep(0)
            renderer.pause()
        tool = self._tool_of(request.tool) if self._tool_of is not None else None
        server = self._server_of(tool) if tool is not None and self._server_of else None
        if self.grants is not None:
            granted = self.grants.covering(request, tool, server)
            if granted is not None:
                grant, lasting = granted
                where = "always" if lasting else "in this conversation"
                self.stdout.write(f"│ ✓ runs without asking: {grant.label} is allowed {where}\n")
                self.stdout.flush()
                return Approve()
        arguments = request.arguments
        if self._sensitive is not None:
            arguments = redact_arguments(arguments, self._sensitive(request.tool))
        lines = argument_lines(arguments)
        room = max(3, self._rows() - 6)
        out = self.stdout
        out.write(f"{inert(request.tool, one_line=True)} needs approval: {inert(request.detail)}\n")
        out.write("\n".join(lines[:room]) + ("\n" if lines else ""))
        long = len(lines) > room
        if long:
            out.write(f"  … {len(lines) - room} more lines: [v] shows every line\n")
        out.flush()
        choices = "[y]es / [n]o / [e]dit / [s]end back"
        if long:
            choices += " / [v]iew all"
        if self.grants is not None and tool is not None:
            choices += " / [a]llow from now on"
        while True:
            answer = await self._ask(f"Run it? {choices}: ")
            if answer is None:
                out.write("\n")
                return None
            choice = answer.lower()
            if choice in ("y", "yes"):
                return Approve()
            if choice in ("n", "no"):
                message = await self._ask("Message for the model (empty for the default): ")
                return Deny(message) if message else Deny()
            if choice in ("s", "send back"):
                message = await self._ask("What should the model do instead? ")
                return Retry(message) if message else Retry(_SEND_BACK)
            if choice in ("v", "view"):
                await page("\n".join([f"{request.tool} arguments:", *lines]) + "\n", out)
                continue
            if choice in ("a", "allow") and self.grants is not None and tool is not None:
                if await self._grant(tool, server):
                    return Approve()
                continue
            if choice in ("e", "edit"):
                edited = await self._edit(request, arguments, tool)
                if edited is None:
                    continue
                return Approve(arguments=edited)
            out.write(f"Please answer one of {choices} (got {answer!r}).\n")

    async def _grant(self, tool: Tool, server: str | None) -> bool:
        """Ask what to allow and for how long; True once a grant is made."""
        assert self.grants is not None
        options: list[tuple[str, Grant]] = [("t", Grant("tool", tool.name))]
        if server is not None:
            options.append(("s", Grant("server", server)))
        effects = [e for e in tool.policy.risk if e in {x.value for x in SideEffect}]
        options += [(str(i), Grant("side_effect", e)) for i, e in enumerate(effects, 1)]
        menu = " / ".join(f"[{key}] {grant.label}" for key, grant in options)
        which = await self._ask(f"Allow which calls? {menu}: ")
        chosen = dict(options).get((which or "").lower())
        if chosen is None:
            self.stdout.write("Nothing allowed.\n")
            return False
        how = await self._ask("For [c] this conversation or [w] always? ")
        if (how or "").lower() not in ("c", "w"):
            self.stdout.write("Nothing allowed.\n")
            return False
        lasting = (how or "").lower() == "w"
        try:
            self.grants.allow(chosen, lasting=lasting)
        except (GrantError, OSError) as exc:
            self.stdout.write(f"Cannot allow it: {inert(str(exc))}\n")
            return False
        if self._on_granted is not None:
            self._on_granted()
        where = "always" if lasting else "in this conversation"
        self.stdout.write(f"Allowed {where}: {chosen.label} (/grants lists them).\n")
        return True

    async def _edit(
        self, request: DeferredRequest, shown: Mapping[str, Any], tool: Tool | None
    ) -> dict[str, Any] | None:
        """The edited arguments, checked against the tool's schema (None: no edit made)."""
        text = json.dumps(dict(shown), ensure_ascii=False, indent=2, default=str) + "\n"
        if shown is not request.arguments:
            self.stdout.write(f"(a value left as {REDACTED!r} keeps what it was)\n")
        while True:
            editor = editor_command()
            if editor is not None:
                edited_text = await edit_in_editor(editor, text)
                if edited_text is None:
                    self.stdout.write("The editor failed; the arguments are unchanged.\n")
                    return None
            else:
                self.stdout.write(f"Current arguments: {inert(json.dumps(dict(shown)))}\n")
                edited_text = await self._ask("New arguments (a JSON object): ")
                if edited_text is None:
                    return None
            problem, edited = _check_edit(edited_text, request, tool)
            if problem is None and edited is not None:
                return edited
            self.stdout.write(f"{inert(problem or '')}\n")
            text = edited_text
            again = await self._ask("[e]dit again or [c]ancel the edit? ")
            if (again or "").lower() not in ("e", "edit"):
                return None


def _check_edit(
    text: str, request: DeferredRequest, tool: Tool | None
) -> tuple[str | None, dict[str, Any] | None]:
    """(problem, arguments): the edited text as arguments, redacted values restored, checked
    against the tool's schema."""
    try:
        edited = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"Not valid JSON: {exc}", None
    if not isinstance(edited, dict):
        return f"Expected a JSON object, got {type(edited).__name__}", None
    for key, value in edited.items():
        if value == REDACTED and key in request.arguments:
            edited[key] = request.arguments[key]
    if tool is not None:
        from ..tools import ArgumentsInvalid

        try:
            tool.validate(edited)
        except ArgumentsInvalid as exc:
            return f"The tool's schema refuses these arguments: {exc}", None
    return None, edited


def editor_command() -> list[str] | None:
    """``$VISUAL`` or ``$EDITOR`` split into words (None when neither is set)."""
    import shlex

    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            try:
                return shlex.split(value)
            except ValueError:
                return [value]
    return None


async def edit_in_editor(command: Sequence[str], text: str) -> str | None:
    """``text`` edited in a temporary ``.json`` file by ``command`` (None when it fails)."""
    import tempfile

    fd, path = tempfile.mkstemp(prefix="toolwire-arguments-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        process = await asyncio.create_subprocess_exec(*command, path)
        if await process.wait() != 0:
            return None
        with open(path, encoding="utf-8") as file:  # noqa: ASYNC230 (a small local file)
            return file.read()
    except OSError:
        return None
    finally:
        os.unlink(path)


async def page(text: str, out: TextIO) -> None:
    """Show ``text`` in ``$PAGER`` (else ``less``) on a terminal; print it where there is none."""
    import shlex
    import shutil

    command = shlex.split(os.environ.get("PAGER") or "") or (
        ["less", "-R"] if shutil.which("less") else []
    )
    if command and _is_terminal(out):
        try:
            process = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE)
            await process.communicate(text.encode("utf-8", "replace"))
            return
        except OSError:
            pass
    out.write(text)
    out.flush()


def run_cli(
    host: Host,
    prompt: str,
    *,
    json_output: bool = False,
    approve_all: bool = False,
    deny_all: bool = False,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    options: Mapping[str, Any] | None = None,
) -> int:
    """``toolwire run PROMPT``: run one conversation and show it; returns the exit code.

    ``options`` are the run's options (``system_prompt``, ``tools``, ``tool_choice`` …, see
    :meth:`~toolwire.loop.ToolCallingLoop.run`).

    On a terminal the conversation is rendered as it happens (:class:`TerminalRenderer`) and a
    call that needs approval is put to the person (:class:`ApprovalPrompter`);
    ``approve_all`` / ``deny_all`` decide every such call without asking, and without a terminal
    (or with ``json_output``) undecided calls end the run deferred. ``json_output`` prints the
    :class:`Run` as JSON (sensitive arguments redacted) instead of rendering it.

    :returns: 0 when the model answered, 1 when the run ended otherwise (limit, error,
        deferred calls …), 2 when the options or the setup are unusable.
    """
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    if approve_all and deny_all:
        stderr.write("toolwire: --approve-all and --deny-all cannot be combined\n")
        return 2
    loop = host.new_loop()

    def sensitive(name: str) -> frozenset[str]:
        tool = host.tools.get(name)
        return tool.sensitive_arguments if tool is not None else frozenset()

    renderer = TerminalRenderer(stdout, tool_of=host.tools.get, title_of=title_for(host))
    approval: Approver | None = None
    if approve_all:
        approval = _approve_all
    elif deny_all:
        approval = _deny_all
    elif not json_output and _is_terminal(stdin):
        approval = ApprovalPrompter(
            stdin,
            stdout,
            sensitive=sensitive,
            renderer=renderer,
            tool_of=host.tools.get,
            grants=Grants(GrantStore(), config=host.config),
            server_of=lambda tool: tool_server(host, tool),
        )

    async def main(settle: Callable[[], None]) -> Run | None:
        try:
            await ready_for_runs(host)  # at start-up, not in the first rounds
            settle()
            if json_output:
                return await loop.run(prompt, approval=approval, **(options or {}))
            stream = loop.stream(prompt, approval=approval, **(options or {}))
            with on_resize(renderer):
                async for event in stream:
                    renderer(event)
            if stream.run is not None:
                renderer.settle(stream.run)
            return stream.run
        finally:
            await host.aclose()

    try:
        with collector_for_runs() as settle:
            run = asyncio.run(main(settle))
    except (ValueError, TypeError) as exc:
        stderr.write(f"toolwire: {exc}\n")
        return 2
    except KeyboardInterrupt:
        stderr.write("toolwire: interrupted\n")
        return 1
    except (HostError, ConfigError) as exc:
        stderr.write(f"toolwire: {exc}\n")
        return 2
    if run is None:
        return 1
    if json_output:
        from .._json.fast import json_text

        # In one piece: json.dump writes a long run token by token, tens of thousands of writes.
        stdout.write(json_text(run.to_json(redact=sensitive), indent=True) + "\n")
    elif run.deferred:
        stdout.write("Deferred calls (resume with decisions for these call ids):\n")
        for request in run.deferred:
            arguments = redact_arguments(request.arguments, sensitive(request.tool))
            stdout.write(
                f"  {request.call_id}: {request.tool}({format_arguments(arguments)}) — "
                f"{request.detail}\n"
            )
    stdout.flush()
    return 0 if run.stop_reason == "answered" else 1


def title_for(host: Host) -> Callable[[Tool], str | None]:
    """A tool's title as people read it on ``host`` (translated by ``[i18n]``)."""
    return lambda tool: host.tool_display(tool).title


@contextlib.contextmanager
def on_resize(renderer: TerminalRenderer) -> Iterator[None]:
    """While the block runs, a terminal resize (``SIGWINCH``) redraws the renderer's transient
    line at once (nothing where signals cannot be handled)."""
    winch = getattr(signal, "SIGWINCH", None)
    loop = asyncio.get_running_loop()
    try:
        if winch is None or not renderer.live:
            raise NotImplementedError
        loop.add_signal_handler(winch, renderer.resized)
    except (NotImplementedError, RuntimeError, ValueError):
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(winch)


def _approve_all(request: DeferredRequest) -> Decision:
    return Approve()


def _deny_all(request: DeferredRequest) -> Decision:
    return Deny("Denied: the run was started with --deny-all.")


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
