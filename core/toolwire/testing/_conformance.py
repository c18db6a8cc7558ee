"""The adapter conformance suite's tests: :class:`AdapterConformance` and its kit.

Used through the pytest plugin :mod:`toolwire.testing.conformance`, which registers this module
for assertion rewriting before importing it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import pytest

import toolwire

from ..adapters._base import ProviderError
from ..adapters._names import WIRE_NAME
from ..config import Config, LedgerConfig, LimitsConfig, ProviderConfig, RunConfig
from ..events import (
    InvalidOutput,
    ProviderRetry,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from ..messages import AssistantMessage, TextPart, ThinkingPart, ToolResultMessage
from ..usage import ModelPrice, Usage
from ._scripted import tool_call
from ._servers import ErrorReply, FakeProviderServer, Reply, ScriptItem

if TYPE_CHECKING:
    from ..host._host import Host
    from ..loop import Run
    from ..tools import Tool

__all__ = [
    "ABSENT",
    "AdapterConformance",
    "ConformanceKit",
    "KEY",
    "KEY_ENV",
    "Outcome",
]

KEY_ENV = "TOOLWIRE_CONFORMANCE_API_KEY"
KEY = "sk-conformance-0123456789abcdef-secret"

ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "ABSENT"})()
"""Marks a field the request body must not contain (see ``tool_choice_wire``)."""

UNICODE_TEXT = 'Grüße, 世界! 🎉 "quoted" back\\slash\nnew line \u2028 tab\t'


@attrs.frozen(kw_only=True)
class Outcome:
    """What a run produced, in a form comparable across streamed and non-streamed runs."""

    stop_reason: str
    text: str
    calls: tuple[tuple[str, str, str | None], ...]
    """(tool name, arguments as canonical JSON, result text) per call, in order."""

    @classmethod
    def of(cls, run: Run) -> Outcome:
        """The outcome of ``run``."""
        calls = tuple(
            (
                record.call.name,
                json.dumps(record.arguments, sort_keys=True, ensure_ascii=False),
                record.result.model_text() if record.result is not None else None,
            )
            for record in run.tool_calls
        )
        return cls(stop_reason=run.stop_reason, text=run.text, calls=calls)


class ConformanceKit:
    """Runs conversations through the adapter under test against its fake server.

    :ivar executed: the tool calls the conformance tools received, as (name, arguments).
    :ivar server: the server of the last run (its ``requests`` and ``bodies``).
    :ivar extra_tools: tools a test offers besides the conformance tools.
    """

    def __init__(self, suite: AdapterConformance, stream: bool) -> None:
        self.suite = suite
        self.stream = stream
        self.executed: list[tuple[str, dict[str, Any]]] = []
        self.server: FakeProviderServer | None = None
        self.extra_tools: list[Tool] = []

    def tools(self) -> list[Tool]:
        """The tools every conformance run offers: add, now, echo, fail."""
        executed = self.executed

        @toolwire.tool
        def add(a: int, b: int) -> int:
            """Add two integers.

            Args:
                a: The first integer.
                b: The second integer.
            """
            executed.append(("add", {"a": a, "b": b}))
            return a + b

        @toolwire.tool
        def now() -> str:
            """The current time (takes no arguments)."""
            executed.append(("now", {}))
            return "2024-01-01T00:00:00Z"

        @toolwire.tool
        def echo(text: str) -> str:
            """Repeat a text exactly.

            Args:
                text: The text to repeat.
            """
            executed.append(("echo", {"text": text}))
            return text

        @toolwire.tool
        def fail(reason: str) -> str:
            """A tool that always fails.

            Args:
                reason: What the failure says.
            """
            executed.append(("fail", {"reason": reason}))
            raise RuntimeError(reason)

        return [add, echo, fail, now]

    def config(self, server: FakeProviderServer, stream: bool, **provider: Any) -> Config:
        """The config of a conformance run against ``server``."""
        fields: dict[str, Any] = {
            "adapter": self.suite.adapter,
            "base_url": server.base_url,
            "model": "conformance-model",
            "api_key_env": KEY_ENV,
            "stream": stream,
            "accepts_parallel_tool_calls": True,
            "max_retries": 2,
            "connect_timeout": 5.0,
            "read_timeout": 5.0,
            "total_timeout": 30.0,
        }
        fields.update(self.suite.provider)
        fields.update(provider)
        return Config(provider=ProviderConfig(**fields), ledger=LedgerConfig(enabled=False))

    def host(self, config: Config) -> Host:
        """A host with the adapter's plugin and the conformance tools."""
        from ..host._host import Host

        host = Host.load(config, plugins=[self.suite.plugin])
        for tool in [*self.tools(), *self.extra_tools]:
            host.add_tool(tool)
        return host

    async def run(
        self,
        script: Sequence[ScriptItem],
        prompt: str = "Please use the tools.",
        *,
        stream: bool | None = None,
        tool_choice: Any = "auto",
        server_options: Mapping[str, Any] | None = None,
        provider: Mapping[str, Any] | None = None,
        sections: Mapping[str, Any] | None = None,
        **run_options: Any,
    ) -> Run:
        """Run one conversation whose model answers follow ``script``; ``sections`` replaces
        sections of the config (``limits``, ``prices`` …), ``run_options`` go to ``run``."""
        stream = self.stream if stream is None else stream
        options = {"api_key": KEY, **(server_options or {})}
        server = self.suite.server(script, **options)
        self.server = server
        async with server:
            config = self.config(server, stream, **(provider or {}))
            if sections:
                config = attrs.evolve(config, **sections)
            host = self.host(config)
            try:
                return await host.run(prompt, tool_choice=tool_choice, stream=stream, **run_options)
            finally:
                await host.aclose()

    async def output_mode(self) -> str:
        """How this adapter is asked for a typed answer: ``native``, ``tool`` or
        ``prompted``."""
        from ..loop._answer import output_mode

        config = Config(
            provider=ProviderConfig(adapter=self.suite.adapter, model="m", **self.suite.provider),
            ledger=LedgerConfig(enabled=False),
        )
        host = self.host(config)
        try:
            return output_mode((await host.get_adapter()).capabilities)
        finally:
            await host.aclose()

    @property
    def bodies(self) -> list[Any]:
        """The request bodies the last run's server received."""
        return self.server.bodies if self.server is not None else []


