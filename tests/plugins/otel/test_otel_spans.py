"""Spans and metrics of real runs (the OpenAI adapter against the loopback fake server), read
back from the SDK's in-memory exporter and metric reader."""

from __future__ import annotations

import asyncio
import json
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import pytest

# These runs go through the OpenAI adapter and its loopback fake server (the real wire format,
# usage and finish reasons included); they run where toolwire-openai is installed too.
pytest.importorskip("toolwire_openai")

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

import toolwire
import toolwire_openai._plugin
from toolwire import Config, Host
from toolwire.config import LedgerConfig, LoopConfig, ProviderConfig
from toolwire.loop import Deny
from toolwire.testing import FakeOpenAIChatServer, tool_call

API_KEY = "sk-otel-test-key-0123456789"
SECRET = "hunter2-correct-horse"


@toolwire.tool
def add(a: Annotated[int, "First."], b: Annotated[int, "Second."]) -> int:
    """Add two numbers."""
    return a + b


@toolwire.tool
def explode() -> str:
    """Always fails."""
    raise ValueError("the fuse was lit")


@toolwire.tool(requires_approval=True)
def delete_file(path: Annotated[str, "The file to delete."]) -> str:
    """Delete a file."""
    return f"deleted {path}"


@toolwire.tool(sensitive_arguments=["password"])
def login(user: Annotated[str, "Who."], password: Annotated[str, "Their password."]) -> str:
    """Log a user in."""
    return f"welcome {user}"


@toolwire.tool(timeout=0.05)
async def sluggish() -> str:
    """Takes longer than its timeout."""
    await asyncio.sleep(5)
    return "late"


stop_run = asyncio.Event()


@toolwire.tool
async def slow() -> str:
    """Waits until the run is cancelled."""
    await asyncio.sleep(30)
    return "never"


@toolwire.tool
def stopper() -> str:
    """Cancels the run."""
    stop_run.set()
    return "stopping"


def _tools_plugin() -> Any:
    tools = [add, explode, delete_file, login, slow, stopper, sluggish]
    return types.SimpleNamespace(
        __name__="otel_tools", toolwire_tools=toolwire.hookimpl(lambda settings: tools)
    )


def _host(server: Any, telemetry: Any, tmp_path: Path, *, capture: bool = False) -> Host:
    config = Config(
        provider=ProviderConfig(
            adapter="openai-chat",
            base_url=server.base_url,
            model="gpt-test",
            api_key_env="OTEL_TEST_API_KEY",
            max_retries=1,
        ),
        loop=LoopConfig(concurrency=4),
        ledger=LedgerConfig(enabled=True, path=str(tmp_path / "ledger.sqlite3")),
    )
    return Host.load(
        config,
        plugins=[toolwire_openai._plugin, _tools_plugin(), telemetry.plugin(capture=capture)],
    )


