"""Adapters keep each run's history on the wire: a request folds in only its new messages, and
what it sends equals a fresh rendering, whatever other runs and edits came in between."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_message_cache import _call, conversations

from toolwire.adapters import RenderedHistory, RenderedMessages
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from toolwire.tools import ToolResult
from toolwire_anthropic._messages import _Messages, _wire, render_messages
from toolwire_gemini._wire import _Contents, render_contents
from toolwire_gemini._wire import _wire as gemini_wire
from toolwire_openai._chat import _ChatMessages, _message, render_chat_messages
from toolwire_openai._responses import _Input, _items, render_responses_input

Fold = Callable[[Callable[[Message, Any], Any]], Any]
# (name, the kept form of one message, an empty fold over a renderer, the fresh rendering)
ADAPTERS: list[tuple[str, Callable[[Message, Any], Any], Fold, Callable[[Any], Any]]] = [
    (
        "openai-chat",
        _message,
        lambda render: _ChatMessages(render, results_as_user=False),
        render_chat_messages,
    ),
    (
        "openai-chat-results-as-user",
        _message,
        lambda render: _ChatMessages(render, results_as_user=True),
        lambda messages: render_chat_messages(messages, results_as_user=True),
    ),
    ("openai-responses", _items, _Input, render_responses_input),
    ("anthropic-messages", _wire, _Messages, render_messages),
    (
        "gemini",
        gemini_wire,
        lambda render: _Contents(render, result_role="user"),
        render_contents,
    ),
]
APIS = [name for name, *_ in ADAPTERS]


def _api(name: str) -> str:
    return "openai-chat" if name.startswith("openai-chat") else name


@pytest.mark.parametrize(("name", "one", "fold", "fresh"), ADAPTERS, ids=APIS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_kept_history_equals_a_fresh_rendering_round_after_round(
    name: str, one: Any, fold: Fold, fresh: Callable[[Any], Any], data: st.DataObject
) -> None:
    messages = data.draw(conversations(_api(name)))
    other = data.draw(conversations(_api(name)))
    kept: RenderedMessages[Any] = RenderedMessages(one)
    history: RenderedHistory[Any] = RenderedHistory(lambda: fold(kept.get))
    sent = []
    for end in range(1, len(messages) + 1):
        body = history.get("run", messages[:end])
        assert body == fresh(messages[:end])
        sent.append((body, copy.deepcopy(body)))
        # The loop puts the system prompt first as a new object every round.
        prompted = [SystemMessage("Use the tools."), *messages[:end]]
        assert history.get("prompted", prompted) == fresh(prompted)
        # Another run through the same adapter in between, and the same request again.
        assert history.get("other", other) == fresh(other)
        assert history.get("run", messages[:end]) == fresh(messages[:end])
    # What was sent stays as it was while later requests of the run are folded.
    for body, snapshot in sent:
        assert body == snapshot
    # A compacted or edited conversation of the same run is folded from its start.
    edited = [SystemMessage("New instructions."), *messages[1:]]
    assert history.get("run", edited) == fresh(edited)
    assert history.get("run", messages[:1]) == fresh(messages[:1])


class Counting:
    """A fold that lists the messages it is fed (and is fed each of them once)."""

    fed: ClassVar[list[str]] = []

    def __init__(self, seen: tuple[str, ...] = ()) -> None:
        self.seen = seen

    def feed(self, message: Message) -> None:
        assert isinstance(message, UserMessage)
        assert isinstance(message.content, str)
        Counting.fed.append(message.content)
        self.seen = (*self.seen, message.content)

    def copy(self) -> Counting:
        return Counting(self.seen)

    def result(self) -> tuple[str, ...]:
        return self.seen


def test_a_request_folds_in_only_the_messages_new_to_its_run() -> None:
    Counting.fed = []
    history: RenderedHistory[tuple[str, ...]] = RenderedHistory(Counting, kept=2)
    one, two, three = UserMessage("one"), UserMessage("two"), UserMessage("three")
    assert history.get("a", [one]) == ("one",)
    assert history.get("a", [one, two]) == ("one", "two")
    assert history.get("b", [three]) == ("three",)
    assert history.get("a", [one, two, three]) == ("one", "two", "three")
    assert Counting.fed == ["one", "two", "three", "three"]
    # An equal message in another object (the loop's system prompt, made every round) is the
    # same history; another message is not, and the run is folded from its start.
    Counting.fed = []
    assert history.get("a", [UserMessage("one"), two, three]) == ("one", "two", "three")
    assert Counting.fed == []
    assert history.get("a", [UserMessage("uno"), two]) == ("uno", "two")
    assert Counting.fed == ["uno", "two"]
    assert history.get("a", [one, two]) == ("one", "two")
    # A shorter conversation (compacted) too.
    Counting.fed = []
    assert history.get("b", []) == ()
    assert history.get("b", [one]) == ("one",)
    assert Counting.fed == ["one"]
    # Only the most recently asked runs are kept; one pushed out starts again.
    assert len(history) == 2
    history.get("c", [three])
    assert len(history) == 2
    Counting.fed = []
    assert history.get("a", [one, two, three]) == ("one", "two", "three")
    assert Counting.fed == ["one", "two", "three"]
    history.clear()
    assert len(history) == 0


def test_a_round_of_results_stays_one_turn_when_a_request_came_in_between() -> None:
    # Anthropic sends a round's results as one user turn: a request that carried only the
    # first result must not leave it in a turn of its own in the next request's history.
    call_a, call_b = _call(0, "anthropic-messages"), _call(1, "anthropic-messages")
    messages: list[Message] = [
        UserMessage("go"),
        AssistantMessage(parts=(call_a, call_b), api="anthropic-messages"),
        ToolResultMessage(call_id=call_a.id, name="add", result=ToolResult(content="1")),
        ToolResultMessage(call_id=call_b.id, name="add", result=ToolResult(content="2")),
    ]
    kept: RenderedMessages[Any] = RenderedMessages(_wire)
    history: RenderedHistory[Any] = RenderedHistory(lambda: _Messages(kept.get))
    assert history.get("run", messages[:3]) == render_messages(messages[:3])
    assert history.get("run", messages) == render_messages(messages)
    assert len(render_messages(messages)[1]) == 3
