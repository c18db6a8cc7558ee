"""Admission as a pure function: one case per line, the verdict and the events it implies."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from toolwire.config import LoopConfig
from toolwire.events import DuplicateSuppressed, InvalidArguments, LimitReached, UnknownTool
from toolwire.loop._admission import (
    AdmissionContext,
    Admitted,
    NeedsDecision,
    Refused,
    admit,
    duplicate_key,
)
from toolwire.loop._offer import Offer
from toolwire.messages import ToolCall
from toolwire.tools import Tool

_SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string"}, "limit": {"type": "integer", "default": 3}},
    "required": ["q"],
}


def _tool(name: str, **options: Any) -> Tool:
    handler = None if options.get("external") else (lambda arguments: "ok")
    return Tool.from_schema(name, f"The {name} tool.", _SCHEMA, handler, **options)


SEARCH = _tool("search")
MATH = _tool("math.factorial")
REPEATS = _tool("again", allow_duplicates=True)
EXTERNAL = _tool("outside", external=True)
SECRET = _tool("login", sensitive_arguments=["q"])
OFFER = Offer(
    functions=tuple(t.function_spec() for t in (SEARCH, MATH, REPEATS, EXTERNAL, SECRET)),
    tools={t.name: t for t in (SEARCH, MATH, REPEATS, EXTERNAL, SECRET)},
)
SEEN = {duplicate_key(SEARCH, {"q": "seen"}): "first"}


_LOOP_FIELDS = ("invalid_arguments", "max_tool_calls", "unknown_tool")


def _ctx(**changes: Any) -> AdmissionContext:
    loop = LoopConfig(**{k: changes.pop(k) for k in _LOOP_FIELDS if k in changes})
    changes.setdefault("seen", SEEN)
    return AdmissionContext(run_id="r1", round=1, loop=loop, **changes)


def _call(
    name: str = "search", arguments: Any = None, raw: str | None = None, **kw: Any
) -> ToolCall:
    if arguments is None and raw is None:
        arguments = {"q": "x"}
    return ToolCall(id="c1", name=name, arguments=arguments, raw_arguments=raw, **kw)


def _summary(verdict: Any) -> tuple[Any, ...]:
    """The verdict's kind, its outcome or tool, and the kinds of its events."""
    kinds = tuple(type(e).__name__ for e in verdict.events)
    if isinstance(verdict, Refused):
        return ("refused", verdict.outcome, verdict.fail is not None, verdict.counted, kinds)
    if isinstance(verdict, NeedsDecision):
        return ("decide", verdict.reason, verdict.tool.name, verdict.counted, kinds)
    return ("admitted", verdict.tool.name, dict(verdict.arguments), verdict.counted, kinds)


def ok(*events: str, tool: str = "search", q: str = "x", counted: bool = True) -> tuple[Any, ...]:
    return ("admitted", tool, {"q": q}, counted, events)


def no(outcome: str, *events: str, fail: bool = False, counted: bool = True) -> tuple[Any, ...]:
    return ("refused", outcome, fail, counted, events)


def ask(reason: str, tool: str) -> tuple[Any, ...]:
    # A call waiting for a decision is not counted: it counts when it runs.
    return ("decide", reason, tool, False, ())


UT, IA, DS, LR = "UnknownTool", "InvalidArguments", "DuplicateSuppressed", "LimitReached"
UNKNOWN, INVALID = "unknown_tool", "invalid_arguments"
SEEN_Q = {"q": "seen"}
SEEN_AGAIN = {duplicate_key(REPEATS, {"q": "seen"}): "first"}


def asks(tool: Tool) -> str:
    return "asks"


def refuses(tool: Tool) -> str:
    return "refused by policy"


