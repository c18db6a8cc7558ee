"""Optional tier: real recorded Anthropic Messages traffic.

Reads ``../shared/data`` (relative to the repository root) and skips when it is absent. Every
recorded answer (JSON and SSE) is parsed and its calls compared with the recorded ones; the same
answer streamed gives the same calls; the blocks of a turn go back exactly as Anthropic's own SDK
sent them back in the recorded tool runs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from toolwire.adapters import ModelRequest
from toolwire.http._sse import SSEDecoder
from toolwire.messages import AssistantMessage, ToolCall
from toolwire.testing import FakeAnthropicServer, ServerCall, ServerTurn
from toolwire_anthropic import MessagesStream, parse_message, render_messages

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT.parent / "shared" / "data"
TRAFFIC = DATA / "provider-traffic"

pytestmark = [
    pytest.mark.shared_data,
    pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data is not present"),
]


def exchanges() -> list[dict[str, Any]]:
    if not DATA.is_dir():
        return []
    rows = []
    with (TRAFFIC / "recorded-exchanges.jsonl").open(encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            row = json.loads(line)
            if row["api"] == "anthropic-messages":
                row["number"] = number
                rows.append(row)
    return rows


ROWS = exchanges()
STREAMS = sorted((TRAFFIC / "anthropic-messages-sse").iterdir()) if DATA.is_dir() else []
RUNS = sorted((TRAFFIC / "anthropic-tool-runs").glob("*.json")) if DATA.is_dir() else []


def stream(body: str) -> AssistantMessage:
    decoder = SSEDecoder()
    events = decoder.feed(body.encode("utf-8")) + decoder.close()
    reader = MessagesStream(ModelRequest(run_id="recorded", round=1, messages=()), lambda e: None)
    for event in events:
        if reader.feed(event.data):
            break
    return reader.result()


def recorded_calls(content: list[Mapping[str, Any]]) -> list[tuple[str, str, Any]]:
    return [(b["id"], b["name"], b["input"]) for b in content if b["type"] == "tool_use"]


def streamed_calls(body: str) -> list[tuple[str, str, Any]]:
    """The ``tool_use`` calls of a recorded stream, assembled naively here."""
    decoder = SSEDecoder()
    blocks: dict[int, dict[str, Any]] = {}
    for event in decoder.feed(body.encode("utf-8")) + decoder.close():
        data = json.loads(event.data)
        if data["type"] == "content_block_start" and data["content_block"]["type"] == "tool_use":
            blocks[data["index"]] = {**data["content_block"], "json": ""}
        elif data["type"] == "content_block_delta" and data["index"] in blocks:
            blocks[data["index"]]["json"] += data["delta"].get("partial_json", "")
    return [(b["id"], b["name"], json.loads(b["json"] or "{}")) for _, b in sorted(blocks.items())]


def calls_of(message: AssistantMessage) -> list[tuple[str, str, Any]]:
    return [(c.id, c.name, c.arguments) for c in message.tool_calls if not c.provider_executed]


def restreamed(message: AssistantMessage) -> AssistantMessage:
    """The same answer as the fake server streams it, read back."""
    turn = ServerTurn(
        text=message.text,
        calls=tuple(
            ServerCall(id=c.id, name=c.name, arguments=json.dumps(c.arguments))
            for c in message.tool_calls
            if not c.provider_executed
        ),
    )
    server = FakeAnthropicServer(chunk_size=5)
    return stream("".join(server.render_stream(turn, {"model": "m"}, 1)))


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['number']}" for r in ROWS])
def test_recorded_answers_give_the_recorded_calls(row: dict[str, Any]) -> None:
    payload = row["response_json"]
    message = parse_message(payload)
    assert calls_of(message) == recorded_calls(payload["content"])
    assert calls_of(restreamed(message)) == calls_of(message)
    # The turn goes back block for block as it came.
    _, rendered = render_messages([message])
    assert rendered == [{"role": "assistant", "content": payload["content"]}]


@pytest.mark.parametrize("path", STREAMS, ids=[p.name for p in STREAMS])
def test_recorded_streams_assemble(path: Path) -> None:
    body = path.read_text(encoding="utf-8")
    message = stream(body)
    assert message.finish_reason is not None
    assert message.usage is not None
    if path.name == "tool_use_response.txt":
        assert calls_of(message) == streamed_calls(body)
        assert message.tool_calls[0].arguments == {"location": "Paris"}
        assert message.text == "I'll check the current weather in Paris for you."
    elif path.name == "incomplete_partial_json_response.txt":
        (call,) = message.tool_calls
        assert call.name == "make_file"
        assert call.arguments is None
        assert call.raw_arguments is not None
        assert call.raw_arguments.startswith('{"filename": "taxes.txt", "lines_of_text": [')
        assert call.invalid_reason is not None
        assert "max_tokens" in call.invalid_reason
        assert message.finish_reason == "length"
    elif path.name == "stream-a-toolrefusal.sse":
        (server,) = message.tool_calls
        assert server.provider_executed
        assert server.name == "web_search"
        assert message.finish_reason == "refusal"
    else:
        assert all(call.is_valid for call in message.tool_calls)


@pytest.mark.parametrize("path", RUNS, ids=[p.stem[:8] for p in RUNS])
def test_recorded_tool_runs(path: Path) -> None:
    run = json.loads(path.read_text(encoding="utf-8"))
    for position, exchange in enumerate(run):
        response = exchange["response"]
        if response["status_code"] != 200:
            continue
        body = response["body"]
        if isinstance(body, str):
            message = stream(body)
            assert calls_of(message) == streamed_calls(body)
        else:
            message = parse_message(body)
            assert calls_of(message) == recorded_calls(body["content"])
            provider_run = [c for c in message.tool_calls if c.provider_executed]
            assert [c.id for c in provider_run] == [
                b["id"] for b in body["content"] if b["type"] == "server_tool_use"
            ]
        assert all(isinstance(c, ToolCall) and c.is_valid for c in message.tool_calls)
        if position + 1 < len(run):
            following = run[position + 1]["request"]["body"]["messages"]
            sent_back = [m for m in following if m["role"] == "assistant"]
            if sent_back:
                _, rendered = render_messages([message])
                assert rendered[0]["content"] == sent_back[-1]["content"]