class AdapterConformance:
    """Base class of an adapter's conformance tests; see the module documentation.

    Subclasses set :attr:`adapter`, :attr:`plugin` and :attr:`server`; :attr:`provider` adds
    ``[provider]`` fields; :attr:`tool_choice_wire` says what the request body's tool choice
    (:meth:`tool_choice_of`) must be for each choice (``ABSENT`` for a field left out), None to
    skip that check. :attr:`tool_name_pattern`, :attr:`tool_name_max_length` and
    :attr:`tool_name_spell` are the API's rule for tool names, as the adapter passes them to
    :func:`~toolwire.adapters.wire_request` (the default is OpenAI's and Anthropic's).
    :attr:`calls_need_ids`: the API answers a call only by its id (Responses), so a call without
    one ends the run with an error instead of being answered. :attr:`reports_cache_writes`: the
    API reports input written to its prompt cache apart (Anthropic).
    """

    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.asyncio]

    adapter: ClassVar[str]
    plugin: ClassVar[object]
    server: ClassVar[type[FakeProviderServer]]
    provider: ClassVar[Mapping[str, Any]] = {}
    tool_choice_wire: ClassVar[Mapping[str, Any] | None] = None
    tool_name_pattern: ClassVar[re.Pattern[str]] = WIRE_NAME
    tool_name_max_length: ClassVar[int] = 64
    tool_name_spell: ClassVar[Callable[[str], str] | None] = None
    calls_need_ids: ClassVar[bool] = False
    reports_cache_writes: ClassVar[bool] = False

    def tool_choice_of(self, body: Mapping[str, Any]) -> Any:
        """The tool choice a request body carries (its ``tool_choice`` field by default),
        ``ABSENT`` when it carries none."""
        return body.get("tool_choice", ABSENT)

    # -- calls --------------------------------------------------------------------------------

    async def test_single_call(self, conformance: ConformanceKit) -> None:
        """One call, executed with its arguments; its result goes back; the model answers."""
        run = await conformance.run([tool_call("add", {"a": 2, "b": 3}), "The sum is 5."])
        assert run.stop_reason == "answered", run.detail
        assert run.text == "The sum is 5."
        assert conformance.executed == [("add", {"a": 2, "b": 3})]
        assert len(conformance.bodies) == 2
        first_call = run.tool_calls[0].call
        second = json.dumps(conformance.bodies[1], ensure_ascii=False)
        assert first_call.id
        assert first_call.id in second
        assert "5" in second

    async def test_parallel_calls(self, conformance: ConformanceKit) -> None:
        """Several calls in one answer: all run, in order, each result paired with its call."""
        script: list[ScriptItem] = [
            [tool_call("add", {"a": 1, "b": 2}), tool_call("add", {"a": 30, "b": 40})],
            "3 and 70.",
        ]
        run = await conformance.run(script)
        assert run.stop_reason == "answered", run.detail
        assert conformance.executed == [("add", {"a": 1, "b": 2}), ("add", {"a": 30, "b": 40})]
        ids = [record.call.id for record in run.tool_calls]
        assert len(set(ids)) == 2
        assert all(ids)
        results = [m for m in run.messages if isinstance(m, ToolResultMessage)]
        assert [r.call_id for r in results] == ids
        assert [r.result.model_text() for r in results] == ["3", "70"]

    async def test_parallel_calls_interleaved(self, conformance: ConformanceKit) -> None:
        """Parallel calls whose argument deltas interleave (where the API can) still assemble."""
        script: list[ScriptItem] = [
            [
                tool_call("echo", {"text": "first call text"}),
                tool_call("echo", {"text": "second call text"}),
            ],
            "Done.",
        ]
        run = await conformance.run(script, server_options={"interleave": True, "chunk_size": 3})
        assert run.stop_reason == "answered", run.detail
        assert conformance.executed == [
            ("echo", {"text": "first call text"}),
            ("echo", {"text": "second call text"}),
        ]

    @pytest.mark.parametrize("raw", ["{}", ""], ids=["empty-object", "empty-text"])
    async def test_no_argument_tool(self, conformance: ConformanceKit, raw: str) -> None:
        """A tool without parameters completes with ``{}`` however the wire leaves it empty."""
        run = await conformance.run([tool_call("now", raw_arguments=raw), "It is midnight."])
        assert run.stop_reason == "answered", run.detail
        assert conformance.executed == [("now", {})]
        assert run.tool_calls[0].call.arguments == {}

    async def test_unicode_arguments(self, conformance: ConformanceKit) -> None:
        """Non-ASCII, quotes, escapes and emoji arrive exactly, and go back exactly."""
        script: list[ScriptItem] = [tool_call("echo", {"text": UNICODE_TEXT}), "Echoed."]
        run = await conformance.run(script, server_options={"chunk_size": 1})
        assert run.stop_reason == "answered", run.detail
        assert conformance.executed == [("echo", {"text": UNICODE_TEXT})]
        sent = json.dumps(conformance.bodies[1], ensure_ascii=False)
        assert json.dumps(UNICODE_TEXT, ensure_ascii=False)[1:-1] in sent

    async def test_error_result(self, conformance: ConformanceKit) -> None:
        """A failing tool's error goes back to the model, readable, and the run goes on."""
        script: list[ScriptItem] = [tool_call("fail", {"reason": "disk on fire"}), "Sorry."]
        run = await conformance.run(script)
        assert run.stop_reason == "answered", run.detail
        assert run.tool_calls[0].result is not None
        assert not run.tool_calls[0].result.is_ok
        assert "disk on fire" in json.dumps(conformance.bodies[1], ensure_ascii=False)
        self.check_error_result(conformance.bodies[1], run.tool_calls[0].call.id)

    def check_error_result(self, body: Any, call_id: str) -> None:
        """Adapter-specific check that the failed call is marked as failed on the wire."""

    @pytest.mark.parametrize("choice", ["none", "required", "named"])
    async def test_tool_choice(self, conformance: ConformanceKit, choice: str) -> None:
        """Tool choice ``none``, ``required`` and a named tool reach the API in its own terms."""
        if choice == "none":
            run = await conformance.run(["No tools needed."], tool_choice="none")
        else:
            selected = "add" if choice == "named" else "required"
            script: list[ScriptItem] = [tool_call("add", {"a": 1, "b": 1}), "2."]
            run = await conformance.run(script, tool_choice=selected)
        assert run.stop_reason == "answered", run.detail
        if self.tool_choice_wire is not None:
            body = conformance.bodies[0]
            expected = self.tool_choice_wire[choice]
            actual = self.tool_choice_of(body)
            assert actual == expected, f"tool_choice {choice}: sent {actual!r}"
            if choice != "none":
                auto = self.tool_choice_wire["auto"]
                assert self.tool_choice_of(conformance.bodies[1]) == auto

    async def test_aliased_tool_names(self, conformance: ConformanceKit) -> None:
        """Names the API refuses (dotted, long and dotted, a digit first) go out under stable
        aliases by the API's own name rule; the calls come back, and events and the run record
        carry, the canonical names."""
        from ..adapters import ToolNames
        from ..tools import Tool

        canonical = ["math.factorial", "pkg." + "x" * 56 + ".run", "3d.render"]

        def answer(name: str) -> Any:
            return lambda arguments: f"{name}:{arguments['n']}"

        for name in canonical:
            conformance.extra_tools.append(
                Tool.from_schema(
                    name,
                    "Factorial of n.",
                    {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
                    answer(name),
                )
            )
        rule = ToolNames(
            ["add", "echo", "fail", "now", *canonical],
            pattern=self.tool_name_pattern,
            max_length=self.tool_name_max_length,
            spell=type(self).tool_name_spell,
        )
        wire = [rule.wire(name) for name in canonical]
        assert len(set(wire)) == len(wire)
        assert all(rule.accepts(name) for name in wire), wire
        aliased = [
            (name, alias) for name, alias in zip(canonical, wire, strict=True) if alias != name
        ]
        assert aliased, "the digit-first name is refused by every rule the kit knows"
        script: list[ScriptItem] = [
            [tool_call(alias, {"n": n}, id=f"call_alias_{n}") for n, alias in enumerate(wire, 3)],
            "Done.",
        ]
        run = await conformance.run(script)
        assert run.stop_reason == "answered", run.detail
        assert [r.call.name for r in run.tool_calls] == canonical
        assert [r.result.model_text() for r in run.tool_calls if r.result] == [
            f"{name}:{n}" for n, name in enumerate(canonical, 3)
        ]
        sent = [json.dumps(body, ensure_ascii=False) for body in conformance.bodies]
        for body in sent:
            for name, alias in zip(canonical, wire, strict=True):
                assert f'"{alias}"' in body
                if alias != name:
                    assert f'"{name}"' not in body
        # The later request carries the earlier calls under the aliases too.
        first_alias = aliased[0][1]
        assert sent[1].count(f'"{first_alias}"') >= 2
        named = [
            e.call.name if isinstance(e, ToolCallCompleted) else getattr(e, "name", None)
            for e in run.events
        ]
        tool_names = {name for name in named if isinstance(name, str)}
        assert tool_names == set(canonical), tool_names
        recorded = json.dumps(run.to_json(), ensure_ascii=False)
        for name, alias in aliased:
            assert f'"{alias}"' not in recorded
            assert f'"{name}"' in recorded

    async def test_multi_round_history(self, conformance: ConformanceKit) -> None:
        """Three rounds: each request carries every earlier call and result, in order."""
        script: list[ScriptItem] = [
            tool_call("add", {"a": 1, "b": 1}),
            tool_call("echo", {"text": "round two"}),
            "Both done.",
        ]
        run = await conformance.run(script)
        assert run.stop_reason == "answered", run.detail
        assert len(conformance.bodies) == 3
        ids = [record.call.id for record in run.tool_calls]
        third = json.dumps(conformance.bodies[2], ensure_ascii=False)
        first, second = third.find(ids[0]), third.find(ids[1])
        assert 0 <= first < second, "both calls are in the history, the earlier one first"
        assert third.find("round two") > first
        assistants = [m for m in run.messages if isinstance(m, AssistantMessage)]
        assert len(assistants) == 3

    async def test_calls_without_ids(self, conformance: ConformanceKit) -> None:
        """Calls the API sends without ids (older models, some hosts) get ids of their own, and
        each result goes back to its call, in order, even for two calls of one tool. An API that
        answers calls only by id ends the run with an error instead, running nothing."""
        script: list[ScriptItem] = [
            [tool_call("add", {"a": 1, "b": 2}), tool_call("add", {"a": 30, "b": 40})],
            "3 and 70.",
        ]
        run = await conformance.run(script, server_options={"omit_call_ids": True})
        if self.calls_need_ids:
            assert run.stop_reason == "error"
            assert conformance.executed == []
            return
        assert run.stop_reason == "answered", run.detail
        assert conformance.executed == [("add", {"a": 1, "b": 2}), ("add", {"a": 30, "b": 40})]
        ids = [record.call.id for record in run.tool_calls]
        assert all(ids)
        assert len(set(ids)) == 2
        results = [m for m in run.messages if isinstance(m, ToolResultMessage)]
        assert [(r.call_id, r.result.model_text()) for r in results] == list(
            zip(ids, ["3", "70"], strict=True)
        )
        sent = json.dumps(conformance.bodies[1], ensure_ascii=False)
        assert 0 <= sent.find('"3"') < sent.find('"70"'), "the results go back in call order"

    async def test_text_beside_call(self, conformance: ConformanceKit) -> None:
        """Text the model writes beside a call is kept, and goes back with the call."""
        said = "Let me add those numbers."
        turn = AssistantMessage(parts=(TextPart(said), tool_call("add", {"a": 4, "b": 5})))
        run = await conformance.run([turn, "It is 9."])
        assert run.stop_reason == "answered", run.detail
        assert conformance.executed == [("add", {"a": 4, "b": 5})]
        assistants = [m for m in run.messages if isinstance(m, AssistantMessage)]
        assert assistants[0].text == said
        sent = json.dumps(conformance.bodies[1], ensure_ascii=False)
        assert said in sent

    async def test_turn_state_sent_back(self, conformance: ConformanceKit) -> None:
        """What the API attaches to a turn for itself (thinking signatures, reasoning item ids,
        thought signatures on calls) goes back unchanged in every later request."""
        turn = AssistantMessage(
            parts=(ThinkingPart(text="Two numbers: add them."), tool_call("add", {"a": 2, "b": 2}))
        )
        script: list[ScriptItem] = [turn, tool_call("echo", {"text": "four"}), "4."]
        run = await conformance.run(script)
        assert run.stop_reason == "answered", run.detail
        server = conformance.server
        assert server is not None
        first = server.turn_tokens(server.answered[1], 1)
        second = server.turn_tokens(server.answered[2], 2)
        later = [json.dumps(body, ensure_ascii=False) for body in conformance.bodies[1:]]
        for token in first:
            assert all(token in body for body in later), f"{token!r} was not sent back"
        for token in second:
            assert token in later[-1], f"{token!r} was not sent back"

    async def test_streaming_equals_non_streaming(
        self, streamed_conformance: ConformanceKit
    ) -> None:
        """The same answers give the same run outcome, streamed or not."""
        script: list[ScriptItem] = [
            [tool_call("add", {"a": 5, "b": 6}), tool_call("echo", {"text": UNICODE_TEXT})],
            tool_call("now", raw_arguments=""),
            "All finished: 11.",
        ]
        plain = Outcome.of(await streamed_conformance.run(list(script), stream=False))
        streamed = Outcome.of(await streamed_conformance.run(list(script), stream=True))
        assert plain == streamed
        assert plain.stop_reason == "answered"

    async def test_stream_events(self, streamed_conformance: ConformanceKit) -> None:
        """Streamed: text and call events, stamped with run and round, add up to the turn."""
        script: list[ScriptItem] = [
            tool_call("echo", {"text": "streamed argument text"}),
            "A streamed answer in pieces.",
        ]
        run = await streamed_conformance.run(script, stream=True, server_options={"chunk_size": 4})
        assert run.stop_reason == "answered", run.detail
        events = run.events
        started = [e for e in events if isinstance(e, ToolCallStarted)]
        deltas = [e for e in events if isinstance(e, ToolCallArgumentsDelta)]
        completed = [e for e in events if isinstance(e, ToolCallCompleted)]
        texts = [e for e in events if isinstance(e, TextDelta)]
        assert len(started) == 1
        assert len(completed) == 1
        call = run.tool_calls[0].call
        assert started[0].call_id == call.id == completed[0].call.id
        assert started[0].name == "echo"
        assert json.loads("".join(d.delta for d in deltas)) == {"text": "streamed argument text"}
        assert all(d.call_id == call.id for d in deltas)
        assert "".join(t.text for t in texts) == "A streamed answer in pieces."
        for event in (*started, *deltas, *completed, *texts):
            assert event.run_id == run.id
        assert started[0].round == 1
        assert texts[0].round == 2

    async def test_cut_off_arguments(self, conformance: ConformanceKit) -> None:
        """A turn cut off inside a call's arguments ends that call invalid; the model is told."""
        script: list[ScriptItem] = [
            Reply(
                turn=tool_call("echo", raw_arguments='{"text": "never fini'),
                finish_reason="length",
            ),
            "I was cut off.",
        ]
        run = await conformance.run(script)
        assert run.stop_reason == "answered", run.detail
        assert conformance.executed == []
        call = run.tool_calls[0].call
        if call.arguments is None:
            assert call.raw_arguments is not None
            assert "never fini" in call.raw_arguments
        assert run.tool_calls[0].result is not None
        assert not run.tool_calls[0].result.is_ok

    # -- transport ----------------------------------------------------------------------------

    async def test_http_error_names_provider(self, conformance: ConformanceKit) -> None:
        """A 4xx ends the run with an error naming the API, the status and the provider message."""
        run = await conformance.run([ErrorReply(status=400, message="messages: malformed")])
        assert run.stop_reason == "error"
        assert isinstance(run.error, ProviderError)
        assert run.error.status == 400
        text = str(run.error)
        assert self.adapter in text
        assert "400" in text
        assert "messages: malformed" in text
        assert len(conformance.bodies) == 1

    async def test_rate_limit_retry_after(self, conformance: ConformanceKit) -> None:
        """429 with Retry-After is retried after the wait the server asked for."""
        script: list[ScriptItem] = [
            ErrorReply(status=429, message="slow down", retry_after=0.05),
            ErrorReply(status=503, message="busy", retry_after=0),
            "Answered after retries.",
        ]
        run = await conformance.run(script)
        assert run.stop_reason == "answered", run.detail
        retries = [e for e in run.events if isinstance(e, ProviderRetry)]
        assert [(e.status, e.delay) for e in retries] == [(429, 0.05), (503, 0.0)]
        assert all(e.api == self.adapter and e.run_id == run.id for e in retries)
        assert len(conformance.bodies) == 3

    async def test_dropped_connection(self, conformance: ConformanceKit) -> None:
        """A connection dropped before anything was delivered is sent again; once content was
        delivered, the run ends with a clear error and no half turn in the transcript."""
        early: list[ScriptItem] = [
            Reply(turn=tool_call("add", {"a": 1, "b": 2}), drop_after=0),
            "Recovered.",
        ]
        run = await conformance.run(early)
        assert run.stop_reason == "answered", run.detail
        assert len(conformance.bodies) == 2
        if not conformance.stream:
            return
        # Cut just before the stream's last event (every API ends a stream with one), and, where
        # calls stream in pieces, inside a call's arguments.
        drops = [-1, 6] if self.server.streams_call_arguments else [-1]
        for drop in drops:
            late: list[ScriptItem] = [
                Reply(turn=tool_call("echo", {"text": "a long argument " * 8}), drop_after=drop),
                "never used",
            ]
            run = await conformance.run(late, server_options={"chunk_size": 4})
            assert run.stop_reason == "error", f"dropped at {drop}: {run.detail}"
            assert isinstance(run.error, ProviderError)
            assert "after content was delivered" in str(run.error)
            assert len(conformance.bodies) == 1
            assert not any(isinstance(m, AssistantMessage) for m in run.messages)
            assert conformance.executed == []

    async def test_api_key_sent_and_never_leaked(self, conformance: ConformanceKit) -> None:
        """The key from the environment reaches the server in a header, never in the URL, and
        appears in no event or error."""
        run = await conformance.run([tool_call("add", {"a": 1, "b": 2}), "3."])
        assert run.stop_reason == "answered", run.detail
        assert conformance.server is not None
        for request in conformance.server.requests:
            assert KEY not in request.path
            assert KEY not in request.query
        dumped = json.dumps(run.to_json(), ensure_ascii=False, default=repr)
        assert KEY not in dumped
        assert all(KEY not in repr(event) for event in run.events)
        wrong = "sk-wrong-" + KEY[::-1]
        os.environ[KEY_ENV] = wrong
        try:
            failed = await conformance.run(["unused"])
        finally:
            os.environ[KEY_ENV] = KEY
        assert failed.stop_reason == "error"
        assert isinstance(failed.error, ProviderError)
        assert failed.error.status == self.server.bad_key_status
        assert wrong not in str(failed.error)
        assert wrong not in (failed.detail or "")
        assert wrong not in json.dumps(failed.to_json(), ensure_ascii=False, default=repr)

    # -- usage --------------------------------------------------------------------------------

    async def test_usage_of_every_request(self, conformance: ConformanceKit) -> None:
        """The server's token counts (cached input, reasoning, cache writes where the API
        reports them) come back in canonical terms on each answer, and the run adds them."""
        first = Usage(
            input_tokens=1200,
            cache_read_tokens=1000,
            cache_write_tokens=150 if self.reports_cache_writes else None,
            output_tokens=90,
            reasoning_tokens=64,
            total_tokens=1290,
        )
        second = attrs.evolve(first, input_tokens=1400, output_tokens=10, total_tokens=1410)
        script: list[ScriptItem] = [
            Reply(turn=tool_call("add", {"a": 1, "b": 2}), usage=first),
            Reply(turn="3.", usage=second),
        ]
        run = await conformance.run(script)
        assert run.stop_reason == "answered", run.detail
        answers = [m for m in run.messages if isinstance(m, AssistantMessage)]
        assert [m.usage for m in answers] == [first, second]
        assert run.usage == first + second

    async def test_budget_stops_the_run_with_every_call_answered(
        self, conformance: ConformanceKit
    ) -> None:
        """Usage priced at ``[prices]`` gives the run its cost; an answer that reaches a limit
        of ``[limits]`` ends the run ``budget``, its calls answered as not run."""
        price = ModelPrice(input=2.0, output=8.0)
        first = Usage(input_tokens=1000, output_tokens=100, total_tokens=1100)
        script: list[ScriptItem] = [
            Reply(turn=tool_call("add", {"a": 1, "b": 2}), usage=first),
            Reply(turn=[tool_call("add", {"a": 3, "b": 4}), tool_call("now")], usage=first),
            "never asked",
        ]
        run = await conformance.run(
            script,
            sections={
                "limits": LimitsConfig(max_output_tokens=200),
                "prices": {"conformance-model": price},
            },
        )
        assert run.stop_reason == "budget", run.detail
        assert "[limits] max_output_tokens" in (run.detail or "")
        assert len(conformance.bodies) == 2
        assert conformance.executed == [("add", {"a": 1, "b": 2})]
        assert [r.outcome for r in run.tool_calls] == ["executed", "not_run", "not_run"]
        answered = {m.call_id for m in run.messages if isinstance(m, ToolResultMessage)}
        assert answered == {r.call.id for r in run.tool_calls}
        assert run.usage == first + first
        assert run.cost == 2 * price.cost(first)
        assert run.to_json()["cost"] == run.cost

    # -- typed answers ------------------------------------------------------------------------

    async def test_typed_answer(self, conformance: ConformanceKit) -> None:
        """A run with an output type gets its answer checked and structured; a wrong answer
        goes back to the model with what is wrong, and the corrected one is taken."""
        mode = await conformance.output_mode()
        schema = {
            "type": "object",
            "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
            "required": ["city", "population"],
            "additionalProperties": False,
        }
        wrong = {"city": "Nice", "population": "many"}
        right = {"city": "Nice", "population": 342_669}
        script: list[ScriptItem]
        if mode == "tool":
            script = [tool_call("final_answer", wrong), tool_call("final_answer", right)]
        else:
            script = [json.dumps(wrong), "```json\n" + json.dumps(right) + "\n```"]
        run = await conformance.run(script, prompt="Which city?", output=schema)
        assert run.stop_reason == "answered", run.detail
        assert run.output == right
        invalid = [e for e in run.events if isinstance(e, InvalidOutput)]
        assert [(e.recovery, e.attempt) for e in invalid] == [("returned", 1)]
        first, second = conformance.bodies
        assert "population" in json.dumps(first)  # the schema reached the model
        assert "expected an integer" in json.dumps(second)  # what was wrong went back
        assert_every_call_answered(run)

    async def test_typed_answer_gives_up_after_its_retries(
        self, conformance: ConformanceKit
    ) -> None:
        """Answers that stay wrong end the run ``output_invalid`` after ``[run]
        output_retries``, every call answered."""
        mode = await conformance.output_mode()
        schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
        bad: ScriptItem = tool_call("final_answer", {"n": "x"}) if mode == "tool" else '{"n": "x"}'
        run = await conformance.run(
            [bad, bad], output=schema, sections={"run": RunConfig(output_retries=1)}
        )
        assert run.stop_reason == "output_invalid", run.detail
        assert "n: got" in (run.detail or "")
        assert run.output is None
        assert len(conformance.bodies) == 2
        assert_every_call_answered(run)


def assert_every_call_answered(run: Run) -> None:
    """Every call of the run's conversation has its result in it."""
    answered = {m.call_id for m in run.messages if isinstance(m, ToolResultMessage)}
    called = {c.id for m in run.messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
    assert answered == called, (answered, called)
