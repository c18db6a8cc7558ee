"""A streamed answer, for every adapter, through a whole run against its fake server: the turn it
assembles is the one the same answer gives unstreamed, and observers get every event with the
same data (each argument delta with the arguments parsed leniently up to it)."""

from __future__ import annotations

import copy
import json
from typing import Any

import attrs
import pytest
from providers import FAKE_PROVIDERS

import toolwire
from toolwire import Config, Host, Tool
from toolwire._json.partial import PartialJSONParser
from toolwire.config import LedgerConfig, ProviderConfig
from toolwire.events import (
    Event,
    ParentCall,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from toolwire.loop._view import _without_partial
from toolwire.testing import tool_call

SERVERS = FAKE_PROVIDERS

ARGUMENTS = {"text": 'a streamed \u00e9 argument "quoted"', "count": 12, "tags": ["x", "y"]}
ANSWER = "All done: the text was echoed."


class Observer:
    """Keeps every event, and each argument delta's partial arguments as they were when it
    was emitted (the value is live: later deltas change it)."""

    __name__ = "stream_events_observer"

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.partials: list[Any] = []

    @toolwire.hookimpl
    def toolwire_event(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, ToolCallArgumentsDelta):
            self.partials.append(copy.deepcopy(event.partial_arguments))


def _echo() -> Tool:
    return Tool.from_schema(
        name="echo",
        description="Echo the text.",
        parameters={
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "count": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["text"],
        },
        handler=lambda arguments: arguments["text"],
    )


async def _run(server_class: Any, api: str, plugin: Any, *, stream: bool) -> Any:
    script = [tool_call("echo", ARGUMENTS), ANSWER]
    # Three characters a delta: the arguments arrive in many pieces, some inside strings.
    async with server_class(script, chunk_size=3) as server:
        provider = ProviderConfig(
            adapter=api, base_url=server.base_url, model="m", stream=stream, max_retries=0
        )
        config = Config(provider=provider, ledger=LedgerConfig(enabled=False))
        observer = Observer()
        host = Host.load(config, plugins=[plugin, observer])
        host.add_tool(_echo())
        try:
            run = await host.run("go")
        finally:
            await host.aclose()
    return run, observer


@pytest.mark.parametrize(("server_class", "api", "plugin"), SERVERS)
async def test_a_streamed_answer_assembles_the_turn_the_whole_answer_gives(
    server_class: Any, api: str, plugin: Any
) -> None:
    streamed, _ = await _run(server_class, api, plugin, stream=True)
    whole, _ = await _run(server_class, api, plugin, stream=False)
    assert streamed.stop_reason == whole.stop_reason == "answered", streamed.detail
    assert streamed.text == whole.text == ANSWER
    assert [r.call.name for r in streamed.tool_calls] == ["echo"]
    s_call, w_call = streamed.tool_calls[0].call, whole.tool_calls[0].call
    assert s_call.arguments == w_call.arguments == ARGUMENTS
    assert s_call.invalid_reason is w_call.invalid_reason is None
    assert json.loads(s_call.raw_arguments or "") == ARGUMENTS
    assert streamed.tool_calls[0].result is not None
    assert streamed.tool_calls[0].result.model_text() == ARGUMENTS["text"]


@pytest.mark.parametrize(("server_class", "api", "plugin"), SERVERS)
async def test_observers_get_every_delta_with_its_lenient_arguments(
    server_class: Any, api: str, plugin: Any
) -> None:
    run, observer = await _run(server_class, api, plugin, stream=True)
    assert run.stop_reason == "answered", run.detail
    call = run.tool_calls[0].call
    events = [e for e in observer.events if e.run_id == run.id]
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    deltas = [e for e in events if isinstance(e, ToolCallArgumentsDelta)]
    completed = [e for e in events if isinstance(e, ToolCallCompleted)]
    assert [(e.call_id, e.name, e.round) for e in started] == [(call.id, "echo", 1)]
    assert [e.call.id for e in completed] == [call.id]
    assert completed[0].call.arguments == ARGUMENTS
    # In order: started, every delta, completed.
    assert events.index(started[0]) < events.index(deltas[0])
    assert events.index(deltas[-1]) < events.index(completed[0])
    # Gemini streams a call whole, in one part; the others in pieces.
    assert len(deltas) == 1 if api == "gemini" else len(deltas) > 3
    assert all(d.call_id == call.id and d.round == 1 for d in deltas)
    assert json.loads("".join(d.delta for d in deltas)) == ARGUMENTS
    # Each delta carries the arguments parsed leniently so far, key by key.
    parser = PartialJSONParser()
    for delta, seen in zip(deltas, observer.partials, strict=True):
        parser.feed(delta.delta)
        assert seen == parser.value
    assert observer.partials[-1] == ARGUMENTS
    texts = [e for e in events if isinstance(e, TextDelta)]
    assert "".join(t.text for t in texts) == ANSWER
    # The run keeps the deltas' text (not the live partial value) in its own events.
    kept = [e for e in run.events if isinstance(e, ToolCallArgumentsDelta)]
    assert [e.delta for e in kept] == [d.delta for d in deltas]
    assert all(e.partial_arguments is None for e in kept)


def test_the_run_keeps_a_delta_whole_but_for_its_partial_arguments() -> None:
    # Every field set to a value of its own, so a field added later is checked too.
    fields: dict[str, Any] = {
        f.name: f"value of {f.name}" for f in attrs.fields(ToolCallArgumentsDelta)
    }
    fields.update(round=3, parent=ParentCall(run_id="outer", call_id="c0", round=1))
    event = ToolCallArgumentsDelta(**{**fields, "partial_arguments": {"text": "a"}})
    kept = _without_partial(event)
    assert kept == attrs.evolve(event, partial_arguments=None)
    assert kept.partial_arguments is None
