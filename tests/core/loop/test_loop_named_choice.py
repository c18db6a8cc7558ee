"""A tool the run's tool choice names: every resolver is told (``OfferRequest.chosen_tool``) in
every round of the run, a resolver that gives way offers it, and one that withholds it for its own
reason still ends the run with the named choice refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from loop_support import make_host, names_of, plain_tool, plugin, scripted_loop

from toolwire import NOT_OFFERED, FunctionSpec, OfferRequest, Tool
from toolwire.adapters import NamedToolChoice
from toolwire.loop import Approve
from toolwire.messages import UserMessage
from toolwire.testing import tool_call
from toolwire.tools import cached_resolver


def _when_named(asked: list[tuple[int, str | None]]) -> Any:
    """A relevance resolver: offers its tool only when the words say "sum", or when named."""

    def resolve(tool: Tool, request: OfferRequest) -> FunctionSpec | None:
        asked.append((request.round, request.chosen_tool))
        words = " ".join(m.text for m in request.messages if isinstance(m, UserMessage))
        if request.chosen_tool == tool.name or "sum" in words:
            return tool.function_spec()
        return None

    return resolve


def _host_with_sum(tmp_path: Path, how: str, asked: list[tuple[int, str | None]]) -> Any:
    """A host whose ``sum`` tool is offered by relevance: through the tool's own resolver (the
    kept offer's path) or through a plugin's ``toolwire_resolve_function`` (every hook asked)."""
    if how == "resolver":
        return make_host(
            tmp_path,
            [
                plain_tool("alpha"),
                plain_tool("sum", activation="context", resolver=_when_named(asked)),
            ],
        )
    relevant = _when_named(asked)

    def toolwire_resolve_function(tool: Tool, request: OfferRequest) -> Any:
        if tool.name != "sum":
            return None
        return relevant(tool, request) or NOT_OFFERED

    return make_host(
        tmp_path,
        [plain_tool("alpha"), plain_tool("sum")],
        plugins=[plugin("relevance", toolwire_resolve_function=toolwire_resolve_function)],
    )


@pytest.mark.parametrize("how", ["resolver", "plugin"])
async def test_a_named_tool_is_offered_in_every_round_of_its_run(tmp_path: Path, how: str) -> None:
    asked: list[tuple[int, str | None]] = []
    host = _host_with_sum(tmp_path, how, asked)
    script = [tool_call("sum", {}), tool_call("alpha", {}), "done", "plain", "again", "x"]
    loop, model = scripted_loop(host, script)
    run = await loop.run("what time is it", tool_choice="sum")
    assert run.stop_reason == "answered", run.detail
    assert [names_of(r.functions) for r in model.requests] == [["alpha", "sum"]] * 3
    assert [r.tool_choice for r in model.requests] == [NamedToolChoice("sum"), "auto", "auto"]
    assert asked == [(1, "sum"), (2, "sum"), (3, "sum")]
    # The same loop (and its kept offer) serves the next runs: each gets the offer of its own
    # choice, from its first round on.
    firsts: list[list[str]] = []
    for choice in ("auto", "sum", "required", "sum"):
        sent = len(model.requests)
        await loop.run("what time is it", tool_choice=choice)
        firsts.append(names_of(model.requests[sent].functions))
    assert firsts == [["alpha"], ["alpha", "sum"], ["alpha"], ["alpha", "sum"]]


async def test_a_tool_withheld_for_another_reason_still_refuses_the_choice(tmp_path: Path) -> None:
    told: list[str | None] = []

    def needs_a_key(tool: Tool, request: OfferRequest) -> FunctionSpec | None:
        told.append(request.chosen_tool)
        return None  # no credential configured: named or not, nothing to offer

    vault = plain_tool("vault", activation="context", resolver=needs_a_key)
    host = make_host(tmp_path, [plain_tool("alpha"), vault])
    loop, model = scripted_loop(host, ["never asked"])
    run = await loop.run("open the vault", tool_choice="vault")
    assert run.stop_reason == "error"
    assert run.detail == (
        "tool_choice names the tool 'vault', which is not offered in round 1 (offered: alpha)"
    )
    assert told == ["vault"]
    assert model.requests == []


async def test_a_resumed_run_still_names_its_tool(tmp_path: Path) -> None:
    asked: list[tuple[int, str | None]] = []
    guarded = plain_tool(
        "sum", activation="context", resolver=_when_named(asked), requires_approval=True
    )
    host = make_host(tmp_path, [plain_tool("alpha"), guarded])
    loop, model = scripted_loop(host, [tool_call("sum", {}), "done"])
    run = await loop.run("what time is it", tool_choice="sum")
    assert run.stop_reason == "deferred"
    resumed = await loop.resume(run, {run.deferred[0].call_id: Approve()})
    assert resumed.stop_reason == "answered", resumed.detail
    assert [names_of(r.functions) for r in model.requests] == [["alpha", "sum"]] * 2
    # Resuming resolves the waiting turn's offer again, then round 2's: each told of the choice.
    assert asked[-1] == (2, "sum")
    assert {chosen for _, chosen in asked} == {"sum"}


def test_a_cached_resolution_for_a_named_tool_stays_with_runs_that_name_it() -> None:
    calls: list[str | None] = []

    def fetching(tool: Tool, request: OfferRequest) -> FunctionSpec | None:
        calls.append(request.chosen_tool)
        return tool.function_spec() if request.chosen_tool == tool.name else None

    tool = plain_tool("projects", activation="context", resolver=cached_resolver(fetching))
    opening = (UserMessage("hello"),)

    def request(chosen: str | None) -> OfferRequest:
        return OfferRequest(run_id="r", round=1, messages=opening, api="x", chosen_tool=chosen)

    assert tool.resolve(request("projects")) == tool.function_spec()
    assert tool.resolve(request("projects")) == tool.function_spec()  # kept
    assert tool.resolve(request(None)) is None  # not the named run's entry
    assert tool.resolve(request("other")) is None
    assert calls == ["projects", None, "other"]
