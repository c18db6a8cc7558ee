"""Optional tier: real recorded OpenAI traffic and OpenAI's published OpenAPI schemas.

Reads ``../shared/data`` (relative to the repository root) and skips when it is absent. Every
recorded answer is parsed and its calls compared with the recorded ones; the same answer streamed
gives the same calls; the bodies the adapters render validate against the OpenAPI schemas
``CreateChatCompletionRequest`` and ``CreateResponse``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from toolwire import FunctionSpec, ToolResult
from toolwire.adapters import ModelRequest, NamedToolChoice
from toolwire.config import ProviderConfig
from toolwire.events import Event
from toolwire.http._sse import SSEDecoder
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextPart,
    ToolResultMessage,
    UserMessage,
)
from toolwire.testing import FakeOpenAIChatServer, FakeOpenAIResponsesServer, ServerCall, ServerTurn
from toolwire_openai import (
    ChatStream,
    ResponsesStream,
    parse_chat_completion,
    parse_response,
    render_chat_request,
    render_responses_request,
)

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT.parent / "shared" / "data"
TRAFFIC = DATA / "provider-traffic"

pytestmark = [
    pytest.mark.shared_data,
    pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data is not present"),
]


def exchanges(api: str) -> list[dict[str, Any]]:
    if not DATA.is_dir():
        return []
    rows = []
    with (TRAFFIC / "recorded-exchanges.jsonl").open(encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            row = json.loads(line)
            if row["api"] == api:
                row["number"] = number
                rows.append(row)
    return rows


def ids(rows: list[dict[str, Any]]) -> list[str]:
    return [f"{row['number']}-{Path(row['file']).stem[:40]}" for row in rows]


CHAT = exchanges("openai-chat")
RESPONSES = exchanges("openai-responses")
CHAT_WITH_REQUEST = [row for row in CHAT if row["request"]]
CHAT_SSE = sorted((TRAFFIC / "openai-chat-sse").glob("*.bin")) if DATA.is_dir() else []


def decode(body: str | bytes) -> list[str]:
    decoder = SSEDecoder()
    raw = body.encode("utf-8") if isinstance(body, str) else body
    return [event.data for event in decoder.feed(raw) + decoder.close()]


def request(messages: tuple[Message, ...] = (), **fields: Any) -> ModelRequest:
    return ModelRequest(run_id="recorded", round=1, messages=messages, **fields)


def key(call: Any) -> tuple[str, str, Any]:
    return (call.id, call.name, call.arguments)


# -- Chat Completions --------------------------------------------------------------------------


def recorded_chat_calls(message: Mapping[str, Any]) -> list[tuple[str | None, str, Any]]:
    out = []
    for call in message.get("tool_calls") or ():
        function = call["function"]
        arguments = function.get("arguments") or "{}"
        out.append((call.get("id") or None, function["name"], json.loads(arguments)))
    return out


def stream_chat(data: list[str]) -> tuple[AssistantMessage, list[Event]]:
    events: list[Event] = []
    stream = ChatStream(request(), events.append)
    for item in data:
        if stream.feed(item):
            break
    return stream.result(), events


def chat_answer_from_stream(data: list[str]) -> list[tuple[str | None, str, Any]]:
    """The calls of a recorded stream, assembled naively here (not by the adapter)."""
    calls: dict[int, dict[str, Any]] = {}
    for item in data:
        if item == "[DONE]":
            break
        for choice in json.loads(item).get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            for delta in (choice.get("delta") or {}).get("tool_calls") or ():
                entry = calls.setdefault(delta["index"], {"id": None, "name": "", "arguments": ""})
                entry["id"] = entry["id"] or delta.get("id")
                function = delta.get("function") or {}
                entry["name"] += function.get("name") or ""
                entry["arguments"] += function.get("arguments") or ""
    return [
        (c["id"], c["name"], json.loads(c["arguments"] or "{}")) for _, c in sorted(calls.items())
    ]


@pytest.mark.parametrize("row", CHAT, ids=ids(CHAT))
def test_recorded_chat_answers_give_the_recorded_calls(row: dict[str, Any]) -> None:
    if row["response_json"] is not None:
        payload = row["response_json"]
        expected = recorded_chat_calls(payload["choices"][0]["message"])
        message = parse_chat_completion(payload)
        text = payload["choices"][0]["message"].get("content") or ""
    else:
        data = decode(row["response_sse"])
        expected = chat_answer_from_stream(data)
        message, _ = stream_chat(data)
        text = message.text
    found = [
        (c.id if e[0] else None, c.name, c.arguments)
        for c, e in zip(message.tool_calls, expected, strict=True)
    ]
    assert found == expected
    assert all(c.id for c in message.tool_calls), "calls without ids get generated ones"
    assert message.text == text
    # The same answer, streamed: the same calls (ids included).
    turn = ServerTurn(
        text=message.text,
        calls=tuple(
            ServerCall(id=c.id, name=c.name, arguments=c.raw_arguments or "{}")
            for c in message.tool_calls
        ),
    )
    server = FakeOpenAIChatServer(chunk_size=3, interleave=True)
    streamed, _ = stream_chat(decode("".join(server.render_stream(turn, {"model": "m"}, 1))))
    assert [key(c) for c in streamed.tool_calls] == [key(c) for c in message.tool_calls]
    assert streamed.text == message.text


@pytest.mark.parametrize("path", CHAT_SSE, ids=[p.name[:12] for p in CHAT_SSE])
def test_recorded_chat_streams_assemble(path: Path) -> None:
    data = decode(path.read_bytes())
    message, _ = stream_chat(data)
    expected = chat_answer_from_stream(data)
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == expected
    assert message.usage is not None
    assert message.finish_reason is not None
    if path.name.startswith("f82268f2"):
        assert len(message.tool_calls) == 2


# -- Responses ---------------------------------------------------------------------------------


def recorded_response_calls(response: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    return [
        (item["call_id"], item["name"], json.loads(item["arguments"] or "{}"))
        for item in response.get("output") or ()
        if item.get("type") == "function_call"
    ]


def stream_responses(data: list[str]) -> AssistantMessage:
    stream = ResponsesStream(request(), lambda event: None)
    for item in data:
        if stream.feed(item):
            break
    return stream.result()


def final_response(data: list[str]) -> dict[str, Any]:
    for item in reversed(data):
        event = json.loads(item)
        if event.get("type") == "response.completed":
            return dict(event["response"])
    raise AssertionError("the recorded stream has no response.completed")


@pytest.mark.parametrize("row", RESPONSES, ids=ids(RESPONSES))
def test_recorded_responses_give_the_recorded_calls(row: dict[str, Any]) -> None:
    if row["response_json"] is not None:
        payload = row["response_json"]
        message = parse_response(payload)
    else:
        data = decode(row["response_sse"])
        payload = final_response(data)
        message = stream_responses(data)
        assert message == parse_response(payload)
    calls = [c for c in message.tool_calls if not c.provider_executed]
    assert [key(c) for c in calls] == recorded_response_calls(payload)
    # Every output item is kept for the next request.
    kept = [p for p in message.parts if not isinstance(p, TextPart)]
    assert len(kept) == len(payload["output"])
    turn = ServerTurn(
        text=message.text,
        calls=tuple(
            ServerCall(id=c.id, name=c.name, arguments=c.raw_arguments or "") for c in calls
        ),
    )
    server = FakeOpenAIResponsesServer(chunk_size=2)
    streamed = stream_responses(decode("".join(server.render_stream(turn, {"model": "m"}, 1))))
    assert [(c.id, c.name, c.arguments) for c in streamed.tool_calls] == [key(c) for c in calls]


# -- request bodies against the OpenAPI schemas ------------------------------------------------


def without_nullable(node: Any) -> Any:
    """OpenAPI 3.0 ``nullable: true`` as JSON Schema: ``null`` added to the type (and enum)."""
    if isinstance(node, list):
        return [without_nullable(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: without_nullable(v) for k, v in node.items()}
    if out.pop("nullable", False) is True:
        if "type" in out:
            kind = out["type"]
            kinds = kind if isinstance(kind, list) else [kind]
            out["type"] = kinds if "null" in kinds else [*kinds, "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        else:
            return {"anyOf": [out, {"type": "null"}]}
    return out


@pytest.fixture(scope="module")
def validators() -> dict[str, Any]:
    jsonschema = pytest.importorskip("jsonschema")
    spec = json.loads((DATA / "specs" / "openai-openapi.json").read_text(encoding="utf-8"))
    components = without_nullable(spec["components"])
    made = {}
    for name in ("CreateChatCompletionRequest", "CreateResponse"):
        schema = {"$ref": f"#/components/schemas/{name}", "components": components}
        made[name] = jsonschema.Draft202012Validator(schema)
    return made


def validate(validator: Any, body: Mapping[str, Any]) -> None:
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
    shown = [f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors[:5]]
    assert not errors, "\n".join(shown)


def chat_specs(body: Mapping[str, Any]) -> tuple[FunctionSpec, ...]:
    specs = []
    for tool in body.get("tools") or ():
        function = tool.get("function") or tool
        specs.append(
            FunctionSpec(
                name=function["name"],
                description=function.get("description") or "",
                parameters=function.get("parameters") or {"type": "object", "properties": {}},
            )
        )
    return tuple(specs)


def responses_specs(body: Mapping[str, Any]) -> tuple[FunctionSpec, ...]:
    return tuple(
        FunctionSpec(
            name=tool["name"],
            description=tool.get("description") or "",
            parameters=tool.get("parameters") or {"type": "object", "properties": {}},
        )
        for tool in body.get("tools") or ()
        if tool.get("type") == "function"
    )


def follow_up(message: AssistantMessage) -> tuple[Message, ...]:
    results: list[Message] = []
    for index, call in enumerate(c for c in message.tool_calls if not c.provider_executed):
        result = ToolResult.ok("Paris", data={"ok": 1}) if index % 2 else ToolResult.error("x")
        results.append(ToolResultMessage(call_id=call.id, name=call.name, result=result))
    return (
        SystemMessage("Answer briefly."),
        UserMessage("What is the weather like? Ünïcödé ✓"),
        message,
        *results,
    )


def variants(functions: tuple[FunctionSpec, ...], seed: int) -> Iterator[dict[str, Any]]:
    """Two request shapes per recording: a tool choice (rotating over the recordings, since
    validation is slow) not streamed, and ``auto`` streamed."""
    choices: list[Any] = ["none", "required"]
    if functions:
        choices.append(NamedToolChoice(functions[0].name))
    yield {"tool_choice": choices[seed % len(choices)], "parallel_tool_calls": False}
    yield {"tool_choice": "auto", "stream": True}


CONFIGS = {
    "api.openai.com": ProviderConfig(adapter="x", model="gpt-4o-mini", max_tokens=200),
    "compatible-host": ProviderConfig(
        adapter="x", model="qwen3", base_url="http://127.0.0.1:11434/v1", temperature=0.1
    ),
}


@pytest.mark.parametrize("host", sorted(CONFIGS))
@pytest.mark.parametrize("row", CHAT_WITH_REQUEST, ids=ids(CHAT_WITH_REQUEST))
def test_chat_bodies_validate_against_the_openapi_schema(
    validators: dict[str, Any], row: dict[str, Any], host: str
) -> None:
    if row["response_json"] is not None:
        message = parse_chat_completion(row["response_json"])
    else:
        message, _ = stream_chat(decode(row["response_sse"]))
    functions = chat_specs(row["request"])
    for fields in variants(functions, row["number"]):
        body = render_chat_request(
            request(follow_up(message), functions=functions, **fields), CONFIGS[host]
        )
        validate(validators["CreateChatCompletionRequest"], copy.deepcopy(body))


@pytest.mark.parametrize("host", sorted(CONFIGS))
@pytest.mark.parametrize("row", RESPONSES, ids=ids(RESPONSES))
def test_responses_bodies_validate_against_the_openapi_schema(
    validators: dict[str, Any], row: dict[str, Any], host: str
) -> None:
    if row["response_json"] is not None:
        message = parse_response(row["response_json"])
    else:
        message = stream_responses(decode(row["response_sse"]))
    functions = responses_specs(row["request"])
    for fields in variants(functions, row["number"]):
        body = render_responses_request(
            request(follow_up(message), functions=functions, **fields), CONFIGS[host]
        )
        validate(validators["CreateResponse"], copy.deepcopy(body))
