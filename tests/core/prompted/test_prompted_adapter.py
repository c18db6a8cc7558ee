"""``PromptedAdapter``, ``AutoPromptedAdapter`` and ``wrap_adapter`` around a text-only adapter."""

from __future__ import annotations

from typing import Any

import pytest
from prompted_support import FUNCTIONS, TextModel

from toolwire import ToolResult
from toolwire.adapters import ModelRequest
from toolwire.config import ProviderConfig
from toolwire.events import (
    Event,
    ProviderRetry,
    TextDelta,
    ThinkingDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from toolwire.messages import (
    AssistantMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from toolwire.prompted import PromptedAdapter, render_prompted_tools
from toolwire.prompted._adapter import AutoPromptedAdapter, FallbackMemory, wrap_adapter
from toolwire.prompted._history import TOOL_RESULTS_HEADER

TWO_CALLS = (
    "I will look both up.\n"
    '<tool_call>{"name": "search", "arguments": {"query": "rust agents"}}</tool_call>\n'
    '<tool_call>{"name": "fetch", "arguments": {"url": "https://a.example"}}</tool_call>'
)


def _request(**fields: Any) -> ModelRequest:
    values: dict[str, Any] = {
        "run_id": "run1",
        "round": 1,
        "messages": (SystemMessage("Be brief."), UserMessage("Find rust agents.")),
        "functions": FUNCTIONS,
    }
    values.update(fields)
    return ModelRequest(**values)


async def test_the_inner_adapter_gets_text_only() -> None:
    inner = TextModel(script=lambda request: "ok")
    adapter = PromptedAdapter(inner, "ptype")
    history = (
        SystemMessage("Be brief."),
        UserMessage("Find rust agents."),
        AssistantMessage(parts=(ToolCall(id="call_1_0", name="search", arguments={"query": "q"}),)),
        ToolResultMessage(call_id="call_1_0", name="search", result=ToolResult.ok("pages")),
    )
    await adapter.complete(_request(round=2, messages=history), lambda event: None)
    sent = inner.requests[0]
    assert sent.functions == ()
    assert sent.tool_choice == "auto"
    assert sent.parallel_tool_calls is None
    system, user, assistant, results = sent.messages
    assert isinstance(system, SystemMessage)
    assert system.content == "Be brief.\n\n" + render_prompted_tools(FUNCTIONS, "ptype")
    assert user == UserMessage("Find rust agents.")
    assert assistant.text == 'search("q")'  # type: ignore[union-attr]
    assert results.text.startswith(TOOL_RESULTS_HEADER)  # type: ignore[union-attr]


async def test_one_call_per_reply_when_calls_run_one_by_one() -> None:
    inner = TextModel(script=["ok"])
    await PromptedAdapter(inner, "json").complete(
        _request(parallel_tool_calls=False), lambda event: None
    )
    assert "Make at most one call per reply." in inner.requests[0].messages[0].content  # type: ignore[union-attr]


async def test_a_system_prompt_and_a_user_turn_are_added_when_missing() -> None:
    inner = TextModel(script=lambda request: "ok")
    messages = (AssistantMessage(parts=(TextPart("Hello."),)),)
    await PromptedAdapter(inner, "json").complete(_request(messages=messages), lambda e: None)
    system, user, assistant = inner.requests[0].messages
    assert system == SystemMessage(render_prompted_tools(FUNCTIONS, "json"))
    assert isinstance(user, UserMessage)
    assert assistant == messages[0]


async def test_calls_are_read_from_the_answer() -> None:
    adapter = PromptedAdapter(TextModel(script=[TWO_CALLS]), "json")
    message = await adapter.complete(_request(), lambda event: None)
    assert message.text == "I will look both up."
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_1_0", "search", {"query": "rust agents"}),
        ("call_1_1", "fetch", {"url": "https://a.example"}),
    ]
    assert message.finish_reason == "tool_calls"
    assert message.api == "text-model"
    assert adapter.api == "text-model"


async def test_call_ids_never_repeat_ids_of_the_conversation() -> None:
    history = (
        UserMessage("go"),
        AssistantMessage(parts=(ToolCall(id="call_1_0", name="fetch", arguments={"url": "u"}),)),
        ToolResultMessage(call_id="call_1_0", name="fetch", result=ToolResult.ok("x")),
    )
    adapter = PromptedAdapter(TextModel(script=["", 'fetch("v")']), "ptype")
    message = await adapter.complete(_request(round=1, messages=history), lambda e: None)
    (call,) = message.tool_calls
    assert call.id.startswith("call_1_0_")


async def test_streaming_passes_text_and_reports_calls() -> None:
    answer = "<think>Two lookups.</think>" + TWO_CALLS + "\nDone."
    adapter = PromptedAdapter(TextModel(script=[answer], chunk_size=3), "json")
    events: list[Event] = []
    message = await adapter.complete(_request(stream=True), events.append)
    visible = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "tool_call" not in visible
    assert visible.split() == ["I", "will", "look", "both", "up.", "Done."]
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "Two lookups."
    started = [(e.call_id, e.name, e.index) for e in events if isinstance(e, ToolCallStarted)]
    assert started == [("call_1_0", "search", 0), ("call_1_1", "fetch", 1)]
    completed = [e.call for e in events if isinstance(e, ToolCallCompleted)]
    assert completed == list(message.tool_calls)
    kinds = [type(e).__name__ for e in events if not isinstance(e, TextDelta | ThinkingDelta)]
    assert kinds == ["ToolCallStarted", "ToolCallCompleted"] * 2
    assert all(e.run_id == "run1" and e.round == 1 for e in events)


async def test_tool_choice_none_sends_no_tools_and_reads_no_calls() -> None:
    inner = TextModel(script=[TWO_CALLS])
    message = await PromptedAdapter(inner, "json").complete(
        _request(tool_choice="none"), lambda e: None
    )
    assert inner.requests[0].messages[0] == SystemMessage("Be brief.")
    assert message.tool_calls == ()


async def test_fallback_to_prompted_after_a_refusal_of_tools() -> None:
    memory = FallbackMemory()
    inner = TextModel(script=[TWO_CALLS, "Answer."], refuse_tools=True, native=True)
    adapter = AutoPromptedAdapter(inner, memory=memory)
    assert adapter.capabilities.native_tools is True
    events: list[Event] = []
    message = await adapter.complete(_request(), events.append)
    assert [c.name for c in message.tool_calls] == ["search", "fetch"]
    assert [len(r.functions) for r in inner.requests] == [2, 0]
    (retry,) = [e for e in events if isinstance(e, ProviderRetry)]
    assert retry.status == 400
    assert "json dialect" in retry.reason
    assert adapter.uses_prompted
    assert adapter.capabilities.native_tools is False
    assert isinstance(adapter.render_tools(FUNCTIONS), str)

    history = (
        *_request().messages,
        message,
        ToolResultMessage(call_id="call_1_0", name="search", result=ToolResult.ok("a")),
        ToolResultMessage(call_id="call_1_1", name="fetch", result=ToolResult.ok("b")),
    )
    again = await adapter.complete(_request(round=2, messages=history), events.append)
    assert again.text == "Answer."
    assert [len(r.functions) for r in inner.requests] == [2, 0, 0]


async def test_the_fallback_is_remembered_per_provider() -> None:
    memory = FallbackMemory()
    refusing = TextModel(
        ProviderConfig(adapter="text-model", base_url="http://127.0.0.1:9/v1", model="small"),
        script=["ok"],
        refuse_tools=True,
        native=True,
    )
    await AutoPromptedAdapter(refusing, memory=memory).complete(_request(), lambda e: None)
    same = TextModel(
        ProviderConfig(adapter="text-model", base_url="http://127.0.0.1:9/v1", model="small"),
        native=True,
    )
    other = TextModel(
        ProviderConfig(adapter="text-model", base_url="http://127.0.0.1:9/v1", model="large"),
        native=True,
    )
    assert AutoPromptedAdapter(same, memory=memory).uses_prompted
    assert not AutoPromptedAdapter(other, memory=memory).uses_prompted


def test_wrap_adapter_follows_the_config() -> None:
    native = TextModel(native=True)
    textual = TextModel(native=False)
    forced = wrap_adapter(native, ProviderConfig(native_tools=False, tool_dialect="xml"))
    assert isinstance(forced, PromptedAdapter)
    assert forced.dialect == "xml"
    assert isinstance(wrap_adapter(textual, ProviderConfig(native_tools=True)), PromptedAdapter)
    auto = wrap_adapter(native, ProviderConfig())
    assert isinstance(auto, AutoPromptedAdapter)
    assert auto.prompted.dialect == "json"
    assert wrap_adapter(native, ProviderConfig(native_tools=True)) is native
    assert wrap_adapter(forced, ProviderConfig()) is forced


def test_a_wrapped_adapter_reports_no_native_tools() -> None:
    capabilities = PromptedAdapter(TextModel(native=True), "json").capabilities
    assert capabilities.native_tools is False
    assert capabilities.tool_choice == frozenset({"auto", "none", "required", "named"})
    assert capabilities.accepts_parallel_tool_calls is False


def test_an_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown tool dialect 'toml'"):
        PromptedAdapter(TextModel(), "toml")  # type: ignore[arg-type]


@pytest.mark.parametrize("stream", [False, True])
async def test_ptype_offers_a_name_it_cannot_write_under_an_alias(stream: bool) -> None:
    from toolwire.tools import FunctionSpec

    weather = FunctionSpec(
        name="get-weather",
        description="Weather for a city.",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}},
        parameter_order=("city",),
    )
    dotted = FunctionSpec(
        name="geo.lookup",
        description="Find a place.",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
        parameter_order=("q",),
    )
    history = (
        UserMessage("go"),
        AssistantMessage(parts=(ToolCall(id="c0", name="get-weather", arguments={"city": "A"}),)),
        ToolResultMessage(call_id="c0", name="get-weather", result=ToolResult.ok("rain")),
    )
    seen: list[ModelRequest] = []

    def reply(request: ModelRequest) -> str:
        seen.append(request)
        return 'get_weather("Lyon")\ngeo.lookup("Lyon")'

    adapter = PromptedAdapter(TextModel(script=reply, chunk_size=4), "ptype")
    events: list[Event] = []
    request = _request(messages=history, functions=(dotted, weather), stream=stream)
    message = await adapter.complete(request, events.append)
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("get-weather", {"city": "Lyon"}),
        ("geo.lookup", {"q": "Lyon"}),
    ]
    prompt = "\n".join(str(getattr(m, "content", "")) for m in seen[0].messages)
    assert "get_weather(" in prompt
    assert "geo.lookup(" in prompt
    assert "get-weather" not in prompt
    named = [e.name for e in events if isinstance(e, ToolCallStarted)]
    named += [e.call.name for e in events if isinstance(e, ToolCallCompleted)]
    assert set(named) <= {"get-weather", "geo.lookup"}
    if stream:
        assert named
