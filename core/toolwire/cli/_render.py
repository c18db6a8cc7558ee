"""``toolwire run`` on a terminal: events rendered as they happen, approval prompts, JSON output."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from ..events import (
    DuplicateSuppressed,
    Event,
    InvalidArguments,
    LimitReached,
    PluginFailed,
    ProviderRetry,
    ResponseReceived,
    RoundStarted,
    RunFinished,
    TextDelta,
    ToolBlockedEvent,
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
from ..tools._result import Source, ToolResult

if TYPE_CHECKING:
    from ..host._host import Host

_RESULT_PREVIEW = 160
_ARGUMENT_PREVIEW = 60


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
    """Write the line(s) one event stands for on a terminal (nothing for most internal events).

    Text deltas are written as they come, without a newline; :class:`TerminalRenderer` adds the
    state that needs more than one event (line ends after streamed text, the sources heading).
    """
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
    elif isinstance(event, UnknownTool):
        offered = ", ".join(event.offered) or "none"
        out.write(f"  ? unknown tool {event.name!r} ({event.action}; offered: {offered})\n")
    elif isinstance(event, InvalidArguments):
        out.write(f"  ! {event.name}: arguments {event.recovery}: {event.reason}\n")
    elif isinstance(event, DuplicateSuppressed):
        out.write(f"  = {event.name}: same as call {event.first_call_id}, not run again\n")
    elif isinstance(event, LimitReached):
        out.write(f"  ! limit reached: {event.limit} ({event.value})\n")
    elif isinstance(event, ProviderRetry):
        out.write(f"  … {event.api}: {event.reason}; retrying in {event.delay:g} s\n")
    elif isinstance(event, PluginFailed):
        out.write(f"  ! plugin {event.plugin or '?'} failed in {event.hook}: {event.error}\n")
    elif isinstance(event, RunFinished) and event.stop_reason != "answered":
        detail = f": {event.detail}" if event.detail else ""
        out.write(f"[stopped: {event.stop_reason}{detail}]\n")


class TerminalRenderer:
    """Renders a run's events on a terminal as they happen: each tool call with its arguments,
    progress and result status, the model's text (streamed or whole), the final answer, and the
    sources the tools used under their own heading.

    Call it with each event (it is a ``toolwire_event``-shaped callable).
    """

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._streamed = False
        self._line_open = False
        self._sources: dict[str, Source] = {}

    def __call__(self, event: Event) -> None:
        out = self.out
        if isinstance(event, RoundStarted):
            self._streamed = False
        if isinstance(event, TextDelta):
            self._streamed = True
            self._line_open = not event.text.endswith("\n")
        elif self._line_open:
            out.write("\n")
            self._line_open = False
        if isinstance(event, ResponseReceived):
            text = event.message.text
            if text and not self._streamed:
                out.write(text if text.endswith("\n") else text + "\n")
            return
        if isinstance(event, ToolCompleted):
            for source in event.result.sources:
                known = self._sources.get(source.url)
                if known is None or (known.title is None and source.title):
                    self._sources[source.url] = source
        render_event(event, out)
        if isinstance(event, RunFinished):
            self._write_sources()
        out.flush()

    def _write_sources(self) -> None:
        if not self._sources:
            return
        out = self.out
        out.write("\nSources:\n")
        for i, source in enumerate(self._sources.values(), 1):
            title = f"{source.title} — " if source.title else ""
            out.write(f"  [{i}] {title}{source.url}\n")


class ApprovalPrompter:
    """Asks on a terminal whether each call that needs approval may run: ``y`` runs it, ``n``
    denies it (with an optional message for the model), ``e`` edits its arguments (JSON) and
    runs it. End of input defers the call (the run ends with it deferred).

    :param sensitive: a function giving the sensitive argument names of a tool (shown as
        ``[redacted]`` in the prompt).
    """

    def __init__(
        self,
        stdin: TextIO,
        stdout: TextIO,
        *,
        sensitive: Any = None,
    ) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self._sensitive = sensitive

    async def _ask(self, question: str) -> str | None:
        self.stdout.write(question)
        self.stdout.flush()
        line = await asyncio.to_thread(self.stdin.readline)
        return line.strip() if line else None

    async def __call__(self, request: DeferredRequest) -> Decision | None:
        arguments = request.arguments
        if self._sensitive is not None:
            arguments = redact_arguments(arguments, self._sensitive(request.tool))
        self.stdout.write(
            f"\n{request.tool}({format_arguments(arguments)}) needs approval: {request.detail}\n"
        )
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

    approval: Approver | None = None
    if approve_all:
        approval = _approve_all
    elif deny_all:
        approval = _deny_all
    elif not json_output and _is_terminal(stdin):
        approval = ApprovalPrompter(stdin, stdout, sensitive=sensitive)

    async def main() -> Run | None:
        try:
            if json_output:
                return await loop.run(prompt, approval=approval)
            renderer = TerminalRenderer(stdout)
            stream = loop.stream(prompt, approval=approval)
            async for event in stream:
                renderer(event)
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
        json.dump(run.to_json(redact=sensitive), stdout, ensure_ascii=False, indent=2, default=str)
        stdout.write("\n")
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
