"""The loop's semantics of offers, calls and results, through whole scripted runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import attrs
import pytest
from loop_support import assert_no_orphans, events_of, make_host, plugin, scripted_loop

import toolwire
from toolwire.messages import SystemMessage
from toolwire.testing import tool_call


@toolwire.tool(instructions="Use shout for emphasis.")
def shout(text: Annotated[str, "Text."]) -> str:
    """Upper-case text."""
    return text.upper()


@toolwire.tool(instructions="Use echo to repeat.", strict=False)
def echo(text: Annotated[str, "Text."]) -> str:
    """Repeat text."""
    return text


# -- the offer ---------------------------------------------------------------------------------


async def test_tool_whose_instructions_raise_is_left_out_of_that_request(tmp_path: Path) -> None:
    def instructions(tool: toolwire.Tool, request: Any) -> str | None:
        if tool.name == "echo":
            raise RuntimeError("no instructions today")
        return None

    host = make_host(
        tmp_path,
        [shout, echo],
        plugins=[plugin("instr", toolwire_system_prompt_instructions=instructions)],
    )
    loop, model = scripted_loop(host, [[tool_call("echo", {"text": "hi"})], "ok"])
    run = await loop.run("go")
    first = model.requests[0]
    assert [f.name for f in first.functions] == ["shout"]
    assert first.messages[0] == SystemMessage("Use shout for emphasis.")
    [omitted] = [e for e in events_of(run, "tool_omitted") if e.round == 1]
    assert omitted.tool == "echo"
    assert "RuntimeError: no instructions today" in omitted.reason
    [started] = events_of(run, "round_started")[:1]
    assert started.offered == ("shout",)
    # The model's call of the left-out tool is answered as unknown, never run.
    [unknown] = events_of(run, "unknown_tool")
    assert unknown.name == "echo"
    assert not events_of(run, "tool_started")
    assert_no_orphans(run)


async def test_resolver_cannot_rename_a_function_or_change_its_strict_mode(
    tmp_path: Path,
) -> None:
    def resolve(tool: toolwire.Tool, request: Any) -> Any:
        spec = tool.function_spec()
        if tool.name == "echo":
            return attrs.evolve(spec, name="say_it", strict=True, description="Say it back.")
        return spec

    host = make_host(
        tmp_path, [shout, echo], plugins=[plugin("res", toolwire_resolve_function=resolve)]
    )
    loop, model = scripted_loop(host, [[tool_call("echo", {"text": "hi"})], "ok"])
    run = await loop.run("go")
    functions = {f.name: f for f in model.requests[0].functions}
    assert sorted(functions) == ["echo", "shout"]
    assert functions["echo"].strict is False
    assert functions["echo"].description == "Say it back."
    [corrected] = [e for e in events_of(run, "tool_resolution_corrected") if e.round == 1]
    assert corrected.tool == "echo"
    assert corrected.changes == ("name 'say_it' kept as 'echo'", "strict True kept as False")
    [completed] = events_of(run, "tool_completed")
    assert completed.result.content == "hi"
    assert run.stop_reason == "answered"


async def test_resolution_that_keeps_name_and_strict_mode_is_not_reported(
    tmp_path: Path,
) -> None:
    def resolve(tool: toolwire.Tool, request: Any) -> Any:
        return attrs.evolve(tool.function_spec(), strict=None, description="Other words.")

    host = make_host(tmp_path, [echo], plugins=[plugin("res", toolwire_resolve_function=resolve)])
    loop, model = scripted_loop(host, ["ok"])
    run = await loop.run("go")
    [function] = model.requests[0].functions
    assert (function.name, function.strict, function.description) == ("echo", False, "Other words.")
    assert not events_of(run, "tool_resolution_corrected")


# -- decisions from inside a call --------------------------------------------------------------


effects: list[str] = []


@toolwire.tool(sensitive_arguments={"token"}, max_retries=3)
def send_mail(
    to: Annotated[str, "Recipient."], token: Annotated[str, "Secret."] = "t", count: int = 1
) -> str:
    """Send mail."""
    effects.append(f"mail {to} x{count}")
    return f"sent to {to}"


@toolwire.tool
def transfer(amount: Annotated[int, "Cents."], context: toolwire.ToolContext) -> str:
    """Move money; a person approves sums over 100."""
    if amount > 100 and not context.approved:
        raise toolwire.ApprovalRequired(f"a transfer of {amount} cents")
    effects.append(f"transfer {amount}")
    return f"moved {amount}"


@toolwire.tool
def later(note: Annotated[str, "Note."]) -> str:
    """Always left for later."""
    raise toolwire.CallDeferred("the night batch handles notes")


@toolwire.tool(max_retries=3)
def flaky(q: Annotated[str, "Query."]) -> str:
    """Ask for a better query."""
    effects.append(f"flaky {q}")
    raise toolwire.Retry("Use a query of at least three words.")


@toolwire.tool
def explode(why: Annotated[str, "Why."]) -> str:
    """Fail for good."""
    effects.append("explode")
    raise toolwire.ToolFatal(f"the disk is gone ({why})")


@toolwire.middleware
async def only_alice(call: Any, context: Any, call_next: Any) -> Any:
    if call.name == "send_mail" and call.arguments["to"] != "alice@example.com":
        raise toolwire.AdjustArguments(
            {**call.arguments, "to": "alice@example.com"}, "mail goes to alice only"
        )
    return await call_next()


@toolwire.middleware
async def bad_adjust(call: Any, context: Any, call_next: Any) -> Any:
    if call.name == "send_mail":
        raise toolwire.AdjustArguments({"to": 5}, "a broken rule")
    return await call_next()


@toolwire.middleware
async def hold_mail(call: Any, context: Any, call_next: Any) -> Any:
    if call.name == "send_mail" and not context.approved:
        raise toolwire.CallDeferred("mail waits for the morning")
    return await call_next()


def _reset() -> None:
    effects.clear()


async def test_a_middleware_adjusts_the_arguments_and_the_tool_runs_with_them(
    tmp_path: Path,
) -> None:
    _reset()
    host = make_host(
        tmp_path, [send_mail], plugins=[plugin("mw", toolwire_execute_tool=only_alice)]
    )
    call = tool_call("send_mail", {"to": "bob@example.com", "token": "s3cret"})
    loop, _ = scripted_loop(host, [[call], "ok"])
    run = await loop.run("go")
    assert effects == ["mail alice@example.com x1"]
    [adjusted] = events_of(run, "arguments_adjusted")
    assert adjusted.before == {"to": "bob@example.com", "token": "[redacted]"}
    assert adjusted.after == {"to": "alice@example.com", "token": "[redacted]"}
    assert adjusted.reason == "mail goes to alice only"
    [record] = run.tool_calls
    assert record.arguments == {"to": "alice@example.com", "token": "s3cret"}
    assert record.call.arguments == {"to": "bob@example.com", "token": "s3cret"}
    assert "s3cret" not in repr(run.events)
    assert_no_orphans(run)


async def test_adjusted_arguments_are_validated_again(tmp_path: Path) -> None:
    _reset()
    host = make_host(
        tmp_path, [send_mail], plugins=[plugin("mw", toolwire_execute_tool=bad_adjust)]
    )
    loop, _ = scripted_loop(host, [[tool_call("send_mail", {"to": "bob@example.com"})], "ok"])
    run = await loop.run("go")
    assert effects == []
    [record] = run.tool_calls
    assert record.outcome == "invalid_arguments"
    assert record.result is not None
    assert "adjusted (a broken rule) were refused" in (record.result.content or "")
    assert "to" in (record.result.content or "")
    assert not events_of(run, "arguments_adjusted")
    assert_no_orphans(run)


async def test_a_tool_asking_for_approval_defers_and_resumes_from_the_ledger(
    tmp_path: Path,
) -> None:
    _reset()
    host = make_host(tmp_path, [transfer])
    loop, _ = scripted_loop(host, [[tool_call("transfer", {"amount": 500}, id="t1")], "Moved."])
    run = await loop.run("go")
    assert run.stop_reason == "deferred"
    [request] = run.deferred
    assert (request.reason, request.started) == ("approval", True)
    assert "a transfer of 500 cents" in request.detail
    assert effects == []
    # A fresh loop over the same ledger: the started row does not make it "interrupted".
    fresh_host = make_host(tmp_path, [transfer])
    fresh, _ = scripted_loop(
        fresh_host, [[tool_call("transfer", {"amount": 500}, id="t1")], "Moved."]
    )
    loaded = fresh.load(run.id)
    assert loaded.stop_reason == "deferred"
    assert [d.reason for d in loaded.deferred] == ["approval"]
    done = await fresh.resume(run.id, {"t1": toolwire.Approve()})
    assert done.stop_reason == "answered", done.detail
    assert effects == ["transfer 500"]
    [approved] = events_of(done, "tool_approved")
    assert (approved.call_id, approved.arguments, approved.edited) == ("t1", {"amount": 500}, False)
    assert_no_orphans(done, allow_deferred=False)


async def test_a_tool_asking_for_approval_asks_the_runs_approver(tmp_path: Path) -> None:
    _reset()
    asked: list[Any] = []

    def approver(request: Any) -> Any:
        asked.append(request)
        return toolwire.Approve(arguments={"amount": 150})

    host = make_host(tmp_path, [transfer])
    loop, _ = scripted_loop(host, [[tool_call("transfer", {"amount": 500})], "Moved."])
    run = await loop.run("go", approval=approver)
    assert run.stop_reason == "answered"
    assert effects == ["transfer 150"]
    assert [r.reason for r in asked] == ["approval"]
    [adjusted] = events_of(run, "arguments_adjusted")
    assert (adjusted.before, adjusted.after) == ({"amount": 500}, {"amount": 150})
    [approved] = events_of(run, "tool_approved")
    assert approved.edited is True
    assert run.tool_calls[0].arguments == {"amount": 150}


async def test_a_tool_asking_for_approval_is_denied_by_the_approver(tmp_path: Path) -> None:
    _reset()
    host = make_host(tmp_path, [transfer])
    loop, _ = scripted_loop(host, [[tool_call("transfer", {"amount": 500})], "No."])
    run = await loop.run("go", approval=lambda request: toolwire.Deny("Too much."))
    assert effects == []
    [record] = run.tool_calls
    assert (record.outcome, record.result.content if record.result else None) == (
        "denied",
        "Too much.",
    )
    assert [e.kind for e in run.events if e.kind.startswith("tool_")][-2:] == [
        "tool_started",
        "tool_denied",
    ]


async def test_a_middleware_defers_a_call_and_resume_runs_it(tmp_path: Path) -> None:
    _reset()
    host = make_host(tmp_path, [send_mail], plugins=[plugin("mw", toolwire_execute_tool=hold_mail)])
    loop, _ = scripted_loop(
        host, [[tool_call("send_mail", {"to": "a@example.com"}, id="m1")], "Sent."]
    )
    run = await loop.run("go", approval=lambda request: toolwire.Deny("never asked"))
    assert run.stop_reason == "deferred"  # CallDeferred does not ask the approver
    [request] = run.deferred
    assert request.reason == "deferred"
    assert "mail waits for the morning" in request.detail
    [deferred] = events_of(run, "tool_deferred")
    assert deferred.call_id == "m1"
    done = await loop.resume(run, {"m1": toolwire.Approve()})
    assert done.stop_reason == "answered"
    assert effects == ["mail a@example.com x1"]


async def test_a_tool_deferring_itself_can_be_supplied(tmp_path: Path) -> None:
    host = make_host(tmp_path, [later])
    loop, _ = scripted_loop(host, [[tool_call("later", {"note": "n"}, id="l1")], "Noted."])
    run = await loop.run("go")
    assert [d.reason for d in run.deferred] == ["deferred"]
    done = await loop.resume(run, {"l1": toolwire.Supply(toolwire.ToolResult.ok("queued"))})
    assert done.stop_reason == "answered"
    resumed = done.events[[e.kind for e in done.events].index("run_started", 1) :]
    kinds = [e.kind for e in resumed if e.kind in ("tool_started", "tool_completed")]
    assert kinds == ["tool_started", "tool_completed"]
    [started] = [e for e in resumed if e.kind == "tool_started"]
    assert started.answer == "supplied"
    assert_no_orphans(done, allow_deferred=False)


async def test_retry_tells_the_model_to_try_again_without_repeating_the_call(
    tmp_path: Path,
) -> None:
    _reset()
    host = make_host(tmp_path, [flaky])
    loop, model = scripted_loop(host, [[tool_call("flaky", {"q": "x"})], "ok"])
    run = await loop.run("go")
    assert effects == ["flaky x"]  # max_retries=3, yet the host did not repeat it
    [record] = run.tool_calls
    assert record.result is not None
    assert record.result.content == "Use a query of at least three words."
    assert record.result.retryable is True
    assert record.attempts == 1
    assert "Use a query of at least three words." in repr(model.requests[1].messages[-1])


async def test_a_fatal_tool_ends_the_run_and_every_call_is_answered(tmp_path: Path) -> None:
    _reset()
    host = make_host(tmp_path, [explode, send_mail])
    calls = [
        tool_call("send_mail", {"to": "first@example.com"}, id="c1"),
        tool_call("explode", {"why": "disk"}, id="c2"),
        tool_call("send_mail", {"to": "third@example.com"}, id="c3"),
    ]
    loop, model = scripted_loop(host, [calls, "never asked"])
    run = await loop.run("go")
    assert run.stop_reason == "tool_fatal"
    assert run.detail is not None
    assert "explode (call c2) failed: the disk is gone (disk)" in run.detail
    assert effects == ["mail first@example.com x1", "explode"]
    assert len(model.requests) == 1
    outcomes = {r.call.id: r.outcome for r in run.tool_calls}
    assert outcomes == {"c1": "executed", "c2": "executed", "c3": "not_run"}
    assert_no_orphans(run, allow_deferred=False)


# -- events of decided calls -------------------------------------------------------------------


@toolwire.tool(requires_approval=True, sensitive_arguments={"pin"})
def unlock(door: Annotated[str, "Door."], pin: Annotated[str, "PIN."]) -> str:
    """Unlock a door."""
    effects.append(f"unlock {door}")
    return f"{door} open"


async def test_policy_approvals_denials_and_supplied_results_are_announced(
    tmp_path: Path,
) -> None:
    _reset()
    host = make_host(tmp_path, [unlock])
    calls = [
        tool_call("unlock", {"door": "front", "pin": "1234"}, id="u1"),
        tool_call("unlock", {"door": "back", "pin": "1234"}, id="u2"),
        tool_call("unlock", {"door": "side", "pin": "1234"}, id="u3"),
    ]
    decisions = {
        "u1": toolwire.Approve(),
        "u2": toolwire.Deny("Not the back door."),
        "u3": toolwire.Supply(toolwire.ToolResult.ok("side was open already")),
    }
    loop, _ = scripted_loop(host, [calls, "Done."])
    run = await loop.run("go", approval=lambda request: decisions[request.call_id])
    assert run.stop_reason == "answered"
    assert effects == ["unlock front"]
    [approved] = events_of(run, "tool_approved")
    assert (approved.call_id, approved.arguments) == ("u1", {"door": "front", "pin": "[redacted]"})
    by_call: dict[str, list[str]] = {}
    for event in run.events:
        call_id = getattr(event, "call_id", None)
        if call_id and event.kind in (
            "tool_started",
            "tool_completed",
            "tool_denied",
            "tool_approved",
        ):
            by_call.setdefault(call_id, []).append(event.kind)
    assert by_call == {
        "u1": ["tool_approved", "tool_started", "tool_completed"],
        "u2": ["tool_started", "tool_denied"],
        "u3": ["tool_started", "tool_completed"],
    }
    answers = {e.call_id: e.answer for e in events_of(run, "tool_started")}
    assert answers == {"u1": "run", "u2": "denied", "u3": "supplied"}
    assert "1234" not in repr(run.events)


# -- the invocation context --------------------------------------------------------------------


seen_contexts: list[toolwire.ToolContext] = []


@toolwire.tool
def whoami(context: toolwire.ToolContext, n: int = 0) -> str:
    """Report the invocation."""
    seen_contexts.append(context)
    context.report_progress("looking", 0.5)
    return "me"


async def test_a_tool_context_describes_the_invocation(tmp_path: Path) -> None:
    seen_contexts.clear()
    host = make_host(tmp_path, [whoami])
    first = tool_call("whoami", raw_arguments='{ "n" : 1 }', id="w1")
    loop, _ = scripted_loop(host, [[first], "ok", [tool_call("whoami", {"n": 2}, id="w2")], "ok"])
    run = await loop.run("Who?", context={"tenant": "acme", "user": 7})
    assert run.stop_reason == "answered"
    [context] = seen_contexts
    assert (context.call_id, context.tool_name) == ("w1", "whoami")
    assert context.raw_arguments == '{ "n" : 1 }'
    assert context.values == {"tenant": "acme", "user": 7}
    assert context.approved is False
    assert context.conversation_id is not None
    assert len(context.conversation_id) == 64
    assert events_of(run, "tool_progress")[0].message == "looking"
    # The same conversation continued in a new run keeps its id.
    from toolwire.messages import UserMessage

    again = await loop.run([*run.messages, UserMessage("And now?")])
    assert again.stop_reason == "answered"
    assert seen_contexts[1].conversation_id == context.conversation_id
    assert seen_contexts[1].raw_arguments == '{"n":2}'
    assert seen_contexts[1].values == {}


async def test_the_message_id_is_the_providers_id_of_the_answer(tmp_path: Path) -> None:
    seen_contexts.clear()
    host = make_host(tmp_path, [whoami])

    def script(request: Any) -> Any:
        from toolwire.messages import AssistantMessage, ToolResultMessage

        if isinstance(request.messages[-1], ToolResultMessage):
            return AssistantMessage(parts=(), response_id="resp_2")
        return AssistantMessage(parts=(tool_call("whoami", {}, id="w1"),), response_id="resp_1")

    loop, _ = scripted_loop(host, script)
    await loop.run("go")
    assert seen_contexts[0].message_id == "resp_1"


def test_a_context_outside_a_run_still_has_progress() -> None:
    context = toolwire.ToolContext(tool=whoami, call_id="c", run_id="r", round=0)
    context.report_progress("nobody listens")
    assert callable(context.progress)
    assert context.tool_name == "whoami"


async def test_a_bad_context_is_refused_naming_it(tmp_path: Path) -> None:
    host = make_host(tmp_path, [whoami])
    loop, _ = scripted_loop(host, ["ok"])
    with pytest.raises(TypeError, match="context must be a mapping of names"):
        await loop.run("go", context=["tenant"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="context keys must be strings"):
        await loop.run("go", context={1: "x"})  # type: ignore[dict-item]


# -- no local execution ------------------------------------------------------------------------


async def test_without_local_execution_every_call_is_deferred_with_its_arguments(
    tmp_path: Path,
) -> None:
    from toolwire.config import LoopConfig, load_config
    from toolwire.messages import AssistantMessage, TextPart, ToolCall

    _reset()
    toml = tmp_path / "toolwire.toml"
    toml.write_text("[loop]\nexecute_tools = false\n")
    assert load_config(toml).loop.execute_tools is False
    host = make_host(tmp_path, [send_mail, unlock], loop=LoopConfig(execute_tools=False))
    searched = ToolCall(
        id="ws1", name="web_search", arguments={"query": "news"}, provider_executed=True
    )
    answer = AssistantMessage(
        parts=(
            searched,
            TextPart("Found it; sending."),
            tool_call("send_mail", {"to": "a@example.com", "token": "s3cret"}, id="m1"),
            tool_call("unlock", {"door": "front", "pin": "1"}, id="u1"),
        )
    )
    loop, _ = scripted_loop(host, [answer, "Done."])
    run = await loop.run("go", approval=lambda request: toolwire.Approve())
    assert run.stop_reason == "deferred"
    assert effects == []
    assert [(d.call_id, d.reason, dict(d.arguments)) for d in run.deferred] == [
        ("m1", "external", {"to": "a@example.com", "token": "s3cret"}),
        ("u1", "external", {"door": "front", "pin": "1"}),
    ]
    assert "[loop] execute_tools = false" in run.deferred[0].detail
    # The provider's own call is kept as it came, never run or deferred here.
    assert any(isinstance(m, AssistantMessage) and searched in m.tool_calls for m in run.messages)
    with pytest.raises(ValueError, match="external"):
        await loop.resume(run, {"m1": toolwire.Approve()})
    done = await loop.resume(
        run,
        {
            "m1": toolwire.Supply(toolwire.ToolResult.ok("sent elsewhere")),
            "u1": toolwire.Supply(toolwire.ToolResult.ok("opened elsewhere")),
        },
    )
    assert done.stop_reason == "answered"
    assert effects == []
    assert_no_orphans(done, allow_deferred=False)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_the_invocation_context_over_chat_completions(tmp_path: Path, stream: bool) -> None:
    import types

    from toolwire import Config, Host
    from toolwire.config import LedgerConfig, PluginsConfig, ProviderConfig
    from toolwire.testing import FakeOpenAIChatServer

    seen_contexts.clear()
    tools = types.SimpleNamespace(
        __name__="ctx_tools", toolwire_tools=toolwire.hookimpl(lambda settings: [whoami])
    )
    raw = '{"n":  3}'
    script = [tool_call("whoami", raw_arguments=raw, id="call_w"), "Done."]
    async with FakeOpenAIChatServer(script) as server:
        config = Config(
            plugins=PluginsConfig(enable=("openai",)),
            provider=ProviderConfig(
                adapter="openai-chat", base_url=server.base_url, model="m", stream=stream
            ),
            ledger=LedgerConfig(enabled=False, path=str(tmp_path / "ledger.sqlite3")),
        )
        host = Host.load(config=config, plugins=[tools])
        try:
            run = await host.run("Who am I?", context={"tenant": "acme"})
        finally:
            await host.aclose()
    assert run.stop_reason == "answered", run.detail
    [context] = seen_contexts
    assert context.call_id == "call_w"
    assert context.raw_arguments == raw
    assert context.message_id == "chatcmpl-fake1"
    assert context.values == {"tenant": "acme"}
    from toolwire._request import conversation_key
    from toolwire.messages import UserMessage

    assert context.conversation_id == conversation_key([UserMessage("Who am I?")])


# -- follow-up content -------------------------------------------------------------------------


@toolwire.tool
def snapshot(page: Annotated[str, "Page."]) -> toolwire.ToolResult:
    """Take a picture of a page."""
    from toolwire.messages import OpaquePart

    image = OpaquePart(
        api="openai-chat",
        data={"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    )
    return toolwire.ToolResult.ok(f"took {page}", follow_up=(f"The picture of {page}:", image))


async def test_follow_up_content_becomes_a_user_message_after_the_results(tmp_path: Path) -> None:
    from toolwire.loop import Run
    from toolwire.messages import OpaquePart, TextPart, ToolResultMessage, UserMessage

    host = make_host(tmp_path, [snapshot, shout])
    calls = [
        tool_call("snapshot", {"page": "home"}, id="s1"),
        tool_call("shout", {"text": "hi"}, id="s2"),
        tool_call("snapshot", {"page": "about"}, id="s3"),
    ]
    loop, model = scripted_loop(host, [calls, "Seen."])
    run = await loop.run("go")
    assert run.stop_reason == "answered"
    second = model.requests[1].messages
    kinds = [type(m).__name__ for m in second[-4:]]
    assert kinds == ["ToolResultMessage"] * 3 + ["UserMessage"]
    assert all(isinstance(m, ToolResultMessage) for m in second[-4:-1])
    follow = second[-1]
    assert isinstance(follow, UserMessage)
    assert isinstance(follow.content, tuple)
    assert [p.text if isinstance(p, TextPart) else p.api for p in follow.content] == [
        "The picture of home:",
        "openai-chat",
        "The picture of about:",
        "openai-chat",
    ]
    assert isinstance(follow.content[1], OpaquePart)
    # The run's JSON keeps it (a conversation continued from it sends it again).
    assert Run.from_json(run.to_json()).messages == run.messages


async def test_follow_up_content_waits_for_the_deferred_calls_of_its_turn(tmp_path: Path) -> None:
    from toolwire.messages import UserMessage

    host = make_host(tmp_path, [snapshot, unlock])
    calls = [
        tool_call("snapshot", {"page": "home"}, id="s1"),
        tool_call("unlock", {"door": "front", "pin": "1"}, id="u1"),
    ]
    loop, model = scripted_loop(host, [calls, "Seen."])
    run = await loop.run("go")
    assert run.stop_reason == "deferred"
    assert not isinstance(run.messages[-1], UserMessage)
    stored = loop.load(run.id)  # the follow-up survives in the stored result
    done = await loop.resume(stored, {"u1": toolwire.Deny("No.")})
    assert done.stop_reason == "answered"
    follow = model.requests[-1].messages[-1]
    assert isinstance(follow, UserMessage)
    assert follow.text == "The picture of home:"


def test_follow_up_items_are_checked() -> None:
    with pytest.raises(TypeError, match=r"follow_up=\.\.\.\) takes text, TextPart or OpaquePart"):
        toolwire.ToolResult.ok("x", follow_up=[{"type": "image"}])
    assert toolwire.ToolResult.ok("x", follow_up="more").follow_up == ("more",)


async def test_a_direct_call_is_the_approval_and_a_deferral_is_answered(tmp_path: Path) -> None:
    _reset()
    host = make_host(tmp_path, [transfer, later])
    loop = toolwire.ToolCallingLoop(host)
    result = await loop.call("transfer", {"amount": 500})
    assert (result.status, result.content) == ("ok", "moved 500")
    assert effects == ["transfer 500"]
    deferred = await loop.call("later", {"note": "n"})
    assert deferred.status == "error"
    assert deferred.content == "Not run: later was deferred: the night batch handles notes."
