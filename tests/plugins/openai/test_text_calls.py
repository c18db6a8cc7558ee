"""Calls written as text, routing text, and requests shaped for llama-cpp-python's server, over the
wire against the loopback fake Chat Completions server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import pytest
from aiohttp import web
from loopback import serving

import toolwire
from toolwire import Host, ToolResult
from toolwire.config import config_from_dict
from toolwire.events import Event, ProviderRetry, ToolCallRecovered
from toolwire.testing import FakeOpenAIChatServer, tool_call


@toolwire.tool(side_effects="read_only", idempotent=True, allow_duplicates=True)
def add(
    a: Annotated[int, "The first whole number."], b: Annotated[int, "The second whole number."]
) -> str:
    """Add two whole numbers."""
    return str(a + b)


@toolwire.tool(side_effects="read_only", idempotent=True)
def spell(
    word: Annotated[str, {"pattern": r"\b[a-z]+\s*\w"}, "A word."],
    initial: Annotated[str, {"pattern": r"^\w$"}, "Its first letter."] = "",
    ending: Annotated[str, {"pattern": r"^[a-z]*$"}, "Its last letters."] = "",
) -> ToolResult:
    """Spell a word."""
    return ToolResult.ok(" ".join(word))


def _host(url: str, profile: str | None, **provider: Any) -> Host:
    settings: dict[str, Any] = {}
    if profile is not None:
        settings["openai"] = {"profile": profile}
    config = config_from_dict(
        {
            "plugins": {"enable": ["openai"]},
            "provider": {
                "adapter": "openai-chat",
                "base_url": url,
                "model": "m",
                "max_retries": 0,
                **provider,
            },
            "providers": settings,
            "loop": {"max_rounds": 3},
            "ledger": {"enabled": False},
        }
    )
    host = Host.load(config)
    host.add_tool(add)
    host.add_tool(spell)
    return host


async def _run(host: Host, prompt: str = "What is 2 plus 3?") -> tuple[Any, list[Event]]:
    events: list[Event] = []
    async with host:
        stream = host.stream(prompt)
        async for event in stream:
            events.append(event)
    run = getattr(stream, "run", None)
    assert run is not None
    return run, events


TEXT_CALL = '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    "text",
    [TEXT_CALL, '{"name": "add", "arguments": {"a": 2, "b": 3}}', "add(a=2, b=3)"],
    ids=["tool_call", "json", "python"],
)
async def test_a_call_written_as_text_is_run_as_a_call(text: str, stream: bool) -> None:
    async with FakeOpenAIChatServer([text, "5"]) as server:
        run, events = await _run(_host(server.base_url, "ollama", stream=stream))
    assert run.stop_reason == "answered"
    assert run.text == "5"
    (record,) = run.tool_calls
    assert record.call.name == "add"
    assert record.call.arguments == {"a": 2, "b": 3}
    assert record.result is not None
    assert record.result.model_text() == "5"
    recovered = [e for e in events if isinstance(e, ToolCallRecovered)]
    assert [(e.name, e.call_id) for e in recovered] == [("add", record.call.id)]
    # The next request carried the call as a call, and its result.
    second = server.bodies[1]["messages"]
    assert second[-2]["tool_calls"][0]["function"]["name"] == "add"
    assert second[-1] == {"role": "tool", "tool_call_id": record.call.id, "content": "5"}


async def test_recovery_can_be_turned_off_and_is_off_without_a_local_profile() -> None:
    async with FakeOpenAIChatServer([TEXT_CALL]) as server:
        run, events = await _run(_host(server.base_url, "ollama", recover_text_calls=False))
    assert (run.stop_reason, run.text, len(run.tool_calls)) == ("answered", TEXT_CALL, 0)
    assert not [e for e in events if isinstance(e, ToolCallRecovered)]
    async with FakeOpenAIChatServer([TEXT_CALL]) as server:
        run, _ = await _run(_host(server.base_url, None))
    assert run.text == TEXT_CALL
    async with FakeOpenAIChatServer([TEXT_CALL, "5"]) as server:
        run, _ = await _run(_host(server.base_url, None, recover_text_calls=True))
    assert run.text == "5"


async def test_a_call_of_a_tool_not_offered_stays_text() -> None:
    text = '{"name": "delete_everything", "arguments": {}}'
    async with FakeOpenAIChatServer([text]) as server:
        run, _ = await _run(_host(server.base_url, "vllm"))
    assert (run.stop_reason, run.text) == ("answered", text)


async def test_routing_text_is_a_failed_call_not_an_answer() -> None:
    async with FakeOpenAIChatServer(
        ["functions.add:", "functions.add:", "functions.add:"]
    ) as server:
        run, events = await _run(_host(server.base_url, "llama-cpp-python"))
    # Never `answered`: every round was a failed call, until the round limit.
    assert run.stop_reason == "max_rounds"
    assert len(run.tool_calls) == 3
    first = run.tool_calls[0]
    assert first.call.name == "add"
    assert first.result is not None
    assert not first.result.is_ok
    assert "routing text" in first.result.model_text()
    assert [e.form for e in events if isinstance(e, ToolCallRecovered)] == ["routing"] * 3


async def test_routing_text_then_a_real_call_completes_the_round_trip() -> None:
    script = ["functions.add:", tool_call("add", {"a": 2, "b": 3}), "5"]
    async with FakeOpenAIChatServer(script) as server:
        run, _ = await _run(_host(server.base_url, "llama-cpp-python"))
    assert (run.stop_reason, run.text) == ("answered", "5")
    assert [r.result.is_ok for r in run.tool_calls if r.result] == [False, True]


async def test_llama_cpp_python_requests_fit_its_template() -> None:
    script = [tool_call("add", {"a": 2, "b": 3}), "5"]
    async with FakeOpenAIChatServer(script) as server:
        run, _ = await _run(_host(server.base_url, "llama-cpp-python", stream=True))
    assert run.text == "5"
    first, second = server.bodies
    # The tools are shown to the model only inside a system turn: there always is one.
    assert first["messages"][0]["role"] == "system"
    assert first["tool_choice"] == "auto"
    # Streaming under `auto` dies on this server: such a request goes unstreamed.
    assert "stream" not in first
    # Patterns are sent as the server's grammar takes them: an unanchored one is left out
    # (the host still validates it), an anchored one written in the subset.
    properties = first["tools"][1]["function"]["parameters"]["properties"]
    assert "pattern" not in properties["word"]
    assert properties["initial"]["pattern"] == "^[a-zA-Z0-9_]$"
    # It writes arguments without a token limit: strings are bounded in the schema it gets.
    assert properties["word"]["maxLength"] == 200
    # Its grammar reads a pattern and ignores maxLength: the pattern's repetitions are bounded.
    assert properties["ending"]["pattern"] == "^[a-z]{0,200}$"
    # The result goes back in a user turn the template can read, and the answer is asked for
    # with `none` (under `auto` this server can only call or say nothing).
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
    results = second["messages"][-1]["content"]
    assert results.startswith("[Tool results]\n<tool_result id=")
    assert 'name="add">\n5\n</tool_result>' in results
    assert second["tool_choice"] == "none"
    assert second["stream"] is True


async def test_after_a_failed_result_llama_cpp_python_still_may_call() -> None:
    script = [tool_call("add", {"a": "x", "b": 3}), tool_call("add", {"a": 2, "b": 3}), "5"]
    async with FakeOpenAIChatServer(script) as server:
        run, _ = await _run(_host(server.base_url, "llama-cpp-python"))
    assert run.text == "5"
    assert [body["tool_choice"] for body in server.bodies] == ["auto", "auto", "none"]


@asynccontextmanager
async def _server_whose_stream_dies() -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """Headers, then the end of the stream, for streamed requests (as llama-cpp-python does when
    its template fails after answering); a whole answer for the others."""
    bodies: list[dict[str, Any]] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        bodies.append(body)
        if body.get("stream"):
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write_eof()
            return response
        message = {"role": "assistant", "content": "hello"}
        return web.json_response(
            {
                "id": "x",
                "model": "m",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            }
        )

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handle)
    async with serving(app) as url:
        yield f"{url}/v1", bodies


async def test_a_stream_that_dies_before_its_first_event_is_asked_again_unstreamed() -> None:
    async with _server_whose_stream_dies() as (url, bodies):
        run, events = await _run(_host(url, None, stream=True))
    assert (run.stop_reason, run.text) == ("answered", "hello")
    assert [b.get("stream", False) for b in bodies] == [True, False]
    retries = [e for e in events if isinstance(e, ProviderRetry)]
    assert len(retries) == 1
    assert "before its first event" in retries[0].reason


@pytest.mark.parametrize(
    ("profile", "cause"),
    [
        ("llama-cpp-python", "chatml-function-calling template answers tool choice auto"),
        ("llama.cpp", "--jinja"),
        ("vllm", "--tool-call-parser"),
        ("ollama", "ollama show MODEL"),
        (None, "native_tools = false"),
    ],
)
async def test_an_empty_answer_names_the_likely_cause_for_the_profile(
    profile: str | None, cause: str
) -> None:
    async with FakeOpenAIChatServer([""]) as server:
        run, _ = await _run(_host(server.base_url, profile))
    assert run.stop_reason == "empty"
    assert cause in run.detail
    assert json.dumps(server.bodies[0])  # the request went out
