"""View messages: what a card says about its tool and result, and a stalled page's stream."""

from __future__ import annotations

import json

import toolwire
from toolwire import Config, Host, Source, ToolResult
from toolwire.events import ToolCallCompleted, ToolCallStarted, ToolCompleted
from toolwire.loop import Run
from toolwire.messages import ToolCall
from toolwire_webui import ConversationStore
from toolwire_webui._conversation import WATCHER_BACKLOG, LiveConversation
from toolwire_webui._view import (
    RESULT_TEXT_LIMIT,
    ViewTranslator,
    compact,
    result_view,
    tool_card,
)


def test_a_card_names_the_tools_side_effects_most_serious_first():
    @toolwire.tool(side_effects=["network", "destructive"], requires_approval=True, icon="🧨")
    def wipe(target: str) -> str:
        """Wipe something.

        Args:
            target: What.
        """
        return target

    @toolwire.tool
    def plain(x: int) -> int:
        """Plain.

        Args:
            x: A number.
        """
        return x

    assert tool_card(wipe, "wipe") == {
        "title": "wipe",
        "icon": "🧨",
        "risk": ["destructive", "network"],
        "approval": True,
    }
    assert tool_card(plain, "plain")["risk"] == ["unclassified"]
    assert tool_card(None, "ghost") == {
        "title": "ghost",
        "icon": None,
        "risk": ["unknown tool"],
        "approval": False,
    }


def test_a_result_view_caps_long_text_and_carries_data_and_sources():
    long = ToolResult.ok("x" * (RESULT_TEXT_LIMIT + 10))
    view = result_view(long)
    assert len(view["text"]) == RESULT_TEXT_LIMIT
    assert view["truncated"] is True
    data = result_view(
        ToolResult.ok(data={"città": [1, 2]}, sources=[Source("https://a.example/", "A")])
    )
    assert json.loads(data["data"]) == {"città": [1, 2]}
    assert "città" in data["data"]  # non-ASCII kept as is
    assert data["sources"] == [{"url": "https://a.example/", "title": "A", "link": True}]
    hostile = result_view(ToolResult.ok("x", sources=[Source("javascript:alert(1)", "J")]))
    assert hostile["sources"][0]["link"] is False
    assert result_view(ToolResult.error("boom"))["text"] == "boom"


def test_the_log_keeps_end_states_and_drops_streaming_pieces():
    views = [
        {"kind": "status", "text": "…"},
        {"kind": "card_open", "card": "r/c"},
        {"kind": "arg_append", "card": "r/c", "key": "a", "text": "x"},
        {"kind": "card_args", "card": "r/c", "arguments": {"a": "x"}},
        {"kind": "card_progress", "card": "r/c", "fraction": 0.5},
        {"kind": "card_result", "card": "r/c", "status": "ok"},
    ]
    assert [v["kind"] for v in compact(views)] == ["card_open", "card_args", "card_result"]


async def test_a_page_that_stops_reading_is_cut_off_instead_of_growing_the_server():
    store = ConversationStore(":memory:")
    host = Host.load(Config())
    try:
        record = store.create()
        live = LiveConversation(record.id, host, store)
        _, stalled = live.watch()
        _, reading = live.watch()
        for i in range(WATCHER_BACKLOG + 2):
            live._publish([{"kind": "text", "turn": "t", "text": str(i)}])
            while not reading.empty():
                reading.get_nowait()
        items = []
        while not stalled.empty():
            items.append(stalled.get_nowait())
        assert items[-1] is None  # the stream was closed; the page reconnects for a snapshot
        assert len(items) == WATCHER_BACKLOG + 2
        live._publish([{"kind": "text", "turn": "t", "text": "more"}])
        assert stalled.empty()
        assert reading.get_nowait() == [{"kind": "text", "turn": "t", "text": "more"}]
    finally:
        await host.aclose()
        store.close()


def test_a_call_the_provider_ran_is_shown_as_such_from_its_start_to_its_result():
    translator = ViewTranslator(lambda name: None)
    call = ToolCall(
        id="ws_1", name="web_search", arguments={"query": "toolwire"}, provider_executed=True
    )
    views = translator.translate(
        ToolCallStarted(run_id="r", round=1, call_id="ws_1", name=call.name, provider_executed=True)
    )
    views += translator.translate(ToolCallCompleted(run_id="r", round=1, call=call))
    views += translator.translate(
        ToolCompleted(
            run_id="r",
            round=1,
            call_id="ws_1",
            name="web_search",
            result=ToolResult.ok("searched", sources=[Source("https://a.example/", "A")]),
        )
    )
    assert [v["kind"] for v in views] == ["status_clear", "card_open", "card_args", "card_result"]
    opened = views[1]
    assert opened["provider"] is True
    assert "unknown tool" not in opened["risk"]
    assert views[2]["provider"] is True
    assert views[3]["provider"] is True
    assert views[3]["status"] == "ok"
    assert views[3]["sources"][0]["n"] == 1


def test_a_provider_call_without_a_reported_result_ends_run_by_the_provider():
    translator = ViewTranslator(lambda name: None)
    call = ToolCall(id="ws_1", name="web_search", arguments={}, provider_executed=True)
    translator.translate(ToolCallCompleted(run_id="r", round=1, call=call))
    run = Run.from_json(
        {
            "id": "r",
            "messages": [],
            "stop_reason": "answered",
            "tool_calls": [
                {
                    "call": {
                        "id": "ws_1",
                        "name": "web_search",
                        "arguments": {},
                        "provider_executed": True,
                    },
                    "round": 1,
                    "outcome": "provider_executed",
                }
            ],
        }
    )
    (ended,) = translator.settle(run)
    assert ended["status"] == "provider"


def test_a_sub_runs_calls_are_notes_in_the_card_of_the_call_that_started_it():
    from toolwire.events import ParentCall, RunFinished, TextDelta, ToolStarted

    translator = ViewTranslator(lambda name: None)
    parent = ParentCall(run_id="r", call_id="call_9", round=1)
    sub = "r.call_9"
    views = [
        *translator.translate(TextDelta(run_id=sub, round=1, text="hidden", parent=parent)),
        *translator.translate(
            ToolStarted(run_id=sub, round=1, call_id="c1", name="lookup", parent=parent)
        ),
        *translator.translate(
            ToolCompleted(
                run_id=sub,
                round=1,
                call_id="c1",
                name="lookup",
                result=ToolResult.ok("21 °C"),
                parent=parent,
            )
        ),
        *translator.translate(
            RunFinished(run_id=sub, round=2, stop_reason="max_rounds", parent=parent)
        ),
    ]
    assert views == [
        {"kind": "card_note", "card": "r/call_9", "text": "↳ lookup"},
        {"kind": "card_note", "card": "r/call_9", "text": "↳ lookup: ok"},
        {"kind": "card_note", "card": "r/call_9", "text": "↳ stopped: max_rounds"},
    ]


def test_a_settled_turn_says_what_it_spent():
    translator = ViewTranslator(lambda name: None)
    run = Run.from_json(
        {
            "id": "r",
            "messages": [],
            "stop_reason": "answered",
            "usage": {"input_tokens": 1200, "cache_read_tokens": 1000, "output_tokens": 90},
            "cost": 0.0042,
        }
    )
    (view,) = translator.settle(run)
    assert view == {
        "kind": "usage",
        "text": "1,200 tokens in (1,000 cached) · 90 out · cost 0.0042",
        "cost": 0.0042,
    }
    assert (
        translator.settle(Run.from_json({"id": "q", "messages": [], "stop_reason": "answered"}))
        == []
    )
