"""Long runs against the fake servers keep inside ``[provider] context_tokens``: old results
cleared, older turns summarised by the provider, the same way every time."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_config import fake_config

import toolwire
import toolwire_anthropic._plugin
import toolwire_gemini._plugin
import toolwire_openai._plugin
from toolwire import Host
from toolwire._defaults.summary import INSTRUCTIONS
from toolwire.context._compact import is_summary
from toolwire.events import ContextCompacted, PluginFailed
from toolwire.messages import AssistantMessage, ToolResultMessage, UserMessage
from toolwire.testing import (
    FakeAnthropicServer,
    FakeOpenAIChatServer,
    FakeProviderServer,
    RecordedRequest,
    ScriptItem,
    tool_call,
)
from toolwire_gemini.testing import FakeGeminiServer

ROUNDS = 40
CONTEXT = 6000


@toolwire.tool(side_effects="read_only")
def read_page(n: int) -> str:
    """Read one page of a long report."""
    return f"page {n}: " + "lorem ipsum dolor sit amet " * 60


def is_summary_request(request: RecordedRequest) -> bool:
    return INSTRUCTIONS in json.dumps(request.body)


def responder() -> Any:
    """Reads page after page, then answers; summary requests get a summary."""
    turns = iter([tool_call("read_page", {"n": n}) for n in range(ROUNDS)] + ["Done: 40 pages."])
    summaries = iter(range(1, 100))

    def answer(request: RecordedRequest) -> ScriptItem:
        if is_summary_request(request):
            return f"Summary {next(summaries)}: pages were read, nothing found yet."
        return next(turns)

    return answer


async def long_run(
    server_cls: type[FakeProviderServer], plugin: Any, **loop: Any
) -> tuple[Any, Any]:
    async with server_cls(responder()) as server:
        config = fake_config(
            server,
            provider={"context_tokens": CONTEXT},
            loop={"max_rounds": ROUNDS + 5, **loop},
        )
        host = Host.load(config, plugins=[plugin])
        host.add_tool(read_page)
        try:
            run = await host.run("Read the report page by page.")
        finally:
            await host.aclose()
    return run, server


@pytest.mark.parametrize(
    ("server_cls", "plugin"),
    [
        (FakeOpenAIChatServer, toolwire_openai._plugin),
        (FakeAnthropicServer, toolwire_anthropic._plugin),
        (FakeGeminiServer, toolwire_gemini._plugin),
    ],
    ids=["openai-chat", "anthropic-messages", "gemini"],
)
async def test_a_long_run_stays_inside_the_context_window(server_cls: Any, plugin: Any) -> None:
    run, server = await long_run(server_cls, plugin)
    assert run.stop_reason == "answered", run.detail
    assert len(run.tool_calls) == ROUNDS
    # Every result is kept whole in the records.
    assert all(r.result is not None and "lorem" in r.result.model_text() for r in run.tool_calls)
    compactions = [e for e in run.events if isinstance(e, ContextCompacted)]
    assert compactions
    assert any(e.cleared for e in compactions)
    assert any(e.summarised for e in compactions)
    assert all(e.tokens_after < e.tokens_before for e in compactions)
    # The provider wrote the summaries, asked without tools.
    summaries = [r for r in server.requests if is_summary_request(r)]
    assert summaries
    assert all("tools" not in r.body for r in summaries)
    # No request of the run went past the window (the fake server counts 4 characters a token).
    sizes = [len(json.dumps(r.body)) // 4 for r in server.requests if not is_summary_request(r)]
    assert max(sizes[-10:]) < CONTEXT
    # The frame is kept: the task, and the conversation still pairs every call with its result.
    messages = run.messages
    assert messages[0] == UserMessage("Read the report page by page.")
    assert any(is_summary(m) for m in messages)
    called = {c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
    answered = {m.call_id for m in messages if isinstance(m, ToolResultMessage)}
    assert called == answered


async def test_the_same_run_is_compacted_the_same_way() -> None:
    first, one = await long_run(FakeOpenAIChatServer, toolwire_openai._plugin)
    second, two = await long_run(FakeOpenAIChatServer, toolwire_openai._plugin)
    assert first.messages == second.messages
    assert one.bodies == two.bodies


async def test_a_summary_that_fails_leaves_the_turns_and_says_so() -> None:
    class Broken:
        __name__ = "broken_summary"

        @toolwire.hookimpl
        def toolwire_summarize_conversation(self, request: Any) -> str:
            raise RuntimeError("no summary today")

    async with FakeOpenAIChatServer(responder()) as server:
        config = fake_config(
            server,
            provider={"context_tokens": CONTEXT},
            loop={"max_rounds": ROUNDS + 5},
        )
        host = Host.load(config, plugins=[toolwire_openai._plugin, Broken()])
        host.add_tool(read_page)
        try:
            run = await host.run("Read the report page by page.")
        finally:
            await host.aclose()
    assert run.stop_reason == "answered", run.detail
    failures = [e for e in run.events if isinstance(e, PluginFailed)]
    assert failures
    assert failures[0].hook == "toolwire_summarize_conversation"
    assert "no summary today" in failures[0].error
    assert not any(is_summary_request(r) for r in server.requests)
    assert not any(is_summary(m) for m in run.messages)
