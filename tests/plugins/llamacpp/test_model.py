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
from toolwire import Host
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
    ToolCompleted,
)
from toolwire.messages import AssistantMessage, ToolResultMessage, UserMessage
from toolwire_llamacpp import LlamaCppAdapter, LlamaCppError

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
