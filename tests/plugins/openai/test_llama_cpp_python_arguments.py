"""Call arguments as llama-cpp-python's server (0.3.36, ``chatml-function-calling``) sends them
when it does not hold the model to the arguments' grammar: the model writes on past the object.

A loopback server answers each request with the next whole reply in the server's own shape
(``content: null``, the call in ``tool_calls`` and repeated in the legacy ``function_call``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from aiohttp import web
from loopback import serving

import toolwire
from toolwire import Host
from toolwire.config import config_from_dict
from toolwire.events import Event, InvalidArguments


@toolwire.tool(side_effects="read_only", idempotent=True, allow_duplicates=True)
def add(
    a: Annotated[int, "The first whole number."], b: Annotated[int, "The second whole number."]
) -> str:
    """Add two whole numbers."""
    return str(a + b)


def _call_reply(number: int, arguments: str) -> dict[str, Any]:
    completion = f"cmpl-{number:08d}-0000-0000-0000-000000000000"
    call = {
        "id": f"call__0_add_{completion}",
        "type": "function",
        "function": {"name": "add", "arguments": arguments},
    }
    return {
        "id": f"chat{completion}",
        "object": "chat.completion",
        "created": 1796190657,
        "model": "local",
        "choices": [
            {
                "finish_reason": "tool_calls",
                "index": 0,
                "logprobs": None,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call],
                    "function_call": {"name": "add", "arguments": arguments},
                },
            }
        ],
        "usage": {"completion_tokens": 30, "prompt_tokens": 400, "total_tokens": 430},
    }


def _text_reply(number: int, text: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{number:08d}",
        "object": "chat.completion",
        "created": 1796190686,
        "model": "local",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"completion_tokens": 2, "prompt_tokens": 200, "total_tokens": 202},
    }


@asynccontextmanager
async def _server(replies: list[str]) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """Each request gets the next reply: argument text for a call, or ``"text:…"`` for an answer."""
    bodies: list[dict[str, Any]] = []

    async def handle(request: web.Request) -> web.Response:
        bodies.append(await request.json())
        number = len(bodies)
        reply = replies[number - 1]
        if reply.startswith("text:"):
            return web.json_response(_text_reply(number, reply.removeprefix("text:")))
        return web.json_response(_call_reply(number, reply))

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handle)
    async with serving(app) as url:
        yield f"{url}/v1", bodies


async def _run(url: str) -> tuple[Any, list[Event]]:
    config = config_from_dict(
        {
            "plugins": {"enable": ["openai"]},
            "provider": {
                "adapter": "openai-chat",
                "base_url": url,
                "model": "local",
                "max_retries": 0,
            },
            "providers": {"openai": {"profile": "llama-cpp-python"}},
            "loop": {"max_rounds": 3},
            "ledger": {"enabled": False},
        }
    )
    host = Host.load(config)
    host.add_tool(add)
    events: list[Event] = []
    async with host:
        stream = host.stream("What is 2 plus 3?")
        async for event in stream:
            events.append(event)
    run = getattr(stream, "run", None)
    assert run is not None
    return run, events


# The model wrote the arguments, then the start of the schema it was shown, unfinished.
SCHEMA_AFTER = (
    '{"a": 2, "b": 3}\n{\n  "description": "The first whole number (or \\uao\\uao[^f]a)",\n'
    '    "maxLength": \n{"} '
)
# The model wrote the arguments, then another routing line with broken arguments.
ROUTING_AFTER = '{ "a": 2, "b": 3 }\nfunctions.add:\n{"description":"The first (or \\u<#f>a)"}'


async def _round_trip(arguments: str) -> None:
    async with _server([arguments, "text:5"]) as (url, bodies):
        run, events = await _run(url)
    assert (run.stop_reason, run.text) == ("answered", "5")
    (record,) = run.tool_calls
    assert record.arguments == {"a": 2, "b": 3}
    assert record.call.raw_arguments == arguments  # kept as the server sent it
    assert record.result is not None
    assert record.result.is_ok
    assert record.result.model_text() == "5"
    (repaired,) = [e for e in events if isinstance(e, InvalidArguments)]
    assert repaired.recovery == "repaired"
    assert repaired.reason == "repaired: trailing text after the object"
    # Its result went back to the server, and the answer was asked for.
    assert 'name="add">\n5\n</tool_result>' in bodies[1]["messages"][-1]["content"]
    assert bodies[1]["tool_choice"] == "none"


async def test_schema_text_after_the_arguments_object_is_dropped_and_the_call_runs() -> None:
    await _round_trip(SCHEMA_AFTER)


async def test_a_routing_line_after_the_arguments_object_is_dropped_and_the_call_runs() -> None:
    await _round_trip(ROUTING_AFTER)


async def test_a_complete_second_object_after_the_arguments_is_refused_and_neither_runs() -> None:
    # A later complete object may be another call: it is neither merged nor taken, nor dropped.
    second_call = '{"a": 2, "b": 3}\nfunctions.add:\n{"a": 40, "b": 2}'
    async with _server([second_call, '{"a": 2, "b": 3}', "text:5"]) as (url, bodies):
        run, events = await _run(url)
    assert (run.stop_reason, run.text) == ("answered", "5")
    first, second = run.tool_calls
    assert first.result is not None
    assert not first.result.is_ok
    assert "a second value follows the arguments object" in first.result.model_text()
    assert second.arguments == {"a": 2, "b": 3}
    assert [e.recovery for e in events if isinstance(e, InvalidArguments)] == ["returned"]
    assert "42" not in json.dumps(bodies)


async def test_an_empty_string_for_a_number_stays_a_refusal_the_model_can_retry() -> None:
    empty = '{"a": "", "b": 3}\n{\n  "description": "The first whole number", "maxLength": \n'
    async with _server([empty, '{"a": 2, "b": 3}', "text:5"]) as (url, _):
        run, events = await _run(url)
    assert (run.stop_reason, run.text) == ("answered", "5")
    first, second = run.tool_calls
    assert first.result is not None
    assert not first.result.is_ok
    assert "a:" in first.result.model_text()
    assert second.result is not None
    assert second.result.model_text() == "5"
    reasons = [e.reason for e in events if isinstance(e, InvalidArguments)]
    assert reasons[0] == "repaired: trailing text after the object"
    assert len(reasons) == 2
