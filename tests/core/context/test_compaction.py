"""Compaction keeps a conversation inside the context window: old results cleared to stubs,
then older turns summarised; never the system prompt, the last user turn, the latest turn or
a call still waiting; the same conversation always compacted the same way."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.context._compact import ContextWindow, compact, conversation_tokens, is_summary
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from toolwire.tools import ToolResult


def result(call_id: str, size: int, fill: str = "x") -> ToolResultMessage:
    return ToolResultMessage(call_id=call_id, name="read_page", result=ToolResult.ok(fill * size))


def call(n: int) -> ToolCall:
    return ToolCall(id=f"call_{n}", name="read_page", arguments={"url": f"https://ex.org/{n}"})


def agent_run(rounds: int, result_size: int = 2000) -> list[Message]:
    """A long agent run: one prompt, then a call and its big result per round."""
    messages: list[Message] = [SystemMessage("You are careful."), UserMessage("Research it.")]
    for n in range(rounds):
        messages.append(AssistantMessage(parts=(TextPart(f"Step {n}."), call(n))))
        messages.append(
            ToolResultMessage(
                call_id=f"call_{n}", name="read_page", result=ToolResult.ok("x" * result_size)
            )
        )
    return messages


class Summaries:
    """A summariser that writes a short, deterministic summary and keeps what it was given."""

    def __init__(self) -> None:
        self.asked: list[tuple[Message, ...]] = []

    async def __call__(self, messages: tuple[Message, ...]) -> str:
        self.asked.append(messages)
        calls = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
        return f"Read {len(calls)} pages: {', '.join(calls[:3])}…"


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def answered_pairs(messages: Sequence[Message]) -> None:
    """Every call has exactly one result after it, and every result a call before it."""
    seen_calls: set[str] = set()
    answered: set[str] = set()
    for message in messages:
        if isinstance(message, AssistantMessage):
            seen_calls.update(c.id for c in message.tool_calls)
        elif isinstance(message, ToolResultMessage):
            assert message.call_id in seen_calls, f"result without its call: {message.call_id}"
            assert message.call_id not in answered, f"two results: {message.call_id}"
            answered.add(message.call_id)


def test_a_conversation_that_fits_is_left_alone() -> None:
    messages = agent_run(3)
    window = ContextWindow(trigger=10_000, target=5_000)
    assert run(compact(messages, window, Summaries())) is None


def test_old_results_are_cleared_oldest_first_to_stubs_naming_them() -> None:
    messages = agent_run(40)
    size = conversation_tokens(messages)
    window = ContextWindow(trigger=size - 1, target=size - 3000)
    summaries = Summaries()
    done = run(compact(messages, window, summaries))
    assert done is not None
    assert summaries.asked == []  # clearing was enough
    assert done.cleared == tuple(f"call_{n}" for n in range(len(done.cleared)))
    assert 5 <= len(done.cleared) < 39
    first = done.messages[3]
    assert isinstance(first, ToolResultMessage)
    text = first.result.model_text()
    assert text.startswith('[Result of read_page({"url":"https://ex.org/0"}) (call call_0)')
    assert "2000 characters" in text
    assert done.tokens_after <= window.target < done.tokens_before
    # The latest turn's result is never cleared: the model has not read it yet.
    assert done.messages[-1] == messages[-1]
    answered_pairs(done.messages)


def test_a_long_run_is_summarised_and_keeps_its_frame() -> None:
    messages = agent_run(300, result_size=400)
    window = ContextWindow.of(8_000, compact_at=0.85, compact_to=0.6)
    summaries = Summaries()
    done = run(compact(messages, window, summaries))
    assert done is not None
    assert done.tokens_after <= window.target
    assert done.messages[0] == SystemMessage("You are careful.")
    assert done.messages[1] == UserMessage("Research it.")
    summary = done.messages[2]
    assert is_summary(summary)
    assert isinstance(summary, UserMessage)
    assert summary.text.startswith("[Summary of 598 earlier messages")
    # One run of whole turns was summarised: the calls with their results.
    (asked,) = summaries.asked
    assert isinstance(asked[0], AssistantMessage)
    assert isinstance(asked[-1], ToolResultMessage)
    assert done.messages[-2:] == tuple(messages[-2:])
    answered_pairs(done.messages)
    # Deterministic: the same conversation is compacted to the same messages.
    again = run(compact(messages, window, Summaries()))
    assert again is not None
    assert again.messages == done.messages


def test_a_summary_is_summarised_again_as_the_run_grows() -> None:
    window = ContextWindow.of(8_000, compact_at=0.85, compact_to=0.6)
    conversation = agent_run(200, result_size=400)
    done = run(compact(conversation, window, Summaries()))
    assert done is not None
    grown = list(done.messages)
    for n in range(200, 400):
        grown.append(AssistantMessage(parts=(call(n),)))
        grown.append(
            ToolResultMessage(
                call_id=f"call_{n}", name="read_page", result=ToolResult.ok("y" * 400)
            )
        )
    later = run(compact(grown, window, Summaries()))
    assert later is not None
    summaries = [m for m in later.messages if is_summary(m)]
    assert len(summaries) == 1
    assert isinstance(summaries[0], UserMessage)
    assert "Summary of" in summaries[0].text
    answered_pairs(later.messages)


def test_a_call_waiting_for_its_result_and_everything_after_it_stay() -> None:
    messages = agent_run(30)
    waiting = AssistantMessage(parts=(ToolCall(id="wait", name="approve_me", arguments={}),))
    messages[4:4] = [waiting]  # an old turn whose call was deferred, never answered
    window = ContextWindow(trigger=100, target=50)
    done = run(compact(messages, window, Summaries()))
    assert done is not None
    kept = done.messages[done.messages.index(waiting) :]
    assert kept == tuple(messages[messages.index(waiting) :])


def test_the_last_user_turn_of_a_chat_is_never_summarised() -> None:
    messages: list[Message] = [SystemMessage("Be brief.")]
    for n in range(50):
        messages.append(UserMessage(f"Question {n}: " + "q" * 300))
        messages.append(AssistantMessage(parts=(TextPart("a" * 300),)))
    messages.append(UserMessage("And now?"))
    window = ContextWindow(trigger=500, target=300)
    done = run(compact(messages, window, Summaries()))
    assert done is not None
    assert done.messages[0] == SystemMessage("Be brief.")
    assert done.messages[-1] == UserMessage("And now?")
    assert done.messages[-2] == messages[-2]  # the model's latest turn
    assert sum(1 for m in done.messages if is_summary(m)) == 1


# -- properties --------------------------------------------------------------------------------


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    messages: list[Message] = [SystemMessage("sys")]
    number = 0
    for turn in range(draw(st.integers(1, 25))):
        if draw(st.booleans()):
            messages.append(UserMessage(draw(st.text(max_size=200)) or f"u{turn}"))
        calls = []
        for _ in range(draw(st.integers(0, 3))):
            number += 1
            calls.append(ToolCall(id=f"c{number}", name="t", arguments={"n": number}))
        messages.append(AssistantMessage(parts=(TextPart("t" * draw(st.integers(0, 300))), *calls)))
        last = turn == 24 or draw(st.integers(0, 9)) == 0
        for c in calls:
            if last and draw(st.booleans()):
                continue  # a call of the latest turn may still wait
            size = draw(st.integers(0, 3000))
            messages.append(
                ToolResultMessage(call_id=c.id, name="t", result=ToolResult.ok("r" * size))
            )
        if last:
            break
    return messages


@settings(max_examples=150, deadline=None)
@given(conversations(), st.integers(50, 4000), st.floats(0.2, 0.9))
def test_compaction_keeps_what_it_must_whatever_the_conversation(
    messages: list[Message], trigger: int, share: float
) -> None:
    window = ContextWindow(trigger=trigger, target=int(trigger * share))
    done = run(compact(messages, window, Summaries()))
    if done is None:
        assert window.size(messages) <= window.trigger
        return
    out = done.messages
    assert out[0] == messages[0]
    answered_pairs(out)
    users = [m for m in messages if isinstance(m, UserMessage)]
    if users:
        assert users[-1] in out
    # The latest assistant turn and everything after it are untouched.
    latest = max(i for i, m in enumerate(messages) if isinstance(m, AssistantMessage))
    waiting = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, AssistantMessage)
        and any(
            c.id not in {r.call_id for r in messages if isinstance(r, ToolResultMessage)}
            for c in m.tool_calls
        )
    ]
    keep = min([latest, *waiting])
    assert out[-(len(messages) - keep) :] == tuple(messages[keep:])
    # Same input, same output.
    again = run(compact(messages, window, Summaries()))
    assert again == done
