"""Adapters keep each message's wire form: a kept rendering equals a fresh one, whatever came
before it, and a message is rendered again when what its rendering depends on changed."""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.adapters import RenderedMessages
from toolwire.messages import (
    AssistantMessage,
    Message,
    OpaquePart,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from toolwire.tools import ToolResult
from toolwire_anthropic._messages import _render_messages, _wire, render_messages
from toolwire_gemini._wire import _contents, render_contents
from toolwire_gemini._wire import _wire as gemini_wire
from toolwire_openai._chat import _chat_messages, _message, render_chat_messages
from toolwire_openai._responses import _items, _responses_input, render_responses_input

# (name, the kept form of one message, the whole rendering with a renderer, the fresh one)
Renderer = Callable[[Sequence[Message], Callable[[Message, Any], Any]], Any]
ADAPTERS: list[tuple[str, Callable[[Message, Any], Any], Renderer, Callable[[Any], Any]]] = [
    ("openai-chat", _message, _chat_messages, render_chat_messages),
    ("openai-responses", _items, _responses_input, render_responses_input),
    ("anthropic-messages", _wire, _render_messages, render_messages),
    (
        "gemini",
        gemini_wire,
        lambda messages, render: _contents(messages, render, result_role="user"),
        render_contents,
    ),
]
APIS = [name for name, *_ in ADAPTERS]


def _call(number: int, api: str, *, wire_id: str | None = None) -> ToolCall:
    data: dict[str, Any] = {}
    if wire_id is not None:
        data["wire_id"] = wire_id
    if api == "openai-responses":
        data["item_id"] = f"fc_{number}"
    if api == "gemini":
        # Gemini's own id of a call is in the part it wrote.
        data["part"] = {"functionCall": {"id": wire_id or f"g{number}", "name": "add"}}
    return ToolCall(
        id=f"call_{number}",
        name="add",
        arguments={"a": number, "b": 1},
        raw_arguments=f'{{"a": {number}, "b": 1}}',
        provider_data=data or None,
    )


@st.composite
def conversations(draw: st.DrawFn, api: str) -> list[Message]:
    """A conversation as the loop builds it: a system prompt, a prompt, turns of text,
    thinking, opaque items and calls, each call answered."""
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(SystemMessage(draw(st.sampled_from(["Be brief.", "Use the tools."]))))
    messages.append(UserMessage(draw(st.sampled_from(["add them", "¿sumas?", "加"]))))
    number = 0
    for _ in range(draw(st.integers(0, 6))):
        parts: list[Any] = []
        if draw(st.booleans()):
            parts.append(TextPart(draw(st.sampled_from(["", "Adding.", "ok"]))))
        if draw(st.booleans()):
            parts.append(ThinkingPart(text="hm", signature="sig"))
        if draw(st.booleans()):
            parts.append(OpaquePart(api=api, data={"type": "reasoning", "id": f"rs_{number}"}))
        calls = []
        for _ in range(draw(st.integers(0, 3))):
            wire_id = draw(st.sampled_from([None, f"wire_{number}"]))
            calls.append(_call(number, api, wire_id=wire_id))
            number += 1
        parts.extend(calls)
        messages.append(AssistantMessage(parts=tuple(parts), api=api))
        for call in calls:
            failed = draw(st.booleans())
            result = ToolResult.error("no") if failed else ToolResult(content=str(number))
            messages.append(ToolResultMessage(call_id=call.id, name="add", result=result))
        if draw(st.booleans()):
            messages.append(UserMessage("and again"))
    return messages


@pytest.mark.parametrize(("api", "one", "render", "fresh"), ADAPTERS, ids=APIS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_kept_rendering_equals_a_fresh_one_round_after_round(
    api: str, one: Any, render: Renderer, fresh: Callable[[Any], Any], data: st.DataObject
) -> None:
    messages = data.draw(conversations(api))
    other = data.draw(conversations(api))
    kept: RenderedMessages[Any] = RenderedMessages(one)
    for end in range(1, len(messages) + 1):
        assert render(messages[:end], kept.get) == fresh(messages[:end])
        # Another conversation through the same adapter in between keeps nothing stale.
        assert render(other, kept.get) == fresh(other)
    # A new system prompt in front of the same history (the per-round tool instructions).
    prompt = [SystemMessage("New instructions."), *messages]
    assert render(prompt, kept.get) == fresh(prompt)


@pytest.mark.parametrize(("api", "one", "render", "fresh"), ADAPTERS, ids=APIS)
def test_a_result_follows_the_wire_id_of_the_call_it_answers(
    api: str, one: Any, render: Renderer, fresh: Callable[[Any], Any]
) -> None:
    # The same result message in two conversations whose calls had different ids on the wire.
    result = ToolResultMessage(call_id="call_0", name="add", result=ToolResult(content="1"))
    first = [
        UserMessage("go"),
        AssistantMessage(parts=(_call(0, api, wire_id="first"),), api=api),
        result,
    ]
    second = [
        UserMessage("go"),
        AssistantMessage(parts=(_call(0, api, wire_id="second"),), api=api),
        result,
    ]
    kept: RenderedMessages[Any] = RenderedMessages(one)
    assert render(first, kept.get) == fresh(first)
    assert render(second, kept.get) == fresh(second)
    assert fresh(first) != fresh(second)


@pytest.mark.parametrize(("api", "one", "render", "fresh"), ADAPTERS, ids=APIS)
def test_the_kept_forms_are_not_changed_by_later_requests(
    api: str, one: Any, render: Renderer, fresh: Callable[[Any], Any]
) -> None:
    # Gemini gathers the parts of consecutive user turns into one turn: the kept parts of the
    # first must stay as they were.
    messages: list[Message] = [UserMessage("one"), UserMessage("two")]
    kept: RenderedMessages[Any] = RenderedMessages(one)
    alone = render(messages[:1], kept.get)
    snapshot = repr(alone)
    assert render(messages, kept.get) == fresh(messages)
    assert repr(render(messages[:1], kept.get)) == snapshot == repr(fresh(messages[:1]))


def test_a_message_is_rendered_once_while_it_lives() -> None:
    rendered: list[tuple[str, Any]] = []

    def render(message: Any, context: Any) -> str:
        rendered.append((message.content, context))
        return f"{message.content}/{context}"

    kept: RenderedMessages[str] = RenderedMessages(render)
    first = UserMessage("one")
    assert kept.get(first) == "one/None"
    assert kept.get(first) == "one/None"
    assert rendered == [("one", None)]
    # An equal message in another object is rendered anew; so is one under another context.
    assert kept.get(UserMessage("one")) == "one/None"
    assert kept.get(first, "x") == "one/x"
    assert kept.get(first, "x") == "one/x"
    assert rendered == [("one", None), ("one", None), ("one", "x")]
    # A collected message leaves nothing behind.
    second = UserMessage("two")
    kept.get(second)
    assert len(kept) == 2
    del first, second
    gc.collect()
    assert len(kept) == 0
    kept.get(UserMessage("three"))
    kept.clear()
    assert len(kept) == 0
