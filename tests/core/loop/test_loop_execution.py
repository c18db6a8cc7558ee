"""Execution: concurrency bound, barriers, timeouts, retries, sizes, cancellation, middleware,
policy and trust."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import attrs
import pytest
from loop_support import (
    assert_no_orphans,
    events_of,
    evolve_loop,
    make_host,
    plugin,
    result_texts,
    run_script,
    scripted_loop,
)

import toolwire
from toolwire import ToolBlocked, ToolResult
from toolwire.adapters import ModelRequest
from toolwire.config import PolicyConfig, ProviderConfig
from toolwire.loop import ToolCallingLoop
from toolwire.testing import tool_call
from toolwire.tools import ToolContext


class Peak:
    """Counts calls running at once and keeps the highest count seen."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0
        self.log: list[str] = []

    async def visit(self, label: str, seconds: float = 0.02) -> str:
        self.now += 1
        self.peak = max(self.peak, self.now)
        self.log.append(f"start {label}")
        try:
            await asyncio.sleep(seconds)
        finally:
            self.now -= 1
            self.log.append(f"end {label}")
        return label


def _work_tools(peak: Peak) -> list[toolwire.Tool]:
    @toolwire.tool(allow_duplicates=True)
    async def work(label: str) -> str:
        """Work a little."""
        return await peak.visit(label)

    @toolwire.tool(sequential=True, allow_duplicates=True)
    async def barrier(label: str) -> str:
        """Must run alone."""
        return await peak.visit(label)

    return [work, barrier]


@pytest.mark.parametrize(("concurrency", "expected_peak"), [(1, 1), (3, 3), (20, 8)])
async def test_concurrency_bound_is_respected(
    tmp_path: Path, concurrency: int, expected_peak: int
) -> None:
    peak = Peak()
    host = make_host(tmp_path, _work_tools(peak), loop=evolve_loop(concurrency=concurrency))
    labels = [f"w{i}" for i in range(8)]
    loop, model = scripted_loop(host, [[tool_call("work", {"label": x}) for x in labels], "done"])
    run = await loop.run("go")
    assert peak.peak == expected_peak
    assert result_texts(run) == labels  # results keep call order
    assert_no_orphans(run, allow_deferred=False)
    assert model.requests[0].parallel_tool_calls is (False if concurrency == 1 else None)


async def test_sequential_tool_is_a_barrier(tmp_path: Path) -> None:
    peak = Peak()
    host = make_host(tmp_path, _work_tools(peak), loop=evolve_loop(concurrency=4))
    turn = [
        tool_call("work", {"label": "a"}),
        tool_call("work", {"label": "b"}),
        tool_call("barrier", {"label": "B"}),
        tool_call("work", {"label": "c"}),
        tool_call("work", {"label": "d"}),
    ]
    run = await run_script(host, [turn, "done"])
    log = peak.log
    assert log.index("start B") > max(log.index("end a"), log.index("end b"))
    assert log.index("end B") < min(log.index("start c"), log.index("start d"))
    assert peak.peak == 2
    assert result_texts(run) == ["a", "b", "B", "c", "d"]


async def test_timeout_gives_an_error_result(tmp_path: Path) -> None:
    cancelled = asyncio.Event()

    @toolwire.tool(timeout=0.05)
    async def hang() -> str:
        """Never ends."""
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "no"

    run = await run_script(make_host(tmp_path, [hang]), [tool_call("hang"), "gave up"])
    assert result_texts(run) == ["Tool hang timed out after 0.05 s."]
    assert cancelled.is_set()
    assert events_of(run, "tool_failed")[0].result.content == "Tool hang timed out after 0.05 s."
    assert run.stop_reason == "answered"


async def test_retryable_errors_are_retried_before_the_model_sees_them(tmp_path: Path) -> None:
    tries: list[int] = []

    @toolwire.tool(max_retries=2)
    def shaky() -> ToolResult:
        """Fails twice, then works."""
        tries.append(1)
        if len(tries) < 3:
            return ToolResult.error("busy", retryable=True)
        return ToolResult.ok("fine")

    @toolwire.tool(max_retries=1)
    def broken() -> ToolResult:
        """Always fails."""
        tries.append(2)
        return ToolResult.error("down", retryable=True)

    host = make_host(tmp_path, [shaky, broken])
    loop, _ = scripted_loop(host, [[tool_call("shaky"), tool_call("broken")], "done"])
    loop.retry_backoff = 0.001
    run = await loop.run("go")
    assert result_texts(run) == ["fine", "down"]
    assert [r.attempts for r in run.tool_calls] == [3, 2]
    assert tries == [1, 1, 1, 2, 2]


