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
import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TextIO

from ..events import (
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
    RoundStarted,
    RunFinished,
    RunStarted,
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
from ..loop._codec import REDACTED, redact_arguments
from ..loop._loop import ToolCallingLoop
from ..loop._run import Approve, Decision, DeferredRequest, Deny, Run
from ..loop._state import Approver
from ..messages import ToolCall
from ..tools._result import Source, ToolResult, ToolStatus

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
_CATCH_UP_TURNS = 100

# Control characters from a model, a tool or a page would move the cursor, recolour or retitle
# the terminal: every one but newline and tab is shown as a visible replacement.
_INERT = {c: "\ufffd" for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)) if c not in (9, 10)}


def inert(text: str) -> str:
    """``text`` with every control character but newline and tab replaced (safe to print)."""
    return text.translate(_INERT)


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
    if isinstance(event, TextDelta):
        out.write(event.text)
    elif isinstance(event, ToolStarted):
        out.write(f"→ {event.name}({format_arguments(event.arguments)})\n")
    elif isinstance(event, ToolProgress):
        fraction = f" ({event.fraction:.0%})" if event.fraction is not None else ""
        out.write(f"  … {event.name}: {event.message}{fraction}\n")
    elif isinstance(event, ToolCompleted):
        out.write(f"  ✓ {event.name}: {_result_line(event.result)}\n")
    elif isinstance(event, ToolFailed):
        out.write(f"  ✗ {event.name} failed: {_result_line(event.result)}\n")
    elif isinstance(event, ToolBlockedEvent):
        out.write(f"  ⊘ {event.name} blocked: {_result_line(event.result)}\n")
    elif isinstance(event, ToolDenied):
        out.write(f"  ✗ {event.name} denied: {_result_line(event.result)}\n")
    elif isinstance(event, ToolDeferred):
        out.write(f"  ⏸ {event.name} ({event.call_id}) waits: {event.reason}\n")
    else:
        line = _notice(event)
        if line is not None:
            indent = "" if isinstance(event, RunFinished) else "  "
            out.write(f"{indent}{line}\n")


def _notice(event: Event) -> str | None:
    """The one-line warning an event outside a card stands for (None: not a warning)."""
    if isinstance(event, UnknownTool):
        offered = ", ".join(event.offered) or "none"
        return f"? unknown tool {event.name!r} ({event.action}; offered: {offered})"
    if isinstance(event, InvalidArguments):
        return f"! {event.name}: arguments {event.recovery}: {event.reason}"
    if isinstance(event, DuplicateSuppressed):
        return f"= {event.name}: same as call {event.first_call_id}, not run again"
    if isinstance(event, LimitReached):
        return f"! limit reached: {event.limit} ({event.value})"
    if isinstance(event, ProviderRetry):
        return f"… {event.api}: {event.reason}; retrying in {event.delay:g} s"
    if isinstance(event, PluginFailed):
        return f"! plugin {event.plugin or '?'} failed in {event.hook}: {event.error}"
    if isinstance(event, ContentFiltered):
        return f"⚠ content filter: {event.report}"
    if isinstance(event, RunFinished) and event.stop_reason != "answered":
        detail = f": {event.detail}" if event.detail else ""
        return f"[stopped: {event.stop_reason}{detail}]"
    return None