def _by_name(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def _parent(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_TEST_API_KEY", API_KEY)
    stop_run.clear()


async def test_span_tree_of_two_rounds_with_parallel_calls_an_error_and_a_denial(
    telemetry: Any, tmp_path: Path
) -> None:
    script = [
        [
            tool_call("add", {"a": 1, "b": 2}),
            tool_call("add", {"a": 3, "b": 4}),
            tool_call("explode"),
            tool_call("delete_file", {"path": "a.txt"}),
        ],
        "All done.",
    ]
    async with FakeOpenAIChatServer(script, api_key=API_KEY) as server:
        host = _host(server, telemetry, tmp_path)
        run = await host.run("do things")
        assert run.stop_reason == "deferred"
        resumed = await host.resume(run, {run.deferred[0].call_id: Deny("Not today.")})
        await host.aclose()
    assert resumed.stop_reason == "answered"

    spans = telemetry.spans.get_finished_spans()
    first, second = _by_name(spans, "invoke_agent toolwire")
    assert first.attributes["toolwire.run.stop_reason"] == "deferred"
    assert second.attributes["toolwire.run.resumed"] is True
    assert first.attributes["gen_ai.conversation.id"] == second.attributes["gen_ai.conversation.id"]
    assert [e.name for e in first.events] == ["toolwire.run.deferred"]
    assert first.status.status_code is StatusCode.UNSET
    assert second.status.status_code is StatusCode.UNSET
    assert first.kind is SpanKind.INTERNAL
    assert _parent(first) is None
    assert _parent(second) is None

    chats = _by_name(spans, "chat gpt-test")
    assert [c.attributes["toolwire.round"] for c in chats] == [1, 2]
    assert [_parent(c) for c in chats] == [first.context.span_id, second.context.span_id]
    assert all(c.kind is SpanKind.CLIENT for c in chats)

    in_first = [
        s
        for s in spans
        if s.name.startswith("execute_tool") and _parent(s) == first.context.span_id
    ]
    in_second = [
        s
        for s in spans
        if s.name.startswith("execute_tool") and _parent(s) == second.context.span_id
    ]
    assert sorted(s.name for s in in_first) == [
        "execute_tool add",
        "execute_tool add",
        "execute_tool delete_file",
        "execute_tool explode",
    ]
    # The two parallel adds overlap in time and are siblings, not nested in one another.
    adds = [s for s in in_first if s.name == "execute_tool add"]
    assert all(_parent(s) == first.context.span_id for s in adds)
    assert {s.attributes["toolwire.tool.status"] for s in adds} == {"ok"}
    assert all(s.status.status_code is StatusCode.UNSET for s in adds)

    (failed,) = [s for s in in_first if s.name == "execute_tool explode"]
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes["error.type"] == "ValueError"
    assert [e.name for e in failed.events] == ["exception"]
    assert failed.events[0].attributes["exception.type"] == "ValueError"
    assert "fuse" not in json.dumps(dict(failed.events[0].attributes)), "content capture is off"

    (deferred,) = [s for s in in_first if s.name == "execute_tool delete_file"]
    assert deferred.attributes["toolwire.tool.status"] == "deferred"
    assert deferred.status.status_code is StatusCode.UNSET
    assert [e.name for e in deferred.events] == ["toolwire.tool_deferred"]

    (denied,) = in_second
    assert denied.name == "execute_tool delete_file"
    assert denied.attributes["gen_ai.tool.call.id"] == deferred.attributes["gen_ai.tool.call.id"]
    assert denied.status.status_code is StatusCode.ERROR
    assert denied.attributes["error.type"] == "denied"
    assert [e.name for e in denied.events] == ["toolwire.tool_denied"]

    durations = telemetry.histogram_points("gen_ai.execute_tool.duration")
    by_tool = {
        (p.attributes["gen_ai.tool.name"], p.attributes.get("error.type")): p.count
        for p in durations
    }
    assert by_tool == {("add", None): 2, ("explode", "ValueError"): 1}


async def test_a_cancelled_call_and_run_end_their_spans_as_cancelled(
    telemetry: Any, tmp_path: Path
) -> None:
    script = [[tool_call("slow"), tool_call("stopper")], "unreachable"]
    async with FakeOpenAIChatServer(script, api_key=API_KEY) as server:
        host = _host(server, telemetry, tmp_path)
        run = await host.run("go", cancel=stop_run)
        await host.aclose()
    assert run.stop_reason == "cancelled"
    spans = telemetry.spans.get_finished_spans()
    (agent,) = _by_name(spans, "invoke_agent toolwire")
    assert agent.status.status_code is StatusCode.ERROR
    assert agent.attributes["error.type"] == "cancelled"
    (cut,) = _by_name(spans, "execute_tool slow")
    assert cut.status.status_code is StatusCode.ERROR
    assert cut.attributes["error.type"] == "cancelled"
    assert cut.attributes["toolwire.tool.status"] == "cancelled"
    (done,) = _by_name(spans, "execute_tool stopper")
    assert done.status.status_code is StatusCode.UNSET
    assert all(s.end_time is not None for s in spans)


async def test_chat_spans_and_metrics_carry_the_conventions_attributes(
    telemetry: Any, tmp_path: Path
) -> None:
    async with FakeOpenAIChatServer(
        [[tool_call("add", {"a": 1, "b": 2})], "3"], api_key=API_KEY
    ) as server:
        host = _host(server, telemetry, tmp_path)
        run = await host.run("add")
        await host.aclose()
    assert run.stop_reason == "answered"
    spans = telemetry.spans.get_finished_spans()
    chat = _by_name(spans, "chat gpt-test")[0]
    attributes = dict(chat.attributes)
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.provider.name"] == "openai"
    assert attributes["gen_ai.request.model"] == "gpt-test"
    assert attributes["gen_ai.response.model"] == "gpt-test"
    assert attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert attributes["gen_ai.usage.input_tokens"] > 0
    assert attributes["gen_ai.usage.output_tokens"] > 0
    assert attributes["server.address"] == "127.0.0.1"
    assert attributes["server.port"] == urlsplit(server.base_url).port
    assert "gen_ai.output.messages" not in attributes, "content capture is off by default"
    (tool,) = _by_name(spans, "execute_tool add")
    assert dict(tool.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": tool.attributes["gen_ai.tool.call.id"],
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Add two numbers.",
        "toolwire.tool.status": "ok",
    }
    (agent,) = _by_name(spans, "invoke_agent toolwire")
    assert agent.attributes["gen_ai.usage.input_tokens"] == sum(
        c.attributes["gen_ai.usage.input_tokens"] for c in _by_name(spans, "chat gpt-test")
    )

    tokens = telemetry.histogram_points("gen_ai.client.token.usage")
    assert {p.attributes["gen_ai.token.type"] for p in tokens} == {"input", "output"}
    assert tokens[0].explicit_bounds[:3] == (1.0, 4.0, 16.0)
    assert all(p.attributes["gen_ai.provider.name"] == "openai" for p in tokens)
    (requests,) = telemetry.histogram_points("gen_ai.client.operation.duration")
    assert requests.count == 2
    assert requests.explicit_bounds[:2] == (0.01, 0.02)


async def test_a_provider_failure_marks_the_chat_span(telemetry: Any, tmp_path: Path) -> None:
    from toolwire.testing import ErrorReply

    async with FakeOpenAIChatServer(
        [ErrorReply(status=400, message="bad request")], api_key=API_KEY
    ) as server:
        host = _host(server, telemetry, tmp_path)
        run = await host.run("fail")
        await host.aclose()
    assert run.stop_reason == "error"
    spans = telemetry.spans.get_finished_spans()
    (chat,) = _by_name(spans, "chat gpt-test")
    assert chat.status.status_code is StatusCode.ERROR
    assert chat.attributes["error.type"] == "error"
    assert "bad request" in (chat.status.description or "")
    (requests,) = telemetry.histogram_points("gen_ai.client.operation.duration")
    assert requests.attributes["error.type"] == "error"


@pytest.mark.parametrize("name", ["login", "Login"])
async def test_capture_on_records_content_with_sensitive_arguments_and_key_redacted(
    telemetry: Any, tmp_path: Path, name: str
) -> None:
    """Also when the model changed the case of the tool's name (the call runs as ``login``)."""
    script = [
        [tool_call(name, {"user": "ada", "password": SECRET}), tool_call("explode")],
        f"Logged in. Your key is {API_KEY}.",
    ]
    async with FakeOpenAIChatServer(script, api_key=API_KEY) as server:
        host = _host(server, telemetry, tmp_path, capture=True)
        run = await host.run("log me in")
        await host.aclose()
    assert run.stop_reason == "answered"
    spans = telemetry.spans.get_finished_spans()
    everything = json.dumps(
        [
            {
                "name": s.name,
                "attributes": dict(s.attributes),
                "events": [dict(e.attributes) for e in s.events],
                "status": s.status.description,
            }
            for s in spans
        ],
        default=str,
    )
    assert SECRET not in everything
    assert API_KEY not in everything
    (login_span,) = _by_name(spans, f"execute_tool {name}")  # named by the first event
    assert json.loads(login_span.attributes["gen_ai.tool.call.arguments"]) == {
        "user": "ada",
        "password": "[redacted]",
    }
    assert login_span.attributes["gen_ai.tool.call.result"] == "welcome ada"
    chats = _by_name(spans, "chat gpt-test")
    calls = json.loads(chats[0].attributes["gen_ai.output.messages"])[0]["parts"]
    assert calls[0]["arguments"] == {"user": "ada", "password": "[redacted]"}
    answer = json.loads(chats[1].attributes["gen_ai.output.messages"])[0]
    assert answer["parts"] == [{"type": "text", "content": "Logged in. Your key is [redacted]."}]
    (failed,) = _by_name(spans, "execute_tool explode")
    assert "the fuse was lit" in (failed.status.description or "")


async def test_timeouts_and_refusals_at_admission_are_status_and_events(
    telemetry: Any, tmp_path: Path
) -> None:
    script = [
        [
            tool_call("sluggish"),
            tool_call("no_such_tool", {"x": 1}),
            tool_call("add", {"a": "one", "b": 2}),
        ],
        "ok",
    ]
    async with FakeOpenAIChatServer(script, api_key=API_KEY) as server:
        host = _host(server, telemetry, tmp_path)
        run = await host.run("try")
        await host.aclose()
    assert run.stop_reason == "answered"
    spans = telemetry.spans.get_finished_spans()
    (late,) = _by_name(spans, "execute_tool sluggish")
    assert late.status.status_code is StatusCode.ERROR
    assert late.attributes["error.type"] == "timeout"
    assert late.attributes["toolwire.tool.status"] == "timeout"
    (unknown,) = _by_name(spans, "execute_tool no_such_tool")
    assert unknown.status.status_code is StatusCode.ERROR
    assert unknown.attributes["error.type"] == "unknown_tool"
    assert unknown.attributes["toolwire.tool.status"] == "refused"
    assert [e.name for e in unknown.events] == ["toolwire.unknown_tool"]
    assert "gen_ai.tool.description" not in unknown.attributes
    (invalid,) = _by_name(spans, "execute_tool add")
    assert invalid.status.status_code is StatusCode.ERROR
    assert invalid.attributes["error.type"] == "invalid_arguments"
    assert [e.name for e in invalid.events] == ["toolwire.invalid_arguments"]
    assert invalid.events[0].attributes["toolwire.recovery"] == "returned"
    durations = telemetry.histogram_points("gen_ai.execute_tool.duration")
    # Only the call that ran is timed; the refused ones never started.
    assert [(p.attributes["gen_ai.tool.name"], p.attributes["error.type"]) for p in durations] == [
        ("sluggish", "timeout")
    ]


@pytest.mark.parametrize("capture", [False, True])
def test_filter_reports_are_run_events_quoting_content_only_with_capture(
    telemetry: Any, capture: bool
) -> None:
    from toolwire.events import ContentFiltered, LimitReached, RunFinished, RunStarted

    host = Host.load(Config(), plugins=[telemetry.plugin(capture=capture)])
    host.emit(RunStarted(run_id="r1", api="openai-chat", model="m"))
    host.emit(
        ContentFiltered(run_id="r1", round=1, call_id=None, name="read", report="'ignore all'")
    )
    host.emit(LimitReached(run_id="r1", round=3, limit="max_rounds", value=3))
    host.emit(RunFinished(run_id="r1", round=3, stop_reason="max_rounds", detail="still calling"))
    (agent,) = telemetry.spans.get_finished_spans()
    assert [e.name for e in agent.events] == ["toolwire.content_filtered", "toolwire.limit_reached"]
    filtered, limit = (dict(e.attributes) for e in agent.events)
    assert filtered.get("toolwire.report") == ("'ignore all'" if capture else None)
    assert filtered["toolwire.name"] == "read"
    assert limit == {"toolwire.round": 3, "toolwire.limit": "max_rounds", "toolwire.value": 3}
    assert agent.status.status_code is StatusCode.ERROR
    assert agent.attributes["error.type"] == "max_rounds"