async def test_results_are_truncated_to_the_smaller_limit(tmp_path: Path) -> None:
    @toolwire.tool(max_result_bytes=300)
    def big() -> str:
        """A lot of text."""
        return "x" * 5000

    @toolwire.tool
    def medium() -> str:
        """Some text."""
        return "y" * 500

    host = make_host(tmp_path, [big, medium], policy=PolicyConfig(max_result_bytes=200))
    run = await run_script(host, [[tool_call("big"), tool_call("medium")], "done"])
    for text in result_texts(run):
        assert len(text.encode()) <= 200
    assert run.tool_calls[0].result is not None
    assert run.tool_calls[0].result.metadata["truncated"] is True


async def test_cancelling_the_run_mid_turn_leaves_no_orphan(tmp_path: Path) -> None:
    peak = Peak()
    entered = asyncio.Event()
    contexts: list[ToolContext] = []

    @toolwire.tool(allow_duplicates=True)
    async def long(label: str, context: ToolContext) -> str:
        """Runs until cancelled."""
        entered.set()
        contexts.append(context)
        await asyncio.sleep(10)
        return label

    tools = [long, *_work_tools(peak)]
    for concurrency in (1, 2):
        entered.clear()
        host = make_host(tmp_path, tools, loop=evolve_loop(concurrency=concurrency))
        loop, _ = scripted_loop(
            host,
            [
                [
                    tool_call("work", {"label": "a"}),
                    tool_call("long", {"label": "b"}),
                    tool_call("work", {"label": "c"}),
                    tool_call("work", {"label": "d"}),
                ]
            ],
        )
        task = asyncio.ensure_future(loop.run("go"))
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        run = loop.last_run
        assert run is not None
        assert run.stop_reason == "cancelled"
        assert_no_orphans(run, allow_deferred=False)
        outcomes = [r.outcome for r in run.tool_calls]
        assert outcomes[1] == "cancelled"
        assert outcomes[2:] == ["cancelled", "cancelled"]  # never started
        if concurrency == 1:
            assert outcomes[0] == "executed"
        assert "cancelled" in result_texts(run)[1].lower()
        assert events_of(run, "run_finished")[0].stop_reason == "cancelled"
    assert [c.is_cancelled for c in contexts] == [True, True]


async def test_cancel_event_returns_a_cancelled_run(tmp_path: Path) -> None:
    cancel = asyncio.Event()

    @toolwire.tool
    async def long() -> str:
        """Runs until the run is cancelled."""
        cancel.set()
        await asyncio.sleep(10)
        return "never"

    loop, _ = scripted_loop(make_host(tmp_path, [long]), [tool_call("long"), "never"])
    run = await loop.run("go", cancel=cancel)
    assert run.stop_reason == "cancelled"
    assert result_texts(run) == ["Cancelled: the run was cancelled while long ran."]
    assert run.tool_calls[0].outcome == "cancelled"
    assert_no_orphans(run, allow_deferred=False)


async def test_sync_tools_run_in_a_worker_thread_and_report_progress(tmp_path: Path) -> None:
    threads: list[int] = []

    @toolwire.tool
    def crunch(context: ToolContext) -> str:
        """Crunch numbers."""
        threads.append(threading.get_ident())
        context.report_progress("halfway", 0.5)
        return "crunched"

    run = await run_script(make_host(tmp_path, [crunch]), [tool_call("crunch"), "done"])
    assert threads
    assert threads[0] != threading.get_ident()
    [progress] = events_of(run, "tool_progress")
    assert (progress.message, progress.fraction, progress.call_id) == ("halfway", 0.5, "call_1_0")


async def test_middleware_wraps_execution_in_order(tmp_path: Path) -> None:
    order: list[str] = []

    @toolwire.tool
    def plain() -> str:
        """Plain."""
        order.append("tool")
        return "result"

    @toolwire.middleware
    async def outer(call: Any, context: Any, call_next: Any) -> ToolResult:
        order.append("outer in")
        result = await call_next()
        order.append("outer out")
        return ToolResult.ok(f"[{result.model_text()}]")

    @toolwire.middleware(tryfirst=True)
    async def first(call: Any, context: Any, call_next: Any) -> ToolResult:
        order.append(f"first {call.name} {context.call_id}")
        result: ToolResult = await call_next()
        return result

    host = make_host(tmp_path, [plain], plugins=[plugin("mw", outer=outer, first=first)])
    run = await run_script(host, [tool_call("plain"), "done"])
    assert order == ["first plain call_1_0", "outer in", "tool", "outer out"]
    assert result_texts(run) == ["[result]"]