_SGR = {
    "dim": "2",
    "bold": "1",
    "ok": "32",
    "bad": "31",
    "warn": "33",
    "tool": "36",
    "key": "35",
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

    __slots__ = ("call_id", "hidden", "key", "name", "pieces", "scanner", "shown")

    def __init__(self, call_id: str, name: str) -> None:
        self.call_id = call_id
        self.name = name
        self.scanner = ArgumentScanner()
        self.key: str | None = None  # the key whose value is arriving
        self.shown = 0  # characters of that value written
        self.hidden = 0  # characters of that value held back (collapsed card)
        self.pieces = 0  # argument pieces written in all


_STATUS_MARK = {
    ToolStatus.OK: ("✓", "ok"),
    ToolStatus.ERROR: ("✗", "bad"),
    ToolStatus.BLOCKED: ("⊘", "bad"),
    ToolStatus.DENIED: ("✗ denied:", "bad"),
}


class TerminalRenderer:
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
    """

    def __init__(
        self,
        out: TextIO,
        *,
        tool_of: Callable[[str], Tool | None] | None = None,
        live: bool | None = None,
        expanded: bool = False,
    ) -> None:
        self.out = out
        self.live = _is_terminal(out) if live is None else live
        self.expanded = expanded
        self._tool_of = tool_of
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

    def _clear(self) -> None:
        if self._transient is not None:
            self.out.write("\r\x1b[2K")
            self._transient = None

    def _line(self, text: str) -> None:
        """Write ``text`` as whole line(s), ending whatever the cursor was in."""
        self._clear()
        if self._line_open:
            self.out.write("\n")
            self._line_open = False
        self._current = None
        self.out.write(text + "\n")

    def _status(self, text: str) -> None:
        """Show ``text`` on the transient line (live only; plain output has none)."""
        if not self.live or self._transient == text:
            return
        self._clear()
        if self._line_open:
            self.out.write("\n")
            self._line_open = False
        self._current = None
        self.out.write(text)
        self._transient = text

    def pause(self) -> None:
        """Clear the transient line and end an open line, so a prompt starts on a clean line."""
        self._clear()
        if self._line_open:
            self.out.write("\n")
            self._line_open = False
        self._current = None
        self.out.flush()

    def has_shown(self, call_id: str) -> bool:
        """True once the call's complete arguments are on screen (the current run's call)."""
        return call_id in self._shown

    # -- events ----------------------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            if self._ending is not None:  # the last run was not settled
                self._finish()
            self._shown.clear()
        if isinstance(event, RoundStarted):
            self._streamed = False
        if isinstance(event, TextDelta):
            self._text(event.text)
        elif isinstance(event, RequestSent):
            self._status(self._paint("dim", "⋯ the model is deciding…"))
        elif isinstance(event, ThinkingDelta):
            self._status(self._paint("dim", "⋯ the model is thinking…"))
        elif isinstance(event, ToolCallStarted):
            self._open(event.call_id, event.name)
        elif isinstance(event, ToolCallArgumentsDelta):
            self._arguments_delta(event.call_id, event.delta)
        elif isinstance(event, ToolCallCompleted):
            self._complete(event.call)
        elif isinstance(event, ResponseReceived):
            self._response(event)
        elif isinstance(event, ToolStarted):
            self._started(event)
        elif isinstance(event, ToolProgress):
            self._progress(event)
        elif isinstance(event, ToolCompleted | ToolFailed | ToolBlockedEvent | ToolDenied):
            self._result(event.call_id, event.name, event.result)
        elif isinstance(event, UnknownTool | DuplicateSuppressed) or (
            isinstance(event, InvalidArguments) and event.recovery != "repaired"
        ):
            notice = _notice(event)
            assert notice is not None
            self._close(event.call_id, event.name, self._paint("warn", inert(notice)))
        elif isinstance(event, InvalidArguments):
            notice = _notice(event)
            assert notice is not None
            self._line(self._paint("warn", f"│ {inert(notice)}"))
        elif isinstance(event, ToolDeferred):
            self._line(self._paint("warn", f"│ ⏸ waits: {inert(event.reason)}"))
        elif isinstance(event, ProviderRetry) and self.live:
            notice = _notice(event)
            assert notice is not None
            self._status(self._paint("dim", inert(notice)))
        elif isinstance(event, RunFinished):
            notice = _notice(event)
            self._ending = self._paint("warn", inert(notice)) if notice is not None else ""
            if not self._cards:
                self._finish()
        else:
            notice = _notice(event)
            if notice is not None:
                self._line(self._paint("warn", "  " + inert(notice)))
        self.out.flush()

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
        self._cards.clear()
        self._current = None
        self._write_sources()

    def _text(self, text: str) -> None:
        self._streamed = True
        self._clear()
        if self._current is not None:  # text after a card
            if self._line_open:
                self.out.write("\n")
            self._current = None
        self.out.write(inert(text))
        self._line_open = not text.endswith("\n")

    def _response(self, event: ResponseReceived) -> None:
        self._clear()
        if self._line_open:
            self.out.write("\n")
            self._line_open = False
            self._current = None
        text = event.message.text
        if text and not self._streamed:
            text = inert(text)
            self.out.write(text if text.endswith("\n") else text + "\n")
        for call in event.message.tool_calls:
            if call.id not in self._shown:
                self._complete(call)

    # -- cards -----------------------------------------------------------------------------

    def _header(self, name: str) -> str:
        tool = self._tool_of(name) if self._tool_of is not None else None
        paint = self._paint
        if tool is None:
            return f"╭ {paint('bold', inert(name))}"
        title = inert(tool.title or name)
        icon = f"{inert(tool.icon)} " if tool.icon else ""
        parts = [f"╭ {icon}{paint('bold', title)}"]
        if title != name:
            parts.append(paint("dim", f"({name})"))
        risk = " · ".join(tool.policy.risk)
        if tool.policy.requires_approval:
            risk += " · asks first"
        parts.append(paint("dim", f"· {risk}"))
        return " ".join(parts)

    def _open(self, call_id: str, name: str) -> _Card:
        card = self._cards.get(call_id)
        if card is None:
            card = self._cards[call_id] = _Card(call_id, name)
            self._line(self._header(name))
            self._current = card
        return card

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
        card = self._open(call.id, call.name)
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
            self._cards.pop(call.id, None)
            self._line(self._paint("ok", "╰ ◆ run by the provider"))

    def _started(self, event: ToolStarted) -> None:
        if event.call_id not in self._cards:  # a resumed call, or one no event announced
            self._open(event.call_id, event.name)
            self._complete(ToolCall(id=event.call_id, name=event.name, arguments=event.arguments))
        self._status(self._paint("dim", "│ ⏵ running…"))

    def _progress(self, event: ToolProgress) -> None:
        message = inert(event.message)
        fraction = event.fraction
        if not self.live:
            shown = f" ({fraction:.0%})" if fraction is not None else ""
            self._line(f"│ … {message}{shown}")
            return
        if fraction is None:
            self._status(self._paint("dim", f"│ ⏵ {message}"))
            return
        filled = round(max(0.0, min(1.0, fraction)) * _BAR_WIDTH)
        bar = "█" * filled + "░" * (_BAR_WIDTH - filled)
        self._status(f"│ {self._paint('tool', bar)} {fraction:4.0%} {self._paint('dim', message)}")

    def _result(self, call_id: str, name: str, result: ToolResult) -> None:
        if call_id not in self._cards:
            self._open(call_id, name)
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
        self._line(f"╰ {self._paint(style, mark)} {body}")
        for source in {s.url: s for s in result.sources}.values():
            title = f"{inert(source.title)} — " if source.title else ""
            self._line(self._paint("dim", f"  ↳ {title}{inert(source.url)}"))

    def _close(self, call_id: str, name: str, text: str) -> None:
        """End a call's card with ``text`` (a call the host answered without running it)."""
        if call_id not in self._cards:
            self._open(call_id, name)
        self._cards.pop(call_id, None)
        self._line(f"╰ {text}")

    def _write_sources(self) -> None:
        if not self._sources:
            return
        out = self.out
        out.write("\nSources:\n")
        for i, source in enumerate(self._sources.values(), 1):
            title = f"{inert(source.title)} — " if source.title else ""
            out.write(f"  [{i}] {title}{inert(source.url)}\n")
        self._sources.clear()


