"""Whole runs: event sequence, offer, system prompt, provider failures, JSON, streaming, trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from loop_support import (
    assert_no_orphans,
    events_of,
    kinds,
    make_host,
    plugin,
    run_script,
    scripted_loop,
)

import toolwire
from toolwire import NOT_OFFERED, ToolResult
from toolwire.adapters import ModelRequest, NamedToolChoice, ProviderError
from toolwire.config import ProfileConfig, ProviderConfig, ToolsConfig
from toolwire.loop import Run, ToolCallingLoop
from toolwire.messages import (
    AssistantMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from toolwire.testing import ScriptedModel, tool_call
from toolwire.tools import Source
from toolwire.usage import Usage


@toolwire.tool
def add(a: Annotated[int, "First."], b: Annotated[int, "Second."]) -> int:
    """Add two integers."""
    return a + b


@toolwire.tool(instructions="Use shout for emphasis.")
def shout(text: Annotated[str, "Text."]) -> str:
    """Upper-case text."""
    return text.upper()


@toolwire.tool(instructions="Use echo to repeat.")
def echo(text: Annotated[str, "Text."]) -> str:
    """Repeat text."""
    return text


@toolwire.tool(sensitive_arguments={"password"})
def login(user: Annotated[str, "User."], password: Annotated[str, "Password."]) -> str:
    """Log in."""
    return f"logged in as {user}"


@toolwire.tool
def cite(topic: Annotated[str, "Topic."]) -> ToolResult:
    """Answer with sources."""
    return ToolResult.ok(
        f"about {topic}",
        sources=[Source("https://a.example/", None), Source("https://b.example/", "B")],
        artifacts={"raw": object()},
    )


async def test_event_sequence_of_a_whole_run(tmp_path: Path) -> None:
    host = make_host(tmp_path, [add])
    run = await run_script(host, [tool_call("add", {"a": 1, "b": 2}), "It is 3."])
    assert run.stop_reason == "answered"
    assert run.text == "It is 3."
    assert kinds(run) == [
        "run_started",
        "round_started",
        "request_sent",
        "response_received",
        "tool_started",
        "tool_completed",
        "round_finished",
        "round_started",
        "request_sent",
        "response_received",
        "round_finished",
        "run_finished",
    ]
    assert {e.run_id for e in run.events} == {run.id}
    assert [e.round for e in run.events] == [None, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2]
    started, completed = events_of(run, "tool_started")[0], events_of(run, "tool_completed")[0]
    assert started.call_id == completed.call_id == "call_1_0"
    assert started.arguments == {"a": 1, "b": 2}
    assert completed.result.data == 3
    assert events_of(run, "round_started")[0].offered == ("add",)
    assert events_of(run, "run_finished")[0].stop_reason == "answered"
    assert_no_orphans(run)
    [record] = run.tool_calls
    assert (record.outcome, record.tool, record.arguments, record.attempts) == (
        "executed",
        "add",
        {"a": 1, "b": 2},
        1,
    )


async def test_answer_without_tools(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    run = await run_script(host, ["Hello."])
    assert (run.stop_reason, run.text, run.rounds, run.tool_calls) == ("answered", "Hello.", 1, ())
    assert run.messages == (UserMessage("go"), run.messages[1])


async def test_system_prompt_and_instructions_in_offer_order(tmp_path: Path) -> None:
    host = make_host(tmp_path, [shout, echo, add])
    loop, model = scripted_loop(host, ["ok"])
    run = await loop.run("go", system_prompt="You are terse.")
    [request] = model.requests
    assert [f.name for f in request.functions] == ["add", "echo", "shout"]
    assert request.messages[0] == SystemMessage(
        "You are terse.\n\nUse echo to repeat.\n\nUse shout for emphasis."
    )
    assert run.messages[0] == SystemMessage("You are terse.")
    assert request.parallel_tool_calls is False


async def test_leading_system_message_is_the_base_prompt(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    loop, model = scripted_loop(host, ["ok"])
    await loop.run([SystemMessage("Base."), UserMessage("hi")])
    assert model.requests[0].messages == (SystemMessage("Base."), UserMessage("hi"))


async def test_instructions_hook_raising_costs_only_that_tool(tmp_path: Path) -> None:
    def instructions(tool: toolwire.Tool, request: Any) -> str | None:
        if tool.name == "echo":
            raise RuntimeError("no instructions today")
        return None

    host = make_host(
        tmp_path,
        [shout, echo],
        plugins=[plugin("instr", toolwire_system_prompt_instructions=instructions)],
    )
    loop, model = scripted_loop(host, ["ok"])
    run = await loop.run("go")
    assert model.requests[0].messages[0] == SystemMessage("Use shout for emphasis.")
    assert [f.name for f in model.requests[0].functions] == ["shout"]
    [failed] = events_of(run, "plugin_failed")
    assert failed.hook == "toolwire_system_prompt_instructions"
    assert "RuntimeError: no instructions today" in failed.error


async def test_async_instructions_and_resolution(tmp_path: Path) -> None:
    async def instructions(tool: toolwire.Tool, request: Any) -> str:
        return f"async words for {tool.name}"

    async def resolve(tool: toolwire.Tool, request: Any) -> Any:
        return tool.function_spec() if tool.name == "echo" else NOT_OFFERED

    host = make_host(
        tmp_path,
        [shout, echo],
        plugins=[
            plugin(
                "asyncplug",
                toolwire_system_prompt_instructions=instructions,
                toolwire_resolve_function=resolve,
            )
        ],
    )
    loop, model = scripted_loop(host, ["ok"])
    run = await loop.run("go")
    assert [f.name for f in model.requests[0].functions] == ["echo"]
    assert model.requests[0].messages[0] == SystemMessage("async words for echo")
    [omitted] = events_of(run, "tool_omitted")
    assert omitted.tool == "shout"
    assert "NOT_OFFERED" in omitted.reason


async def test_resolve_hook_raising_leaves_out_that_tool_alone(tmp_path: Path) -> None:
    def resolve(tool: toolwire.Tool, request: Any) -> Any:
        if tool.name == "shout":
            raise ValueError("cannot word it")
        return None

    host = make_host(
        tmp_path, [shout, echo, add], plugins=[plugin("res", toolwire_resolve_function=resolve)]
    )
    loop, model = scripted_loop(host, ["ok"])
    run = await loop.run("go")
    assert [f.name for f in model.requests[0].functions] == ["add", "echo"]
    [omitted] = events_of(run, "tool_omitted")
    assert omitted.tool == "shout"
    assert "ValueError: cannot word it" in omitted.reason
    assert "Use shout" not in (model.requests[0].messages[0].content or "")


async def test_selection_enable_profile_and_deny(tmp_path: Path) -> None:
    reader = toolwire.Tool.from_schema(
        name="reader",
        description="Reads pages once a URL is in the conversation.",
        parameters={"type": "object", "properties": {}},
        handler=lambda arguments: "page",
        activation="context",
    )
    host = make_host(
        tmp_path,
        [add, echo, shout, reader],
        tools_config=ToolsConfig(enable=("add", "echo", "shout"), deny=("shout",), profile="small"),
        profiles={
            "small": ProfileConfig(allow=("add", "echo", "reader", "shout"), deny=("echo",)),
            "all": ProfileConfig(),
        },
    )
    loop, model = scripted_loop(host, ["ok", "ok"])
    await loop.run("go")
    # enable ∩ allow, minus both deny lists; the context tool is a candidate without enable
    assert [f.name for f in model.requests[0].functions] == ["add", "reader"]
    await loop.run("go", profile="all", tools=["echo", "shout"])
    assert [f.name for f in model.requests[1].functions] == ["echo", "reader"]
    with pytest.raises(ValueError, match="profile 'nope' is not defined; defined profiles: all"):
        await loop.run("go", profile="nope")
    with pytest.raises(ValueError, match=r"unknown tool.*'missing'.*registered tools: add"):
        await loop.run("go", tools=["missing"])


async def test_trust_and_name_length_checks_omit_tools(tmp_path: Path) -> None:
    secret = toolwire.Tool.from_schema(
        name="vault",
        description="Reads the vault.",
        parameters={"type": "object", "properties": {}},
        handler=lambda arguments: "gold",
        min_provider_trust="high",
    )
    long_name = toolwire.Tool.from_schema(
        name="a" * 40,
        description="Long.",
        parameters={"type": "object", "properties": {}},
        handler=lambda arguments: "x",
    )

    class ShortNames(ScriptedModel):
        @property
        def capabilities(self) -> Any:
            import attrs

            return attrs.evolve(super().capabilities, max_tool_name_length=32)

    host = make_host(tmp_path, [secret, long_name, add])
    run = await ToolCallingLoop(host, adapter=ShortNames(script=["ok"])).run("go")
    assert events_of(run, "round_started")[0].offered == ("add",)
    reasons = {e.tool: e.reason for e in events_of(run, "tool_omitted")}
    assert "at least 'high'; the provider is 'medium'" in reasons["vault"]
    assert "40 characters long" in reasons["a" * 40]
    trusted = make_host(tmp_path, [secret], provider=ProviderConfig(trust="self_hosted"))
    run = await run_script(trusted, ["ok"])
    assert events_of(run, "round_started")[0].offered == ("vault",)


async def test_tools_added_and_removed_between_rounds(tmp_path: Path) -> None:
    host = make_host(tmp_path, [add, echo])

    @toolwire.tool
    def late() -> str:
        """Appears later."""
        return "late"

    def script(request: ModelRequest) -> Any:
        if request.round == 1:
            host.remove_tool("echo")
            host.add_tool(late)
            return tool_call("add", {"a": 1, "b": 1})
        return "done"

    loop, model = scripted_loop(host, script)
    await loop.run("go")
    assert [f.name for f in model.requests[0].functions] == ["add", "echo"]
    assert [f.name for f in model.requests[1].functions] == ["add", "late"]


async def test_tool_choice_forced_only_in_first_round(tmp_path: Path) -> None:
    host = make_host(tmp_path, [add])
    loop, model = scripted_loop(host, [tool_call("add", {"a": 1, "b": 2}), "3"])
    await loop.run("go", tool_choice="add")
    assert [r.tool_choice for r in model.requests] == [NamedToolChoice("add"), "auto"]
    run = await loop.run("go", tool_choice="echo")
    assert run.stop_reason == "error"
    assert "tool_choice names the tool 'echo', which is not offered in round 1" in (
        run.detail or ""
    )
    with pytest.raises(ValueError, match="tool_choice"):
        await loop.run("go", tool_choice="")


async def test_provider_error_ends_the_run_cleanly(tmp_path: Path) -> None:
    host = make_host(tmp_path, [add])

    def script(request: ModelRequest) -> Any:
        if request.round == 2:
            raise ProviderError("HTTP 503: overloaded", api="scripted", status=503)
        return tool_call("add", {"a": 1, "b": 2})

    run = await run_script(host, script)
    assert run.stop_reason == "error"
    assert run.detail == "the provider (scripted) failed in round 2: HTTP 503: overloaded"
    assert isinstance(run.error, ProviderError)
    assert isinstance(run.messages[-1], ToolResultMessage)  # nothing of the failed turn kept
    assert_no_orphans(run, allow_deferred=False)
    assert kinds(run)[-3:] == ["request_sent", "round_finished", "run_finished"]


async def test_adapter_bug_is_reported_as_error(tmp_path: Path) -> None:
    def script(request: ModelRequest) -> Any:
        raise KeyError("choices")

    run = await run_script(make_host(tmp_path), script)
    assert run.stop_reason == "error"
    assert run.detail == "the scripted adapter raised in round 1: KeyError: 'choices'"


async def test_provider_executed_calls_are_never_run(tmp_path: Path) -> None:
    ran: list[str] = []

    @toolwire.tool
    def web_search(query: str) -> str:
        """Search."""
        ran.append(query)
        return "local"

    server_call = ToolCall(
        id="srv_1", name="web_search", arguments={"query": "x"}, provider_executed=True
    )
    turn = AssistantMessage(parts=(server_call, TextPart("Found it.")))
    host = make_host(tmp_path, [web_search])
    run = await run_script(host, [turn])
    assert ran == []
    assert (run.stop_reason, run.text) == ("answered", "Found it.")
    assert [r.outcome for r in run.tool_calls] == ["provider_executed"]


async def test_usage_is_summed(tmp_path: Path) -> None:
    first = AssistantMessage(
        parts=(tool_call("add", {"a": 1, "b": 1}),), usage=Usage(input_tokens=10, output_tokens=2)
    )
    second = AssistantMessage(parts=(TextPart("2"),), usage=Usage(input_tokens=15))
    run = await run_script(make_host(tmp_path, [add]), [first, second])
    assert run.usage == Usage(input_tokens=25, output_tokens=2)


async def test_sources_deduplicated_and_artifacts_kept_out_of_json(tmp_path: Path) -> None:
    host = make_host(tmp_path, [cite])
    run = await run_script(
        host,
        [[tool_call("cite", {"topic": "x"}), tool_call("cite", {"topic": "y"})], "done"],
    )
    assert [s.url for s in run.sources] == ["https://a.example/", "https://b.example/"]
    assert run.tool_calls[0].result is not None
    assert "raw" in run.tool_calls[0].result.artifacts
    data = run.to_json()
    text = json.dumps(data)
    assert "artifacts" not in text
    assert data["sources"] == [
        {"url": "https://a.example/", "title": None},
        {"url": "https://b.example/", "title": "B"},
    ]
    assert data["events"][0]["kind"] == "run_started"


async def test_run_json_round_trip(tmp_path: Path) -> None:
    host = make_host(tmp_path, [add])
    run = await run_script(
        host, [tool_call("add", {"a": 1, "b": 2}), "3"], system_prompt="Be brief."
    )
    again = Run.from_json(json.loads(json.dumps(run.to_json())))
    assert again.messages == run.messages
    assert again.tool_calls == run.tool_calls
    assert (again.stop_reason, again.text, again.rounds, again.options) == (
        run.stop_reason,
        run.text,
        run.rounds,
        run.options,
    )


async def test_sensitive_arguments_redacted_in_events_and_json(tmp_path: Path) -> None:
    host = make_host(tmp_path, [login])
    call = tool_call("login", {"user": "ann", "password": "hunter22"})
    loop, _ = scripted_loop(host, [call, "in"])
    run = await loop.run("go", stream=True)
    assert run.tool_calls[0].arguments == {"user": "ann", "password": "hunter22"}
    for event in run.events:
        assert "hunter22" not in repr(event), event
    assert events_of(run, "tool_started")[0].arguments == {"user": "ann", "password": "[redacted]"}
    redacted = json.dumps(run.to_json(redact=lambda name: host.tools[name].sensitive_arguments))
    assert "hunter22" not in redacted
    assert "hunter22" in json.dumps(run.to_json())  # unredacted on request (ledger snapshots)


async def test_unparseable_sensitive_arguments_are_not_quoted_in_events(tmp_path: Path) -> None:
    host = make_host(tmp_path, [login])
    run = await run_script(
        host, [tool_call("login", raw_arguments='{"user": "a", "password": hunter22 }'), "no"]
    )
    [event] = events_of(run, "invalid_arguments")
    assert "details withheld" in event.reason
    for event in run.events:
        assert "hunter22" not in repr(event), event


async def test_stream_yields_events_then_keeps_the_run(tmp_path: Path) -> None:
    host = make_host(tmp_path, [add])
    loop, _ = scripted_loop(
        host,
        [
            AssistantMessage(parts=(TextPart("Let me add."), tool_call("add", {"a": 2, "b": 3}))),
            "It is 5.",
        ],
    )
    stream = loop.stream("go", stream=True)
    seen = [event async for event in stream]
    assert seen[-1].kind == "run_finished"
    assert stream.run is not None
    assert stream.run.text == "It is 5."
    assert [e.kind for e in seen] == kinds(stream.run)
    deltas = "".join(e.text for e in seen if e.kind == "text_delta")
    assert deltas == "Let me add.It is 5."
    assert [e.kind for e in seen if e.kind.startswith("tool_call_")][:2] == [
        "tool_call_started",
        "tool_call_arguments_delta",
    ]
    last_partial = [e for e in seen if e.kind == "tool_call_arguments_delta"][-1]
    assert last_partial.partial_arguments == {"a": 2, "b": 3}


async def test_stream_closed_early_cancels_the_run(tmp_path: Path) -> None:
    host = make_host(tmp_path, [add])
    loop, _ = scripted_loop(host, [tool_call("add", {"a": 2, "b": 3}), "5"])
    stream = loop.stream("go")
    async for event in stream:
        if event.kind == "tool_started":
            break
    await stream.aclose()
    assert stream.run is not None
    assert stream.run.stop_reason in ("cancelled", "answered")
    assert_no_orphans(stream.run, allow_deferred=False)


async def test_trace_writes_every_event_as_jsonl(tmp_path: Path) -> None:
    trace = tmp_path / "traces" / "run.jsonl"
    host = make_host(tmp_path, [login], trace=str(trace))
    run = await run_script(host, [tool_call("login", {"user": "a", "password": "s3cret!"}), "ok"])
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [line["kind"] for line in lines] == kinds(run)
    assert all(line["run_id"] == run.id for line in lines)
    assert "s3cret!" not in trace.read_text()


async def test_observer_raising_does_not_stop_the_run(tmp_path: Path) -> None:
    def explode(event: Any) -> None:
        raise RuntimeError("observer down")

    host = make_host(tmp_path, [add], plugins=[plugin("noisy", toolwire_event=explode)])
    run = await run_script(host, [tool_call("add", {"a": 1, "b": 1}), "2"])
    assert run.stop_reason == "answered"


async def test_bad_prompt_is_refused(tmp_path: Path) -> None:
    loop, _ = scripted_loop(make_host(tmp_path), ["x"])
    with pytest.raises(TypeError, match="expected a message"):
        await loop.run(["not a message"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="str or a sequence of messages"):
        await loop.run(42)  # type: ignore[arg-type]
