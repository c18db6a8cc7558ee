"""With the real model (SmolLM2-135M-Instruct): a calculator conversation through the host,
streaming events against the transcript, cancellation between tokens, and freeing the model.

The assertions are about structure (a valid call happened, its result reached the model, the run
ended with an answer), never about the wording a 135M model chooses.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import toolwire_basics._plugin as basics
from toolwire import Host, ToolResult
from toolwire.adapters import ModelRequest
from toolwire.config import ProviderConfig, config_from_dict
from toolwire.events import (
    Event,
    ResponseReceived,
    RoundStarted,
    RunFinished,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolChoiceDegraded,
    ToolCompleted,
)
from toolwire.messages import AssistantMessage, SystemMessage, ToolResultMessage, UserMessage
from toolwire_basics import calculator as basics_calculator
from toolwire_llamacpp import LlamaCppAdapter, LlamaCppError, LlamaCppSettings

MAX_ROUNDS = 6


@pytest.fixture(scope="module")
def model_host(model_file: Path) -> Host:
    config = config_from_dict(
        {
            "plugins": {"enable": ["llamacpp"]},
            "provider": {"adapter": "llamacpp", "stream": True},
            "loop": {"max_rounds": MAX_ROUNDS},
            "ledger": {"enabled": False},
        }
    )
    return Host.load(config, plugins=[basics])


async def test_calculator_conversation(model_host: Host) -> None:
    events: list[Event] = []
    async with model_host:
        stream = model_host.stream("What is 17.5% of 2480?", tools=["calculator"])
        async for event in stream:
            events.append(event)
    run = stream.run
    assert run is not None
    assert run.stop_reason == "answered", run.detail
    assert 2 <= run.rounds <= MAX_ROUNDS
    assert [e.stop_reason for e in events if isinstance(e, RunFinished)] == ["answered"]

    # A call of the calculator ran and succeeded, and its result is in the transcript.
    succeeded = [r for r in run.tool_calls if r.result is not None and r.result.is_ok]
    assert succeeded, [r.result for r in run.tool_calls]
    assert {r.call.name for r in succeeded} == {"calculator"}
    assert {e.call_id for e in events if isinstance(e, ToolCompleted)} == {
        r.call.id for r in succeeded
    }
    results = {m.call_id: m for m in run.messages if isinstance(m, ToolResultMessage)}
    assert set(results) == {r.call.id for r in run.tool_calls}

    # Every streamed call: started, its argument deltas spell its arguments, then completed.
    calls = {e.call.id: e.call for e in events if isinstance(e, ToolCallCompleted)}
    started = {e.call_id: e.name for e in events if isinstance(e, ToolCallStarted)}
    assert started == {call_id: call.name for call_id, call in calls.items()}
    assert set(calls) == set(results)
    for call_id, call in calls.items():
        deltas = "".join(
            e.delta
            for e in events
            if isinstance(e, ToolCallArgumentsDelta) and e.call_id == call_id
        )
        assert call.is_valid
        assert json.loads(deltas) == dict(call.arguments or {})

    # The transcript holds each response as received, and ends with the streamed answer.
    responses = [e.message for e in events if isinstance(e, ResponseReceived)]
    assert [m for m in run.messages if isinstance(m, AssistantMessage)] == responses
    final = responses[-1]
    assert final.tool_calls == ()
    assert final.text.strip()
    assert run.text == final.text
    last_round = [e for e in events if isinstance(e, RoundStarted)][-1].round
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta) and e.round == last_round)
    assert streamed == final.text
    assert run.usage.input_tokens
    assert run.usage.output_tokens


@pytest.fixture
async def adapter(model_file: Path) -> AsyncIterator[LlamaCppAdapter]:
    adapter = LlamaCppAdapter(ProviderConfig(adapter="llamacpp", max_tokens=200))
    yield adapter
    await adapter.aclose()


def _plain(text: str, *, stream: bool = True) -> ModelRequest:
    return ModelRequest(run_id="r", round=1, messages=(UserMessage(text),), stream=stream)


async def test_plain_answer_with_usage(adapter: LlamaCppAdapter) -> None:
    events: list[Event] = []
    message = await adapter.complete(_plain("Say hello."), events.append)
    assert message.text
    assert message.api == "llamacpp"
    assert message.model == "SmolLM2-135M-Instruct.Q4_1"
    assert message.finish_reason in ("stop", "length")
    assert message.usage is not None
    assert message.usage.input_tokens
    assert message.usage.output_tokens
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == message.text


async def test_cancelled_between_tokens_and_usable_after(adapter: LlamaCppAdapter) -> None:
    deltas: list[str] = []
    first = asyncio.Event()

    def emit(event: Event) -> None:
        if isinstance(event, TextDelta):
            deltas.append(event.text)
            first.set()

    task = asyncio.create_task(adapter.complete(_plain("Write a long story about a cat."), emit))
    await first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    stopped_at = len(deltas)
    await asyncio.sleep(0.2)
    assert len(deltas) == stopped_at  # nothing arrives after the cancellation
    assert stopped_at < 200
    again = await adapter.complete(_plain("Say hi.", stream=False), lambda event: None)
    assert again.text


async def test_closed_adapter_frees_the_model(model_file: Path) -> None:
    adapter = LlamaCppAdapter(ProviderConfig(adapter="llamacpp", max_tokens=8))
    await adapter.complete(_plain("Hi", stream=False), lambda event: None)
    assert adapter.model._llama is not None
    await adapter.aclose()
    assert adapter.model._llama is None
    with pytest.raises(LlamaCppError, match="closed"):
        await adapter.complete(_plain("Hi", stream=False), lambda event: None)


# Greedy decoding of the tiny model loops on this one: "103 dollars bill + 18% tip = 103.18
# dollars bill + 18% tip = 103.18 …" up to the token limit.
LOOPING = "103 dollars bill + 18% tip total"


def _settled(settings: LlamaCppSettings) -> LlamaCppAdapter:
    return LlamaCppAdapter.configured(settings)(ProviderConfig(adapter="llamacpp"))


async def test_a_reply_that_loops_stops_before_its_second_turn(model_file: Path) -> None:
    free = _settled(LlamaCppSettings(max_tokens=160, answer_max_tokens=None, repeat_window=None))
    try:
        looped = await free.complete(_plain(LOOPING, stream=False), lambda event: None)
    finally:
        await free.aclose()
    assert looped.finish_reason == "length"

    events: list[Event] = []
    guarded = _settled(LlamaCppSettings(max_tokens=160, answer_max_tokens=None))
    try:
        stopped = await guarded.complete(_plain(LOOPING), events.append)
    finally:
        await guarded.aclose()
    assert stopped.finish_reason == "stop"
    assert stopped.usage is not None
    assert stopped.usage.output_tokens is not None
    assert stopped.usage.output_tokens < 80
    # What is kept is the looping reply's start, up to where it began to repeat itself.
    assert stopped.text.strip()
    assert looped.text.startswith(stopped.text)
    assert looped.text.count(stopped.text.strip()[-12:]) > 2
    assert stopped.text.count(stopped.text.strip()[-12:]) == 1
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == stopped.text


async def test_an_answer_asked_for_in_one_sentence_is_cut_at_the_answer_cap(
    model_file: Path,
) -> None:
    # The tiny model explains this one step by step, well past one sentence.
    question = "Our lunch bill is 132.49 dollars and I want to leave 18%. How much tip is that?"
    adapter = _settled(LlamaCppSettings(max_tokens=512, answer_max_tokens=24))
    try:
        message = await adapter.complete(_plain(question, stream=False), lambda event: None)
    finally:
        await adapter.aclose()
    assert message.finish_reason == "length"
    assert message.usage is not None
    assert message.usage.output_tokens is not None
    assert message.usage.output_tokens <= 24


async def test_a_system_prompt_evaluated_before_is_restored_with_the_same_replies(
    model_file: Path,
) -> None:
    geography = "You know geography well. Answer in one sentence. " * 6
    cooking = "You answer questions about cooking, tersely. " * 6
    asked = [
        (geography, "What is the capital of France?"),
        (cooking, "How do I boil an egg?"),
        (geography, "What is the capital of Spain?"),
        (cooking, "What is bread made of?"),
    ]
    replies: dict[int, list[str]] = {}
    for kept in (0, 4):
        adapter = _settled(LlamaCppSettings(max_tokens=12, prompt_states=kept))
        try:
            replies[kept] = [
                (
                    await adapter.complete(
                        ModelRequest(
                            run_id="r",
                            round=1,
                            messages=(SystemMessage(system), UserMessage(question)),
                        ),
                        lambda event: None,
                    )
                ).text
                for system, question in asked
            ]
            states = adapter.model.prompt_states
            # Each system prompt after the first time it was asked comes from a saved state.
            assert (states.restored, len(states)) == ((2, 2) if kept else (0, 0))
        finally:
            await adapter.aclose()
    assert replies[4] == replies[0]
    assert all(replies[0])


CALCULATOR = basics_calculator.function_spec()


async def test_an_answer_stops_once_the_questions_cpu_budget_is_spent(model_file: Path) -> None:
    essay = "Write a long essay about the history of bicycles, with many details."
    free = _settled(LlamaCppSettings(max_tokens=120, answer_max_tokens=None, turn_cpu_budget=None))
    bounded = _settled(
        LlamaCppSettings(max_tokens=120, answer_max_tokens=None, turn_cpu_budget=0.01)
    )
    try:
        whole = await free.complete(_plain(essay, stream=False), lambda event: None)
        cut = await bounded.complete(_plain(essay, stream=False), lambda event: None)
    finally:
        await free.aclose()
        await bounded.aclose()
    assert whole.usage is not None
    assert whole.usage.output_tokens is not None
    assert whole.usage.output_tokens > 40
    # Evaluating the prompt alone takes more than the budget: the answer stops at its first
    # token, and says it was cut.
    assert cut.finish_reason == "length"
    assert cut.usage is not None
    assert cut.usage.output_tokens is not None
    assert cut.usage.output_tokens <= 2
    assert whole.text.startswith(cut.text)


async def test_a_question_past_its_budget_is_answered_without_tools(model_file: Path) -> None:
    adapter = _settled(LlamaCppSettings(max_tokens=120, turn_cpu_budget=0.01))
    user = UserMessage("What is 2 + 2?")
    first = ModelRequest(run_id="r", round=1, messages=(user,), functions=(CALCULATOR,))
    events: list[Event] = []
    try:
        # Nothing spent yet: the call is asked for, and a call is never cut short.
        called = await adapter.complete(first, events.append)
        (call,) = called.tool_calls
        assert call.name == "calculator"
        assert call.is_valid
        refused = ToolResultMessage(
            call_id=call.id, name="calculator", result=ToolResult.error("Cannot evaluate")
        )
        again = ModelRequest(
            run_id="r", round=2, messages=(user, called, refused), functions=(CALCULATOR,)
        )
        answered = await adapter.complete(again, events.append)
        # The same question in another run starts with nothing spent.
        other = await adapter.complete(
            ModelRequest(run_id="s", round=1, messages=(user,), functions=(CALCULATOR,)),
            lambda event: None,
        )
    finally:
        await adapter.aclose()
    assert answered.tool_calls == ()
    (degraded,) = [e for e in events if isinstance(e, ToolChoiceDegraded)]
    assert (degraded.round, degraded.requested, degraded.sent) == (2, "auto", "none")
    assert "turn_cpu_budget (0.01 s)" in degraded.detail
    assert other.tool_calls