CASES = [
    ("plain call", _call(), _ctx(), ok()),
    ("cancelled", _call(), _ctx(cancel_requested=True), no("cancelled", counted=False)),
    ("deadline", _call(), _ctx(deadline_passed=True), no("limit", counted=False)),
    ("budget", _call(), _ctx(used=50), no("limit", LR, counted=False)),
    ("budget again", _call(), _ctx(used=50, budget_hit=True), no("limit", counted=False)),
    ("not counted", _call(), _ctx(used=50, count=False), ok(counted=False)),
    ("unknown", _call("nope"), _ctx(), no("unknown_tool", UT)),
    ("unknown fail", _call("nope"), _ctx(unknown_tool="fail"), no("unknown_tool", UT, fail=True)),
    ("rewrite", _call("nope"), _ctx(unknown_tool="rewrite:search"), ok(UT)),
    ("rewrite missing", _call("nope"), _ctx(unknown_tool="rewrite:gone"), no("unknown_tool", UT)),
    ("case repaired", _call("SEARCH"), _ctx(), ok(UT)),
    ("alias repaired", _call("math_factorial"), _ctx(), ok(UT, tool="math.factorial")),
    ("no repair if fail", _call("SEARCH"), _ctx(unknown_tool="fail"), no(UNKNOWN, UT, fail=True)),
    ("unreadable", _call("", raw="<x", invalid_reason="not closed"), _ctx(), no(INVALID, IA)),
    ("raw repaired", _call(raw="{'q': 'x'}"), _ctx(), ok(IA)),
    ("raw unparseable", _call(raw="q=x"), _ctx(), no("invalid_arguments", IA)),
    ("raw fail", _call(raw="q=x"), _ctx(invalid_arguments="fail"), no(INVALID, IA, fail=True)),
    ("invalid", _call(arguments={"q": 1}), _ctx(), no("invalid_arguments", IA)),
    ("duplicate", _call(arguments={"q": "seen"}), _ctx(), no("duplicate", DS)),
    ("same by default", _call(arguments={"q": "seen", "limit": 3}), _ctx(), no("duplicate", DS)),
    ("allow", _call("again", arguments=SEEN_Q), _ctx(seen=SEEN_AGAIN), ok(tool="again", q="seen")),
    ("external", _call("outside"), _ctx(), ask("external", "outside")),
    ("external approved", _call("outside"), _ctx(approved=True), ask("external", "outside")),
    ("approval", _call(), _ctx(approval_reason=asks), ask("approval", "search")),
    ("approved already", _call(), _ctx(approval_reason=asks, approved=True), ok()),
    ("refused anyway", _call(), _ctx(approval_reason=asks, refusal_reason=refuses), ok()),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "ctx", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_verdict(call: ToolCall, ctx: AdmissionContext, expected: tuple[Any, ...]) -> None:
    assert _summary(admit(call, OFFER, ctx)) == expected


def test_admission_does_not_change_what_it_reads() -> None:
    seen = dict(SEEN)
    verdict = admit(_call(arguments={"q": "new"}), OFFER, _ctx(seen=seen))
    assert isinstance(verdict, Admitted)
    assert verdict.key == duplicate_key(SEARCH, {"q": "new"})
    assert seen == SEEN


def test_the_events_name_the_call_and_what_happened() -> None:
    verdict = admit(_call("Search", raw="{'q': 'x'}"), OFFER, _ctx())
    ids: dict[str, Any] = {"run_id": "r1", "round": 1, "call_id": "c1"}
    assert verdict.events == (
        UnknownTool(
            **ids,
            name="Search",
            offered=OFFER.names,
            action="repaired:search",
            raw_arguments="{'q': 'x'}",
        ),
        InvalidArguments(
            **ids, name="search", recovery="repaired", reason="repaired: single-quoted strings"
        ),
    )


def test_a_refusal_says_what_would_be_valid() -> None:
    verdict = admit(_call("nope", arguments={"q": "x"}), OFFER, _ctx())
    assert isinstance(verdict, Refused)
    assert verdict.result.content == (
        'Unknown tool \'nope\' (called with arguments {"q": "x"}). '
        "Available tools: search, math.factorial, again, outside, login."
    )


def test_sensitive_arguments_are_not_quoted_in_the_event() -> None:
    verdict = admit(_call("login", raw="q=hunter2"), OFFER, _ctx())
    assert isinstance(verdict, Refused)
    (event,) = verdict.events
    assert isinstance(event, InvalidArguments)
    assert "hunter2" not in event.reason


def test_an_unknown_call_carries_its_arguments_verbatim_with_sensitive_ones_redacted() -> None:
    plain = admit(_call("nope", arguments={"q": "x", "n": [1, 2]}), OFFER, _ctx())
    (event,) = plain.events
    assert isinstance(event, UnknownTool)
    assert event.arguments == {"q": "x", "n": [1, 2]}
    # A call of the login tool's name in other case is repaired to it: its secret is hidden.
    call = ToolCall(
        id="c1", name="LOGIN", arguments={"q": "hunter2", "n": 1}, raw_arguments='{"q": "hunter2"}'
    )
    verdict = admit(call, OFFER, _ctx())
    unknown = next(e for e in verdict.events if isinstance(e, UnknownTool))
    assert unknown.arguments == {"q": "[redacted]", "n": 1}
    assert unknown.raw_arguments == "[redacted]"
    # A registered tool that is not offered in this round hides its sensitive ones too.
    hidden = admit(call, OFFER, _ctx(tools={"LOGIN": SECRET}, unknown_tool="fail"))
    (event,) = hidden.events
    assert isinstance(event, UnknownTool)
    assert event.arguments == {"q": "[redacted]", "n": 1}
    assert "hunter2" not in repr(event)


def test_the_duplicate_names_the_first_call() -> None:
    verdict = admit(_call(arguments={"q": "seen"}), OFFER, _ctx())
    assert verdict.events == (
        DuplicateSuppressed(
            run_id="r1", round=1, call_id="c1", name="search", first_call_id="first"
        ),
    )


def test_the_limit_is_announced_with_its_value() -> None:
    verdict = admit(_call(), OFFER, _ctx(used=2, max_tool_calls=2))
    assert isinstance(verdict, Refused)
    assert verdict.budget_hit
    assert verdict.events == (LimitReached(run_id="r1", round=1, limit="max_tool_calls", value=2),)


def test_the_approval_request_carries_the_validated_arguments() -> None:
    verdict = admit(_call(), OFFER, _ctx(approval_reason=lambda t: "side effects"))
    assert isinstance(verdict, NeedsDecision)
    assert attrs.asdict(verdict.request) == {
        "call_id": "c1",
        "tool": "search",
        "arguments": {"q": "x"},
        "reason": "approval",
        "detail": "side effects",
        "round": 1,
        "started": False,
        "attempt": 1,
        "starts": 0,
    }
