"""``toolwire_request_context``: plugins add context passages to a request, alone and in order."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Annotated, Any

import pytest

import toolwire
from toolwire import Config, Host, ToolCallingLoop, TrustLevel, UserMessage
from toolwire.config import LedgerConfig
from toolwire.context import ContextRequest, RequestContext
from toolwire.messages import TextPart
from toolwire.testing import ScriptedModel, tool_call
from toolwire.tools import Source


@toolwire.tool
def echo(text: Annotated[str, "The text to give back."]) -> str:
    """Give the text back."""
    return text


def _plugin(name: str, **hooks: Any) -> types.SimpleNamespace:
    for hook in hooks.values():
        toolwire.hookimpl(hook)
    return types.SimpleNamespace(__name__=name, **hooks)


def _host(tmp_path: Path, *plugins: object) -> Host:
    config = Config(ledger=LedgerConfig(enabled=False, path=str(tmp_path / "ledger.sqlite3")))
    return Host.load(config, plugins=list(plugins))


def _user_texts(model: ScriptedModel, index: int) -> list[str]:
    messages = model.requests[index].messages
    users = [m for m in messages if isinstance(m, UserMessage)]
    return (
        [users[-1].content]
        if isinstance(users[-1].content, str)
        else [p.text for p in users[-1].content if isinstance(p, TextPart)]
    )


async def test_context_goes_before_the_question_in_every_round(tmp_path: Path) -> None:
    seen: list[ContextRequest] = []

    def contribute(request: ContextRequest) -> RequestContext:
        seen.append(request)
        return RequestContext(
            text=f"Passage about {request.query}",
            sources=[Source("file:///notes/tides.md", "Tides")],
            required_trust="medium",
        )

    host = _host(tmp_path, _plugin("notes", toolwire_request_context=contribute))
    host.add_tool(echo)
    model = ScriptedModel(script=[tool_call("echo", {"text": "hi"}), "done"])
    run = await ToolCallingLoop(host, adapter=model).run("tides?")
    assert run.stop_reason == "answered"
    for index in (0, 1):
        assert _user_texts(model, index) == ["Passage about tides?\n\n", "tides?"]
    assert [r.offered for r in seen] == [("echo",), ("echo",)]
    assert seen[0].query == "tides?"
    assert seen[0].services["host"] is host
    # The conversation kept the question as asked; the context went into the requests only.
    assert [m.content for m in run.messages if isinstance(m, UserMessage)] == ["tides?"]
    assert run.sources == (Source("file:///notes/tides.md", "Tides"),)
    assert run.required_trust == TrustLevel.MEDIUM


async def test_a_raising_or_wrong_answer_costs_only_its_plugin(tmp_path: Path) -> None:
    def boom(request: ContextRequest) -> RequestContext:
        raise RuntimeError("index is locked")

    async def good(request: ContextRequest) -> RequestContext:
        return RequestContext(text="from good")

    host = _host(
        tmp_path,
        _plugin("boom", toolwire_request_context=boom),
        _plugin("odd", toolwire_request_context=lambda request: "just text"),
        _plugin("good", toolwire_request_context=good),
        _plugin("none", toolwire_request_context=lambda request: None),
        _plugin(
            "secret",
            toolwire_request_context=lambda request: RequestContext(
                text="payroll", required_trust="self_hosted"
            ),
        ),
    )
    model = ScriptedModel(script=["answer"])
    run = await ToolCallingLoop(host, adapter=model).run("question")
    assert run.stop_reason == "answered"
    assert _user_texts(model, 0) == ["from good\n\n", "question"]
    failures = {e.plugin: e.error for e in run.events if e.kind == "plugin_failed"}
    assert failures == {
        "boom": "RuntimeError: index is locked",
        "odd": "TypeError: returned a str; expected a toolwire.context.RequestContext or None",
        "secret": "PermissionError: its context requires a provider trusted at least "
        "'self_hosted' and the provider is 'medium'; it was left out",
    }
    assert run.required_trust is None
    assert run.sources == ()


async def test_without_implementations_the_request_is_unchanged(tmp_path: Path) -> None:
    model = ScriptedModel(script=["answer"])
    await ToolCallingLoop(_host(tmp_path), adapter=model).run("question")
    assert _user_texts(model, 0) == ["question"]


def test_request_context_checks_its_fields() -> None:
    with pytest.raises(TypeError, match=r"sources\[0\] is a str"):
        RequestContext(text="x", sources=["file:///a"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="unknown trust level 'total'"):
        RequestContext(text="x", required_trust="total")
    assert RequestContext(text="x", required_trust="low").required_trust == TrustLevel.LOW


def test_the_query_is_the_latest_user_message() -> None:
    from toolwire.messages import AssistantMessage

    request = ContextRequest(
        run_id="r",
        round=1,
        messages=(UserMessage("first"), AssistantMessage(parts=[TextPart("ok")]), UserMessage(" ")),
    )
    assert request.query is None
    assert ContextRequest(run_id="r", round=1, messages=(UserMessage("tides?"),)).query == "tides?"
    assert ContextRequest(run_id="r", round=1, messages=()).query is None