async def test_middleware_can_refuse_without_running_the_tool(tmp_path: Path) -> None:
    ran: list[str] = []

    @toolwire.tool
    def guarded(path: str) -> str:
        """Touches a path."""
        ran.append(path)
        return "touched"

    @toolwire.middleware
    async def gate(call: Any, context: Any, call_next: Any) -> ToolResult:
        if call.arguments["path"].startswith("/etc"):
            raise ToolBlocked("paths under /etc are off limits")
        if call.arguments["path"] == "skip":
            return ToolResult.denied("skipped by middleware")
        result: ToolResult = await call_next()
        return result

    @toolwire.middleware
    async def twice(call: Any, context: Any, call_next: Any) -> ToolResult:
        await call_next()
        result: ToolResult = await call_next()
        return result

    host = make_host(tmp_path, [guarded], plugins=[plugin("gate", gate=gate)])
    run = await run_script(
        host,
        [
            [
                tool_call("guarded", {"path": "/etc/passwd"}),
                tool_call("guarded", {"path": "skip"}),
                tool_call("guarded", {"path": "/tmp/x"}),
            ],
            "done",
        ],
    )
    assert ran == ["/tmp/x"]
    assert [r.status for r in run.tool_calls] == ["blocked", "denied", "ok"]
    assert events_of(run, "tool_blocked")[0].result.content == "paths under /etc are off limits"
    host = make_host(tmp_path, [guarded], plugins=[plugin("twice", twice=twice)])
    run = await run_script(host, [tool_call("guarded", {"path": "a"}), "done"])
    assert "called call_next() twice" in result_texts(run)[0]


def test_middleware_refuses_a_sync_function() -> None:
    def not_async(call: Any, context: Any, call_next: Any) -> None:
        return None

    with pytest.raises(TypeError, match="async def"):
        toolwire.middleware(not_async)  # type: ignore[arg-type]


def _effect_tools() -> list[toolwire.Tool]:
    @toolwire.tool(side_effects=["destructive"])
    def wipe() -> str:
        """Wipe it."""
        return "wiped"

    @toolwire.tool(side_effects=["external_spend", "network"])
    def buy() -> str:
        """Buy it."""
        return "bought"

    @toolwire.tool
    def unclassified() -> str:
        """Who knows."""
        return "did something"

    @toolwire.tool(side_effects=["read_only"])
    def look() -> str:
        """Look."""
        return "looked"

    return [wipe, buy, unclassified, look]


async def test_policy_denies_side_effects_and_unclassified_tools(tmp_path: Path) -> None:
    host = make_host(
        tmp_path, _effect_tools(), policy=PolicyConfig(deny=("destructive",), strict=True)
    )
    turn = [tool_call(name) for name in ("wipe", "buy", "unclassified", "look")]
    run = await run_script(host, [turn, "done"])
    assert [r.status for r in run.tool_calls] == ["blocked", "ok", "blocked", "ok"]
    texts = result_texts(run)
    assert "side effect(s) 'destructive', which [policy] deny refuses" in texts[0]
    assert "strict = true refuses unclassified tools" in texts[2]


async def test_strict_refusal_names_where_the_side_effects_are_declared(tmp_path: Path) -> None:
    (unclassified,) = [t for t in _effect_tools() if t.name == "unclassified"]
    declared_in_config = attrs.evolve(
        unclassified, name="imported", policy_config_key="[tools.other.policy.imported]"
    )
    host = make_host(tmp_path, [unclassified, declared_in_config], policy=PolicyConfig(strict=True))
    run = await run_script(host, [[tool_call("unclassified"), tool_call("imported")], "done"])
    assert [r.status for r in run.tool_calls] == ["blocked", "blocked"]
    own, imported = result_texts(run)
    assert "Declare them" not in own
    assert imported.endswith(
        "Declare them in [tools.other.policy.imported]: side_effects = [...] (for example "
        '["read_only"]).'
    )


async def test_policy_requires_approval_for_listed_side_effects(tmp_path: Path) -> None:
    host = make_host(tmp_path, _effect_tools(), policy=PolicyConfig(require_approval=("network",)))
    run = await run_script(host, [[tool_call("buy"), tool_call("look")], "done"])
    assert run.stop_reason == "deferred"
    [deferred] = run.deferred
    assert (deferred.tool, deferred.reason) == ("buy", "approval")
    assert "'network'" in deferred.detail
    assert [r.outcome for r in run.tool_calls] == ["deferred", "executed"]
    assert_no_orphans(run)