class ApprovalPrompter:
    """Asks on a terminal whether each call that needs approval may run: ``y`` runs it, ``n``
    denies it (with an optional message for the model), ``e`` edits its arguments (JSON) and
    runs it. End of input defers the call (the run ends with it deferred).

    :param sensitive: a function giving the sensitive argument names of a tool (shown as
        ``[redacted]`` in the prompt).
    :param ask: reads one answer: given the question, returns the line typed (None at the end
        of input); default: write the question to ``stdout`` and read a line of ``stdin``.
    :param renderer: the :class:`TerminalRenderer` showing the run: the question waits until
        the call's card is complete on screen.
    """

    def __init__(
        self,
        stdin: TextIO,
        stdout: TextIO,
        *,
        sensitive: Any = None,
        ask: Callable[[str], Awaitable[str | None]] | None = None,
        renderer: TerminalRenderer | None = None,
    ) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self._sensitive = sensitive
        self._asker = ask
        self._renderer = renderer

    async def _ask(self, question: str) -> str | None:
        if self._asker is not None:
            answer = await self._asker(question)
            return answer.strip() if answer is not None else None
        self.stdout.write(question)
        self.stdout.flush()
        line = await asyncio.to_thread(self.stdin.readline)
        return line.strip() if line else None

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
        arguments = request.arguments
        if self._sensitive is not None:
            arguments = redact_arguments(arguments, self._sensitive(request.tool))
        self.stdout.write(
            f"{request.tool}({inert(format_arguments(arguments))}) needs approval: "
            f"{inert(request.detail)}\n"
        )
        self.stdout.flush()
        while True:
            answer = await self._ask("Run it? [y]es / [n]o / [e]dit arguments: ")
            if answer is None:
                self.stdout.write("\n")
                return None
            choice = answer.lower()
            if choice in ("y", "yes"):
                return Approve()
            if choice in ("n", "no"):
                message = await self._ask("Message for the model (empty for the default): ")
                return Deny(message) if message else Deny()
            if choice in ("e", "edit"):
                current = json.dumps(dict(arguments), ensure_ascii=False, default=str)
                self.stdout.write(f"Current arguments: {current}\n")
                if arguments is not request.arguments:
                    self.stdout.write(f"(a value left as {REDACTED!r} keeps what it was)\n")
                while True:
                    text = await self._ask("New arguments (a JSON object): ")
                    if text is None:
                        return None
                    try:
                        edited = json.loads(text)
                    except json.JSONDecodeError as exc:
                        self.stdout.write(f"Not valid JSON: {exc}\n")
                        continue
                    if not isinstance(edited, dict):
                        self.stdout.write(f"Expected a JSON object, got {type(edited).__name__}\n")
                        continue
                    for key, value in edited.items():
                        if value == REDACTED and key in request.arguments:
                            edited[key] = request.arguments[key]
                    return Approve(arguments=edited)
            self.stdout.write(f"Please answer y, n or e (got {answer!r}).\n")


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
) -> int:
    """``toolwire run PROMPT``: run one conversation and show it; returns the exit code.

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
    loop = ToolCallingLoop(host)

    def sensitive(name: str) -> frozenset[str]:
        tool = host.tools.get(name)
        return tool.sensitive_arguments if tool is not None else frozenset()

    renderer = TerminalRenderer(stdout, tool_of=host.tools.get)
    approval: Approver | None = None
    if approve_all:
        approval = _approve_all
    elif deny_all:
        approval = _deny_all
    elif not json_output and _is_terminal(stdin):
        approval = ApprovalPrompter(stdin, stdout, sensitive=sensitive, renderer=renderer)

    async def main() -> Run | None:
        try:
            if json_output:
                return await loop.run(prompt, approval=approval)
            stream = loop.stream(prompt, approval=approval)
            async for event in stream:
                renderer(event)
            if stream.run is not None:
                renderer.settle(stream.run)
            return stream.run
        finally:
            await host.aclose()

    try:
        run = asyncio.run(main())
    except (ValueError, TypeError) as exc:
        stderr.write(f"toolwire: {exc}\n")
        return 2
    except KeyboardInterrupt:
        stderr.write("toolwire: interrupted\n")
        return 1
    except Exception as exc:
        name = type(exc).__name__
        if name in ("HostError", "ConfigError"):
            stderr.write(f"toolwire: {exc}\n")
            return 2
        raise
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


def _approve_all(request: DeferredRequest) -> Decision:
    return Approve()


def _deny_all(request: DeferredRequest) -> Decision:
    return Deny("Denied: the run was started with --deny-all.")


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
