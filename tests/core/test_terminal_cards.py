"""The terminal's tool-call cards, event by event: streaming arguments, progress, results."""

from __future__ import annotations

import io
import json

import toolwire
from toolwire import ToolResult
from toolwire.cli import inert
from toolwire.cli._render import ARGUMENT_LIMIT, TerminalRenderer
from toolwire.events import (
    ContentFiltered,
    Event,
    RequestSent,
    ResponseReceived,
    RunFinished,
    RunStarted,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolCompleted,
    ToolProgress,
    ToolStarted,
)
from toolwire.messages import AssistantMessage, ToolCall
from toolwire.tools import Source

RUN = {"run_id": "run_1", "round": 1}


@toolwire.tool(side_effects=["writes_files"], requires_approval=True, icon="📝", title="Write note")
def write_note(path: str, body: str) -> str:
    """Write a note.

    Args:
        path: Where.
        body: What.
    """
    return "ok"


def render(events: list[Event], *, live: bool, expanded: bool = False) -> str:
    out = io.StringIO()
    renderer = TerminalRenderer(
        out, tool_of={"write_note": write_note}.get, live=live, expanded=expanded
    )
    for event in events:
        renderer(event)
    return out.getvalue()


def streamed_call(arguments: dict[str, str], size: int) -> list[Event]:
    text = json.dumps(arguments, ensure_ascii=False)
    call = ToolCall(id="c1", name="write_note", arguments=arguments)
    return [
        RunStarted(api="fake", **RUN),
        RequestSent(api="fake", **RUN),
        ToolCallStarted(call_id="c1", name="write_note", **RUN),
        *(
            ToolCallArgumentsDelta(call_id="c1", delta=text[i : i + size], **RUN)
            for i in range(0, len(text), size)
        ),
        ToolCallCompleted(call=call, **RUN),
        ResponseReceived(message=AssistantMessage(parts=(call,)), **RUN),
        ToolStarted(call_id="c1", name="write_note", arguments=arguments, **RUN),
        ToolProgress(call_id="c1", name="write_note", message="writing", fraction=0.5, **RUN),
        ToolCompleted(
            call_id="c1",
            name="write_note",
            result=ToolResult.ok("wrote it", sources=[Source("https://example.org/n", "Notes")]),
            **RUN,
        ),
        RunFinished(stop_reason="answered", **RUN),
    ]


def test_plain_output_is_a_card_without_colour_or_redrawing():
    shown = render(streamed_call({"path": "a.txt", "body": "line one\nline two"}, 3), live=False)
    assert shown == (
        "╭ 📝 Write note (write_note) · writes_files · asks first\n"
        "│ path: a.txt\n"
        "│ body: line one\n"
        "│   line two\n"
        "│ … writing (50%)\n"
        "╰ ✓ wrote it\n"
        "  ↳ Notes — https://example.org/n\n"
        "\n"
        "Sources:\n"
        "  [1] Notes — https://example.org/n\n"
    )


def test_live_output_has_a_status_line_a_progress_bar_and_colour():
    shown = render(streamed_call({"path": "a.txt", "body": "hello"}, 2), live=True)
    assert "⋯ the model is deciding…" in shown
    assert "\r\x1b[2K" in shown  # the status line is cleared before the card opens
    assert "██████████░░░░░░░░░░\x1b[0m  50%" in shown
    assert "\x1b[32m✓\x1b[0m wrote it" in shown
    # Every piece of the value is written once, appended: the value appears whole exactly once.
    assert shown.count("hello") == 1
    assert shown.count("body") == 1


def test_a_long_value_streams_until_the_limit_and_counts_the_rest():
    body = "x" * (ARGUMENT_LIMIT + 3000)
    shown = render(streamed_call({"path": "a.txt", "body": body}, 7), live=False)
    assert f"│ body: {'x' * ARGUMENT_LIMIT} … (+3000 characters)\n" in shown
    expanded = render(streamed_call({"path": "a.txt", "body": body}, 7), live=False, expanded=True)
    assert f"│ body: {body}\n" in expanded


