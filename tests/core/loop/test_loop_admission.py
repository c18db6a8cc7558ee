"""Admission of tool calls, fail-closed: limits, unknown tools, arguments, duplicates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest
from loop_support import (
    assert_no_orphans,
    events_of,
    evolve_loop,
    make_host,
    result_texts,
    run_script,
)

import toolwire
from toolwire.adapters import ModelRequest
from toolwire.messages import ToolResultMessage
from toolwire.testing import tool_call

calls: list[dict[str, Any]] = []


@toolwire.tool
def search(
    query: Annotated[str, "What to look for."], limit: Annotated[int, "How many."] = 3
) -> str:
    """Search the index."""
    calls.append({"query": query, "limit": limit})
    return f"{limit} hits for {query}"


@toolwire.tool(allow_duplicates=True)
def roll() -> int:
    """Roll a die."""
    calls.append({})
    return 4


@pytest.fixture(autouse=True)
def _reset() -> None:
    calls.clear()


def _results(run: Any) -> list[ToolResultMessage]:
    return [m for m in run.messages if isinstance(m, ToolResultMessage)]


async def test_unknown_tool_returns_an_error_naming_it_and_the_offered_tools(
    tmp_path: Path,
) -> None:
    host = make_host(tmp_path, [search, roll])
    run = await run_script(host, [tool_call("serch", {"query": "cats"}), "sorry"])
    assert run.stop_reason == "answered"
    [result] = _results(run)
    assert result.result.status == "error"
    assert result.result.content == (
        'Unknown tool \'serch\' (called with arguments {"query": "cats"}). '
        "Available tools: roll, search."
    )
    [event] = events_of(run, "unknown_tool")
    assert (event.name, event.offered, event.action) == (
        "serch",
        ("roll", "search"),
        "return_error",
    )
    assert run.tool_calls[0].outcome == "unknown_tool"
    assert calls == []


async def test_unknown_tool_fail_policy_stops_and_answers_every_call(tmp_path: Path) -> None:
    host = make_host(tmp_path, [search], loop=evolve_loop(unknown_tool="fail"))
    run = await run_script(
        host,
        [
            [
                tool_call("search", {"query": "a"}),
                tool_call("nope", {}),
                tool_call("search", {"query": "b"}),
            ]
        ],
    )
    assert run.stop_reason == "fail_policy"
    assert "unknown tool 'nope'" in (run.detail or "")
    assert calls == []  # fail-closed: nothing of the turn ran
    assert [r.outcome for r in run.tool_calls] == ["not_run", "unknown_tool", "not_run"]
    assert_no_orphans(run, allow_deferred=False)


async def test_unknown_tool_rewrite_routes_to_the_named_tool(tmp_path: Path) -> None:
    host = make_host(tmp_path, [search], loop=evolve_loop(unknown_tool="rewrite:search"))
    run = await run_script(host, [tool_call("find", {"query": "owls"}), "done"])
    assert calls == [{"query": "owls", "limit": 3}]
    [record] = run.tool_calls
    assert (record.call.name, record.tool, record.outcome) == ("find", "search", "executed")
    assert _results(run)[0].name == "find"  # answers the call as the model named it
    assert events_of(run, "unknown_tool")[0].action == "rewrite:search"


async def test_rewrite_to_a_tool_not_offered_falls_back_to_an_error(tmp_path: Path) -> None:
    host = make_host(tmp_path, [search], loop=evolve_loop(unknown_tool="rewrite:missing"))
    run = await run_script(host, [tool_call("find", {"query": "owls"}), "done"])
    assert events_of(run, "unknown_tool")[0].action == "return_error"
    assert run.tool_calls[0].outcome == "unknown_tool"


async def test_unparseable_arguments_are_repaired(tmp_path: Path) -> None:
    host = make_host(tmp_path, [search])
    run = await run_script(
        host,
        [tool_call("search", raw_arguments="```json\n{query: 'moths', limit: 2}\n```"), "done"],
    )
    assert calls == [{"query": "moths", "limit": 2}]
    [event] = events_of(run, "invalid_arguments")
    assert event.recovery == "repaired"
    assert "markdown code fence" in event.reason
    assert "unquoted keys" in event.reason
    assert run.tool_calls[0].arguments == {"query": "moths", "limit": 2}


async def test_arguments_beyond_repair_get_an_error_with_the_reason(tmp_path: Path) -> None:
    host = make_host(tmp_path, [search])
    run = await run_script(host, [tool_call("search", raw_arguments='{"query": "x"'), "done"])
    assert calls == []
    [event] = events_of(run, "invalid_arguments")
    assert event.recovery == "returned"
    [text] = result_texts(run)
    assert text.startswith("Could not parse the arguments of search as a JSON object: ")
    assert event.reason in text
    assert run.tool_calls[0].outcome == "invalid_arguments"


async def test_invalid_arguments_fail_policy(tmp_path: Path) -> None:
    host = make_host(tmp_path, [search], loop=evolve_loop(invalid_arguments="fail"))
    run = await run_script(host, [tool_call("search", raw_arguments="not json at all")])
    assert run.stop_reason == "fail_policy"
    assert events_of(run, "invalid_arguments")[0].recovery == "failed"
    assert_no_orphans(run, allow_deferred=False)


async def test_schema_validation_refusal_names_the_problem(tmp_path: Path) -> None:
    host = make_host(tmp_path, [search])
    run = await run_script(host, [tool_call("search", {"query": 5, "limt": 1}), "done"])
    assert calls == []
    [text] = result_texts(run)
    assert "query" in text
    assert "limt" in text
    [event] = events_of(run, "invalid_arguments")
    assert event.recovery == "returned"
    assert "query" in event.reason
    host = make_host(tmp_path, [search], loop=evolve_loop(invalid_arguments="fail"))
    run = await run_script(host, [tool_call("search", {"query": 5})])
    assert run.stop_reason == "fail_policy"
    assert "invalid" in (run.detail or "")


async def test_identical_calls_are_suppressed_per_run(tmp_path: Path) -> None:
    host = make_host(tmp_path, [search, roll])
    run = await run_script(
        host,
        [
            [tool_call("search", {"query": "a"}), tool_call("search", {"limit": 3, "query": "a"})],
            [tool_call("search", {"query": "a"}), tool_call("roll"), tool_call("roll")],
            "done",
        ],
    )
    assert calls == [{"query": "a", "limit": 3}, {}, {}]
    outcomes = [r.outcome for r in run.tool_calls]
    assert outcomes == ["executed", "duplicate", "duplicate", "executed", "executed"]
    dupes = events_of(run, "duplicate_suppressed")
    assert [d.first_call_id for d in dupes] == ["call_1_0", "call_1_0"]
    assert "identical to call call_1_0" in result_texts(run)[1]


async def test_a_failed_call_may_be_repeated(tmp_path: Path) -> None:
    attempts: list[int] = []

    @toolwire.tool
    def flaky(n: int) -> str:
        """Fails the first time."""
        attempts.append(n)
        if len(attempts) == 1:
            raise RuntimeError("try again")
        return "ok"

    host = make_host(tmp_path, [flaky])
    run = await run_script(
        host, [tool_call("flaky", {"n": 1}), tool_call("flaky", {"n": 1}), "done"]
    )
    assert attempts == [1, 1]
    assert [r.outcome for r in run.tool_calls] == ["executed", "executed"]


async def test_unknown_tool_loop_is_stopped_by_the_budget(tmp_path: Path) -> None:
    host = make_host(tmp_path, [search], loop=evolve_loop(max_tool_calls=3, max_rounds=50))

    def script(request: ModelRequest) -> Any:
        return tool_call("imaginary", {"round": request.round})

    run = await run_script(host, script)
    assert run.stop_reason == "max_tool_calls"
    assert run.rounds == 4
    assert run.tool_calls_used == 3
    assert [r.outcome for r in run.tool_calls] == ["unknown_tool"] * 3 + ["limit"]
    assert "limit of 3 tool call(s)" in result_texts(run)[-1]
    [limit] = events_of(run, "limit_reached")
    assert (limit.limit, limit.value) == ("max_tool_calls", 3)
    assert_no_orphans(run, allow_deferred=False)


async def test_invalid_argument_loop_is_stopped_by_the_budget(tmp_path: Path) -> None:
    host = make_host(tmp_path, [search], loop=evolve_loop(max_tool_calls=2, max_rounds=50))
    run = await run_script(host, lambda request: tool_call("search", raw_arguments="{{{"))
    assert run.stop_reason == "max_tool_calls"
    assert [r.outcome for r in run.tool_calls] == ["invalid_arguments"] * 2 + ["limit"]


async def test_calls_over_the_budget_in_one_turn_are_answered(tmp_path: Path) -> None:
    host = make_host(tmp_path, [search], loop=evolve_loop(max_tool_calls=2))
    run = await run_script(host, [[tool_call("search", {"query": q}) for q in "abcd"]])
    assert [r.outcome for r in run.tool_calls] == ["executed", "executed", "limit", "limit"]
    assert len(calls) == 2
    assert run.stop_reason == "max_tool_calls"
    assert_no_orphans(run, allow_deferred=False)


async def test_max_rounds(tmp_path: Path) -> None:
    host = make_host(tmp_path, [roll], loop=evolve_loop(max_rounds=2))
    run = await run_script(host, lambda request: tool_call("roll"))
    assert run.stop_reason == "max_rounds"
    assert run.rounds == 2
    assert "after 2 round(s)" in (run.detail or "")
    assert events_of(run, "limit_reached")[0].limit == "max_rounds"
    assert_no_orphans(run, allow_deferred=False)


async def test_deadline_stops_a_slow_tool_and_the_run(tmp_path: Path) -> None:
    import asyncio

    @toolwire.tool
    async def slow() -> str:
        """Takes long."""
        await asyncio.sleep(5)
        return "late"

    host = make_host(tmp_path, [slow], loop=evolve_loop(deadline_seconds=0.1))
    run = await run_script(host, [tool_call("slow"), "never"])
    assert run.stop_reason == "deadline"
    assert "deadline passed while it ran" in result_texts(run)[0]
    assert events_of(run, "limit_reached")[0].limit == "deadline"
    assert_no_orphans(run, allow_deferred=False)


async def test_deadline_during_the_provider_call(tmp_path: Path) -> None:
    import asyncio

    async def script(request: ModelRequest) -> Any:
        await asyncio.sleep(5)
        return "never"

    host = make_host(tmp_path, loop=evolve_loop(deadline_seconds=0.05))
    run = await run_script(host, script)
    assert run.stop_reason == "deadline"
    assert len(run.messages) == 1


async def test_a_call_that_could_not_be_read_gets_the_readers_reason(tmp_path: Path) -> None:
    from toolwire.messages import ToolCall

    unreadable = ToolCall(
        id="c1",
        name="",
        raw_arguments="<tool_call>{search",
        invalid_reason="the call is not closed",
    )
    host = make_host(tmp_path, [search])
    run = await run_script(host, [[unreadable], "done"])
    assert calls == []
    [text] = result_texts(run)
    assert text == "Could not read a tool call: the call is not closed. Available tools: search."
    [event] = events_of(run, "invalid_arguments")
    assert event.recovery == "returned"
    assert events_of(run, "unknown_tool") == []
    assert_no_orphans(run)


async def test_the_adapters_reason_is_kept_when_repair_fails(tmp_path: Path) -> None:
    from toolwire.messages import ToolCall

    call = ToolCall(
        id="c1", name="search", raw_arguments="query=moths", invalid_reason="put text in quotes"
    )
    host = make_host(tmp_path, [search])
    run = await run_script(host, [[call], "done"])
    [text] = result_texts(run)
    assert "(put text in quotes)" in text
