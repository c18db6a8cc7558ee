"""What a round costs does not grow with the run: the same system message round after round, a
result worked out once for every ledger row that stores it, a turn's records found at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from loop_support import make_host, scripted_loop

import toolwire
from toolwire.adapters import RenderedMessages
from toolwire.loop import ToolCallRecord, _codec, _ledger, _run
from toolwire.loop._turn import round_records
from toolwire.messages import SystemMessage
from toolwire.testing import tool_call
from toolwire.tools import ToolResult


@toolwire.tool(allow_duplicates=True)
def note(text: str) -> str:
    """Write a note."""
    return f"noted {text}"


SCRIPT: list[Any] = [tool_call("note", {"text": str(i)}) for i in range(4)] + ["done"]


async def test_every_round_sends_the_same_system_message(tmp_path: Path) -> None:
    loop, model = scripted_loop(make_host(tmp_path, [note]), SCRIPT)
    run = await loop.run("take notes", system_prompt="be brief")
    assert run.stop_reason == "answered"
    firsts = [r.messages[0] for r in model.requests]
    assert len(firsts) == 5
    assert isinstance(firsts[0], SystemMessage)
    assert firsts[0].content.startswith("be brief")
    # One object: what an adapter kept of its rendering is found by identity every round.
    assert all(m is firsts[0] for m in firsts)


async def test_a_result_is_worked_out_once_for_all_its_ledger_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worked: list[int] = []
    plain = _codec.result_to_json

    def counted(result: ToolResult) -> dict[str, Any]:
        worked.append(id(result))
        return plain(result)

    for module in (_codec, _run, _ledger):  # wherever the ledger's rows could be made
        monkeypatch.setattr(module, "result_to_json", counted, raising=False)
    loop, _ = scripted_loop(make_host(tmp_path, [note]), SCRIPT)
    run = await loop.run("take notes")
    assert run.stop_reason == "answered"
    # Each result once: its settled row, its record's row and its message's row share it.
    assert len(worked) == len(set(worked)) == 4
    # What is stored is still the run's JSON, and the run's own JSON is fresh every time.
    assert loop.ledger is not None
    assert loop.ledger.load_run(run.id) == run.to_json(events=False)
    result = run.tool_calls[0].result
    assert result is not None
    shown = run.to_json()["tool_calls"][0]["result"]
    forms = _codec.ResultForms()
    assert shown == forms(result)
    assert forms(result) is forms(result)
    assert shown is not forms(result)


def test_kept_renderings_stay_within_their_limit() -> None:
    rendered: list[str] = []

    def render(message: SystemMessage, context: Any) -> str:
        rendered.append(message.content)
        return message.content.upper()

    kept: RenderedMessages[str] = RenderedMessages(render, limit=2)
    messages = [SystemMessage(text) for text in ("a", "b", "c")]
    assert [kept.get(m) for m in messages] == ["A", "B", "C"]
    assert len(kept) == 2
    assert [kept.get(m) for m in messages[1:]] == ["B", "C"]  # kept
    assert kept.get(messages[0]) == "A"  # forgotten first: rendered again
    assert rendered == ["a", "b", "c", "a"]


def test_the_records_of_a_round_are_the_tail_of_the_runs() -> None:
    def record(round: int, call_id: str, text: str) -> ToolCallRecord:
        call = tool_call("note", {"text": text}, id=call_id)
        return ToolCallRecord(
            call=call, round=round, outcome="executed", result=ToolResult.ok(text)
        )

    records = [record(1, "a", "1"), record(2, "a", "2"), record(3, "b", "3"), record(3, "b", "4")]
    found = round_records(records, 3)
    assert list(found) == ["b"]
    assert found["b"] is records[3]  # a call recorded twice: the later record
    assert round_records(records, 2) == {"a": records[1]}
    assert round_records([], 1) == {}