def test_text_from_outside_cannot_drive_the_terminal():
    hostile = "\x1b]0;owned\x07\x1b[2Jgone\rback\x9b31m"
    assert inert(hostile) == "\ufffd]0;owned\ufffd\ufffd[2Jgone\ufffdback\ufffd31m"
    events = streamed_call({"path": hostile, "body": "b"}, 4)
    events.insert(-1, TextDelta(text=hostile, **RUN))
    events.insert(
        -1,
        ContentFiltered(
            call_id="c1", name="write_note", report=f"the filter could not run {hostile}", **RUN
        ),
    )
    for live in (True, False):
        shown = render(events, live=live)
        for control in ("\x1b]", "\x1b[2J", "\x07", "\x9b", "\r"):
            assert control not in shown.replace("\r\x1b[2K", "")
        assert "⚠ content filter: the filter could not run" in shown


def test_a_call_the_provider_ran_gets_its_own_card():
    call = ToolCall(
        id="ws_1", name="web_search", arguments={"queries": ["owls"]}, provider_executed=True
    )
    shown = render(
        [
            RunStarted(api="fake", **RUN),
            ToolCallStarted(call_id="ws_1", name="web_search", **RUN),
            ToolCallCompleted(call=call, **RUN),
            ResponseReceived(message=AssistantMessage(parts=(call,)), **RUN),
            RunFinished(stop_reason="answered", **RUN),
        ],
        live=False,
    )
    assert shown == '╭ web_search\n│ queries: ["owls"]\n╰ ◆ run by the provider\n'


def test_a_provider_call_and_its_result_share_one_card():
    call = ToolCall(
        id="ws_1", name="web_search", arguments={"queries": ["owls"]}, provider_executed=True
    )
    result = ToolResult.ok("searched: owls", sources=[Source("https://owls.example/", "Owls")])
    shown = render(
        [
            RunStarted(api="fake", **RUN),
            ToolCallStarted(call_id="ws_1", name="web_search", provider_executed=True, **RUN),
            ToolCallCompleted(call=call, **RUN),
            ToolCompleted(call_id="ws_1", name="web_search", result=result, **RUN),
            ResponseReceived(message=AssistantMessage(parts=(call,)), **RUN),
            RunFinished(stop_reason="answered", **RUN),
        ],
        live=False,
    )
    assert shown.count("╭ web_search") == 1
    assert shown.startswith('╭ web_search · run by the provider\n│ queries: ["owls"]\n')
    assert "╰ ✓ searched: owls\n" in shown
    assert "unknown" not in shown


def test_a_call_without_streamed_arguments_shows_them_whole():
    call = ToolCall(id="c1", name="write_note", arguments={"path": "a.txt", "body": "hi"})
    shown = render(
        [
            RunStarted(api="fake", **RUN),
            ResponseReceived(message=AssistantMessage(parts=(call,)), **RUN),
            ToolCompleted(call_id="c1", name="write_note", result=ToolResult.ok("done"), **RUN),
            RunFinished(stop_reason="max_rounds", detail="10 rounds", **RUN),
        ],
        live=False,
    )
    assert shown == (
        "╭ 📝 Write note (write_note) · writes_files · asks first\n"
        "│ path: a.txt\n"
        "│ body: hi\n"
        "╰ ✓ done\n"
        "[stopped: max_rounds: 10 rounds]\n"
    )


class _Terminal(io.StringIO):
    """A terminal whose width the test sets."""

    columns = 80

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return 0  # get_terminal_size is replaced: it answers ``columns``


def test_the_progress_line_fits_the_width_and_a_resize_draws_it_again(monkeypatch):
    import os

    out = _Terminal()
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=0: os.terminal_size((out.columns, 24)))
    monkeypatch.setenv("NO_COLOR", "1")
    renderer = TerminalRenderer(out, live=True)
    renderer(RunStarted(api="fake", **RUN))
    renderer(ToolCallStarted(call_id="c1", name="slow", **RUN))
    renderer(ToolCallCompleted(call=ToolCall(id="c1", name="slow", arguments={}), **RUN))
    out.columns = 36
    renderer(
        ToolProgress(
            call_id="c1", name="slow", message="step 2 of 5: counting", fraction=0.4, **RUN
        )
    )
    drawn = out.getvalue().rsplit("\n", 1)[-1].rsplit("\x1b[2K", 1)[-1]
    assert "40%" in drawn
    assert len(drawn) <= 35
    out.columns = 20  # narrower: the line now spans two rows, both cleared, then redrawn
    renderer.resized()
    before, after = out.getvalue().rsplit("\r\x1b[2K\x1b[1A\x1b[2K", 1)
    assert before.endswith(drawn)
    assert "40%" in after
    assert len(after) <= 19