async def test_trust_requirement_tightens_and_refuses_a_weaker_provider(tmp_path: Path) -> None:
    from toolwire import TrustLevel

    @toolwire.tool
    def medical() -> ToolResult:
        """Reads a medical record."""
        return ToolResult.ok("record", required_trust=TrustLevel.HIGH)

    @toolwire.tool
    def public() -> ToolResult:
        """Reads public data."""
        return ToolResult.ok("public", required_trust=TrustLevel.LOW)

    host = make_host(tmp_path, [medical, public])
    run = await run_script(host, [[tool_call("medical"), tool_call("public")], "never"])
    assert run.stop_reason == "trust"
    assert run.required_trust == TrustLevel.HIGH  # only tightens
    assert "trusted at least 'high'" in (run.detail or "")
    assert "medical call call_1_0" in (run.detail or "")
    assert run.rounds == 1
    trusted = make_host(tmp_path, [medical], provider=ProviderConfig(trust="high"))
    run = await run_script(trusted, [tool_call("medical"), "fine"])
    assert run.stop_reason == "answered"
    assert run.required_trust == TrustLevel.HIGH


async def test_a_tool_returning_garbage_through_middleware_is_an_error(tmp_path: Path) -> None:
    @toolwire.tool
    def fine() -> str:
        """Fine."""
        return "fine"

    def bad_execute(call: Any, context: Any) -> Any:
        async def produce() -> Any:
            return 42

        return produce()

    host = make_host(tmp_path, [fine], plugins=[plugin("bad", toolwire_execute_tool=bad_execute)])
    run = await run_script(host, [tool_call("fine"), "done"])
    assert "produced a int, not a ToolResult" in result_texts(run)[0]


async def test_call_tool_without_a_model(tmp_path: Path) -> None:
    from toolwire.loop import call_tool

    @toolwire.tool(side_effects=["destructive"])
    def wipe(what: str) -> str:
        """Wipe."""
        return f"wiped {what}"

    host = make_host(tmp_path, [wipe])
    assert (await call_tool(host, "wipe", {"what": "disk"})).content == "wiped disk"
    refused = await call_tool(host, "wipe", {"what": 3})
    assert refused.status == "error"
    assert "what" in (refused.content or "")
    with pytest.raises(KeyError, match="registered tools: wipe"):
        await call_tool(host, "nope", {})
    blocked = make_host(tmp_path, [wipe], policy=PolicyConfig(deny=("destructive",)))
    assert (await call_tool(blocked, "wipe", {"what": "disk"})).status == "blocked"


async def test_approval_callback_decides_inline(tmp_path: Path) -> None:
    from toolwire.loop import Approve, Deny

    @toolwire.tool(requires_approval=True, allow_duplicates=True)
    def send(to: str) -> str:
        """Send mail."""
        return f"sent to {to}"

    seen: list[str] = []

    async def approve(request: Any) -> Any:
        seen.append(request.arguments["to"])
        if request.arguments["to"] == "boss":
            return Deny("Never mail the boss.")
        if request.arguments["to"] == "typo":
            return Approve(arguments={"to": "fixed"})
        return Approve()

    host = make_host(tmp_path, [send])
    loop = ToolCallingLoop(
        host,
        adapter=scripted_loop(
            host,
            [
                [
                    tool_call("send", {"to": "ann"}),
                    tool_call("send", {"to": "boss"}),
                    tool_call("send", {"to": "typo"}),
                ],
                "done",
            ],
        )[1],
    )
    run = await loop.run("go", approval=approve)
    assert seen == ["ann", "boss", "typo"]
    assert result_texts(run) == ["sent to ann", "Never mail the boss.", "sent to fixed"]
    assert [r.outcome for r in run.tool_calls] == ["executed", "denied", "executed"]
    assert run.tool_calls[2].arguments == {"to": "fixed"}


async def test_provider_retry_of_a_scripted_function(tmp_path: Path) -> None:
    rounds: list[int] = []

    def script(request: ModelRequest) -> Any:
        rounds.append(request.round)
        return "ok"

    run = await run_script(make_host(tmp_path), script)
    assert rounds == [1]
    assert run.ok


@pytest.mark.parametrize("through_hook", [False, True])
async def test_each_call_is_validated_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through_hook: bool
) -> None:
    @toolwire.tool
    def double(n: int) -> int:
        """Double a number.

        Args:
            n: The number.
        """
        return 2 * n

    validated: list[Any] = []
    original = toolwire.Tool.validate

    def counting(self: toolwire.Tool, arguments: Any) -> Any:
        validated.append(dict(arguments))
        return original(self, arguments)

    monkeypatch.setattr(toolwire.Tool, "validate", counting)
    # An observer of execution makes the loop go through the hook instead of inline.
    plugins = [plugin("watch", toolwire_execute_tool=_passthrough)] if through_hook else []
    host = make_host(tmp_path, [double], plugins=plugins)
    run = await run_script(host, [tool_call("double", {"n": 4}), "8"])
    assert [r.result.model_text() for r in run.tool_calls if r.result] == ["8"]
    assert validated == [{"n": 4}]


@toolwire.hookimpl(wrapper=True)
def _passthrough(call: Any, context: Any) -> Any:
    return (yield)