def test_fallback_refused_answers_and_compaction_are_told_in_one_line() -> None:
    import io

    from toolwire.cli._render import render_event
    from toolwire.events import ContextCompacted, InvalidOutput, ProviderFallback

    out = io.StringIO()
    render_event(
        ProviderFallback(run_id="r", round=1, failed="a/x", error="HTTP 503", next="b/y"), out
    )
    render_event(
        InvalidOutput(run_id="r", round=1, reason="name: missing", recovery="returned"), out
    )
    render_event(
        ContextCompacted(
            run_id="r",
            round=3,
            cleared=("c1", "c2"),
            summarised=4,
            tokens_before=900,
            tokens_after=400,
        ),
        out,
    )
    assert out.getvalue().splitlines() == [
        "  … a/x could not answer (HTTP 503); asking b/y",
        "  ! answer returned (attempt 1): name: missing",
        "  … context compacted: 2 result(s) cleared, 4 message(s) summarised (≈900 → 400 tokens)",
    ]


def test_a_tool_choice_sent_as_another_is_told_in_both_forms() -> None:
    from toolwire.cli._render import render_event
    from toolwire.events import ToolChoiceDegraded

    event = ToolChoiceDegraded(
        run_id="r",
        round=1,
        requested="required",
        sent="auto",
        detail="tool_choice 'required' is not one the openai-chat adapter can express here "
        "(it takes auto, none); sent as 'auto'",
    )
    compact = io.StringIO()
    render_event(event, compact)
    assert compact.getvalue() == f"  … {event.detail}\n"
    shown = io.StringIO()
    renderer = TerminalRenderer(shown, live=False)
    renderer.on_run_started(RunStarted(run_id="r", api="openai-chat"))
    renderer.visit(event)
    assert event.detail in shown.getvalue()


def test_a_sub_runs_calls_are_lines_inside_the_card_of_the_call_that_started_it() -> None:
    from toolwire.events import ParentCall

    out = io.StringIO()
    renderer = TerminalRenderer(out, live=False)
    parent = ParentCall(run_id="run_1", call_id="call_9", round=1)
    sub = {"run_id": "run_1.call_9", "round": 1, "parent": parent}
    events: list[Event] = [
        RunStarted(run_id="run_1", api="openai-chat"),
        ToolCallStarted(**RUN, call_id="call_9", name="helper"),
        ToolCallCompleted(
            **RUN, call=ToolCall(id="call_9", name="helper", arguments={"task": "t"})
        ),
        ToolStarted(**RUN, call_id="call_9", name="helper", arguments={"task": "t"}),
        RunStarted(run_id="run_1.call_9", api="anthropic-messages", parent=parent),
        TextDelta(**sub, text="not shown"),
        ToolStarted(**sub, call_id="c1", name="lookup", arguments={"city": "Nice"}),
        ToolCompleted(**sub, call_id="c1", name="lookup", result=ToolResult.ok("21 °C")),
        RunFinished(run_id="run_1.call_9", round=2, stop_reason="max_rounds", parent=parent),
        ToolCompleted(**RUN, call_id="call_9", name="helper", result=ToolResult.ok("done")),
    ]
    for event in events:
        renderer(event)
    renderer.note("1,200 tokens in · 90 out")
    text = out.getvalue()
    assert '│   ↳ → lookup(city="Nice")' in text
    assert "│   ↳ ✓ lookup: 21 °C" in text
    assert "│   ↳ [stopped: max_rounds]" in text
    assert "not shown" not in text
    # The sub-run's lines come before the call's own result, which closes its card.
    assert text.index("↳ ✓ lookup") < text.index("done")
    assert text.rstrip().endswith("1,200 tokens in · 90 out")
