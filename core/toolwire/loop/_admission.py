"""Admission of one tool call: pure checks that return a verdict with the events it implies.

Nothing here emits, awaits or changes the run: :func:`admit` reads an :class:`AdmissionContext`
(a snapshot of what the checks need) and returns :class:`Admitted`, :class:`Refused` or
:class:`NeedsDecision`; the loop applies the verdict (emits its events, answers or defers the
slot, counts the call, records the duplicate key, asks the approver).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import attrs

from .._json.relaxed import parse_arguments
from .._redact import Inside, redacted_call
from ..events import DuplicateSuppressed, Event, InvalidArguments, LimitReached, UnknownTool
from ..messages import ToolCall
from ..tools._errors import ArgumentsInvalid
from ..tools._names import CALL_TOOL, call_sensitive, match_tool_name, sensitive_arguments
from ..tools._result import ToolResult
from ._run import DeferredRequest, Outcome

if TYPE_CHECKING:
    from ..config import LoopConfig
    from ..tools import Tool
    from ._offer import Offer

_SHOWN_ARGUMENTS = 400


_CANONICAL = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
)
"""Made once: ``json.dumps`` with options builds an encoder on every call."""


def canonical(arguments: Mapping[str, Any]) -> str:
    """The arguments as compact JSON with sorted keys (one text per value)."""
    return _CANONICAL.encode(arguments)


def duplicate_key(tool: Tool, arguments: Mapping[str, Any]) -> str:
    """The tool name and the canonical JSON of the arguments, schema defaults filled in (so
    ``{"q": "a"}`` and ``{"q": "a", "limit": 3}`` with ``limit`` defaulting to 3 are one call)."""
    properties = tool.parameters.get("properties")
    if isinstance(properties, Mapping):
        defaults = {
            name: spec["default"]
            for name, spec in properties.items()
            if name not in arguments and isinstance(spec, Mapping) and "default" in spec
        }
        if defaults:
            arguments = {**defaults, **arguments}
    return tool.name + "\x00" + canonical(arguments)


def _shown(ctx: AdmissionContext, call: ToolCall) -> str:
    """The arguments of a refused call as the model sent them, for its refusal: the values of
    the sensitive arguments of the tool it names (whatever its spelling) left out."""
    call = redacted_call(call, sensitive_of_call(ctx.tools, ctx.loop, call))
    if call.arguments is not None:
        text = json.dumps(call.arguments, ensure_ascii=False, default=str)
    else:
        text = call.raw_arguments or ""
    return text if len(text) <= _SHOWN_ARGUMENTS else text[:_SHOWN_ARGUMENTS] + "…"


def sensitive_of(tools: Mapping[str, Tool], loop: LoopConfig, name: str) -> frozenset[str]:
    """The arguments to redact wherever a call named ``name`` is shown, before and after it is
    admitted: the sensitive arguments of the registered tool it names, whatever its spelling
    (``Login`` for ``login``), and, for a name no tool has, of the tool ``[loop] unknown_tool``
    rewrites it to."""
    tool = tools.get(name)
    if tool is not None:  # the usual case: the name as registered
        return tool.sensitive_arguments
    if name == CALL_TOOL:  # a bridge call, the tool it calls not known here: any tool's
        every = every_sensitive(tools)
        return frozenset({Inside("arguments", every)}) if every else frozenset()
    found = sensitive_arguments(tools, name)
    policy = loop.unknown_tool
    if policy.startswith("rewrite:"):
        found = found | sensitive_arguments(tools, policy.removeprefix("rewrite:"))
    return found


def sensitive_of_call(
    tools: Mapping[str, Tool], loop: LoopConfig, call: ToolCall
) -> frozenset[str]:
    """:func:`sensitive_of` for a whole call: a bridge call (``tool_call``) by the tool it
    names, inside its ``arguments``."""
    if call.name != CALL_TOOL:
        return sensitive_of(tools, loop, call.name)
    return call_sensitive(
        call.name,
        call.arguments,
        lambda name: sensitive_of(tools, loop, name) if name != CALL_TOOL else frozenset(),
        every=lambda: every_sensitive(tools),
    )


def every_sensitive(tools: Mapping[str, Tool]) -> frozenset[str]:
    """The sensitive arguments of every tool, together."""
    found: frozenset[str] = frozenset()
    for tool in tools.values():
        if tool.sensitive_arguments:
            found = found | tool.sensitive_arguments
    return found


def _available(offer: Offer) -> str:
    listed = ", ".join(offer.names) if offer.names else "none in this round"
    reachable = sorted(offer.reachable)
    if reachable:
        more = f" and {len(reachable) - 60} more" if len(reachable) > 60 else ""
        listed += f"; through {CALL_TOOL}: {', '.join(reachable[:60])}{more}"
    return listed


@attrs.define(kw_only=True)
class AdmissionContext:
    """What the checks read about the run, taken just before one call is admitted."""

    run_id: str
    round: int
    loop: LoopConfig
    used: int = 0
    """Tool calls the run has counted so far."""
    budget_hit: bool = False
    """The run already announced that it reached ``[loop] max_tool_calls``."""
    cancel_requested: bool = False
    deadline_passed: bool = False
    seen: Mapping[str, str] = attrs.field(factory=dict)
    """Duplicate key → id of the first call that had it."""
    refusal_reason: Callable[[Tool], str | None] = lambda tool: None
    approval_reason: Callable[[Tool], str | None] = lambda tool: None
    count: bool = True
    """Check the call against the limits and count it (not for a call admitted again after a
    crash that the run counted already)."""
    approved: bool = False
    """The call was approved already: do not ask again."""
    tools: Mapping[str, Tool] = attrs.field(factory=dict)
    """The host's registered tools, whose sensitive arguments an unknown call's event hides."""


@attrs.define(kw_only=True)
class Admitted:
    """The call runs: ``tool`` with the validated ``arguments``; ``key`` is its duplicate key to
    record (None for tools that allow duplicates)."""

    tool: Tool
    arguments: Mapping[str, Any]
    key: str | None = None
    events: tuple[Event, ...] = ()
    counted: bool = False
    call: ToolCall | None = None
    """The call to record in the turn in place of the model's: :func:`as_read`."""


@attrs.define(kw_only=True)
class Refused:
    """The call is answered without running: ``outcome`` and ``result`` go to its slot, with what
    admission learned of ``tool`` and ``arguments``; ``fail`` says why the run stops (a ``fail``
    policy), ``budget_hit``/``deadline_hit`` which limit the run reached."""

    outcome: Outcome
    result: ToolResult
    tool: Tool | None = None
    arguments: Mapping[str, Any] | None = None
    fail: str | None = None
    budget_hit: bool = False
    deadline_hit: bool = False
    events: tuple[Event, ...] = ()
    counted: bool = False
    call: ToolCall | None = None
    """The call to record in the turn in place of the model's: :func:`as_read`."""


@attrs.define(kw_only=True)
class NeedsDecision:
    """The call waits for a decision: ``"approval"`` (ask the run's approver, else defer) or
    ``"external"`` (the caller runs the tool and supplies the result); ``key`` is the duplicate
    key to record when it is approved as is. It is within the limits but not counted: a waiting
    call counts against ``max_tool_calls`` when the host runs it."""

    reason: Literal["approval", "external"]
    request: DeferredRequest
    tool: Tool
    arguments: Mapping[str, Any]
    key: str | None = None
    events: tuple[Event, ...] = ()
    counted: bool = False
    call: ToolCall | None = None
    """The call to record in the turn in place of the model's: :func:`as_read`."""


Verdict: TypeAlias = Admitted | Refused | NeedsDecision


def check_limits(ctx: AdmissionContext) -> Refused | None:
    """Cancellation, the deadline and ``[loop] max_tool_calls``; None when the call may count."""
    if ctx.cancel_requested:
        message = "Cancelled: the run was cancelled before this call ran."
        return Refused(outcome="cancelled", result=ToolResult.error(message))
    if ctx.deadline_passed:
        message = "Not run: the run's deadline passed before this call could start."
        return Refused(outcome="limit", result=ToolResult.error(message), deadline_hit=True)
    limit = ctx.loop.max_tool_calls
    if ctx.used < limit:
        return None
    events: tuple[Event, ...] = ()
    if not ctx.budget_hit:
        events = (
            LimitReached(run_id=ctx.run_id, round=ctx.round, limit="max_tool_calls", value=limit),
        )
    message = (
        f"Not run: this run reached its limit of {limit} tool call(s). Answer with what you have."
    )
    return Refused(
        outcome="limit", result=ToolResult.error(message), budget_hit=True, events=events
    )


def _refuse_arguments(
    ctx: AdmissionContext,
    call: ToolCall,
    *,
    name: str,
    reason: str,
    message: str,
    stop_detail: str,
    tool: Tool | None = None,
    arguments: Mapping[str, Any] | None = None,
    events: tuple[Event, ...] = (),
) -> Refused:
    """A call whose arguments could not be read or were invalid (``[loop] invalid_arguments``)."""
    failing = ctx.loop.invalid_arguments == "fail"
    event = InvalidArguments(
        run_id=ctx.run_id,
        round=ctx.round,
        call_id=call.id,
        name=name,
        recovery="failed" if failing else "returned",
        reason=reason,
    )
    return Refused(
        outcome="invalid_arguments",
        result=ToolResult.error(message),
        tool=tool,
        arguments=arguments,
        fail=f"{stop_detail} and [loop] invalid_arguments is 'fail'" if failing else None,
        events=(*events, event),
    )


def repaired_name(ctx: AdmissionContext, call: ToolCall, offer: Offer) -> tuple[Tool, Event] | None:
    """The offered tool an unknown name means except for case or as an alias, with its event."""
    matched = match_tool_name(call.name, offer.names)
    if matched is None:
        return None
    tool = offer.tools[matched]
    return tool, unknown_tool(ctx, call, offer, f"repaired:{matched}", tool)


def unknown_tool(
    ctx: AdmissionContext, call: ToolCall, offer: Offer, action: str, meant: Tool | None
) -> UnknownTool:
    """The event of a call of a tool that was not offered, with the arguments as the model sent
    them; the sensitive ones of the tool registered under that name (whatever its spelling), or
    of the tool the call is taken for (``meant``), are redacted."""
    sensitive = sensitive_of(ctx.tools, ctx.loop, call.name)
    if meant is not None:
        sensitive = sensitive | meant.sensitive_arguments
    shown = redacted_call(call, sensitive)
    return UnknownTool(
        run_id=ctx.run_id,
        round=ctx.round,
        call_id=call.id,
        name=call.name,
        offered=offer.names,
        action=action,
        arguments=shown.arguments,
        raw_arguments=shown.raw_arguments,
    )


def check_tool(
    ctx: AdmissionContext, call: ToolCall, offer: Offer
) -> tuple[Tool, tuple[Event, ...]] | Refused:
    """The offered tool the call names (repaired, or ``[loop] unknown_tool``'s rewrite)."""
    name = call.name
    if not name and call.invalid_reason is not None:
        # A call written in the text that could not even be read for a tool name (prompted
        # dialects): the model needs the reader's reason, not "unknown tool ''".
        return _refuse_arguments(
            ctx,
            call,
            name=name,
            reason=call.invalid_reason,
            message=f"Could not read a tool call: {call.invalid_reason}. "
            f"Available tools: {_available(offer)}.",
            stop_detail="a tool call could not be read",
        )
    policy = ctx.loop.unknown_tool
    tool = offer.tools.get(name)
    if tool is None:
        tool = offer.reachable.get(name)  # a deferred tool, through the bridge or by name
    if tool is not None:
        return tool, ()
    if policy != "fail":
        repaired = repaired_name(ctx, call, offer)
        if repaired is not None:
            return repaired[0], (repaired[1],)
    target = policy.removeprefix("rewrite:") if policy.startswith("rewrite:") else None
    rewritten = offer.tools.get(target) if target is not None else None
    action = policy if rewritten is not None or target is None else "return_error"
    event = unknown_tool(ctx, call, offer, action, rewritten)
    if rewritten is not None:
        return rewritten, (event,)
    message = (
        f"Unknown tool {name!r} (called with arguments {_shown(ctx, call)}). "
        f"Available tools: {_available(offer)}."
    )
    fail = None
    if policy == "fail":
        fail = f"the model called the unknown tool {name!r} and [loop] unknown_tool is 'fail'"
    return Refused(
        outcome="unknown_tool", result=ToolResult.error(message), fail=fail, events=(event,)
    )


def check_bridge(
    ctx: AdmissionContext, call: ToolCall, offer: Offer
) -> tuple[ToolCall, tuple[Event, ...], Mapping[str, Any] | None] | Refused:
    """A call of the bridge ``tool_call(name, arguments)`` as the call of the deferred (or
    offered) tool it names, with those arguments (JSON text is parsed like any call's), and the
    bridge call's own arguments as read; every other call as it is (and None). A bridge call
    that names no tool, names itself, or has arguments that are not an object is refused,
    saying what it takes."""
    bridge = offer.tools.get(CALL_TOOL)
    if call.name != CALL_TOOL or bridge is None or not offer.reachable:
        return call, (), None
    parsed = check_parse(ctx, call, bridge)
    if isinstance(parsed, Refused):
        return parsed
    given, events = parsed
    target = given.get("name")
    inner = given.get("arguments")
    problem = None
    if not isinstance(target, str) or not target or target == CALL_TOOL:
        problem = f"'name' must be the name of another tool; got {_value(target)}"
    elif inner is not None and not isinstance(inner, Mapping | str):
        problem = f"'arguments' must be an object of {target}'s arguments; got {_value(inner)}"
    if problem is not None:
        listed = ", ".join(sorted(offer.reachable))
        return _refuse_arguments(
            ctx,
            call,
            name=CALL_TOOL,
            reason=problem,
            message=f"Invalid arguments for tool {CALL_TOOL}: {problem}. It calls: {listed}.",
            stop_detail=f"a call of {CALL_TOOL} named no tool to call",
            tool=bridge,
            events=events,
        )
    assert isinstance(target, str)
    if isinstance(inner, str):
        return ToolCall(id=call.id, name=target, raw_arguments=inner), events, given
    return ToolCall(id=call.id, name=target, arguments=dict(inner or {})), events, given


def as_read(
    sent: ToolCall,
    admitted: ToolCall,
    bridge: Mapping[str, Any] | None,
    arguments: Mapping[str, Any],
) -> ToolCall | None:
    """The model's call ``sent`` with the arguments admission read from its text, to record in
    the turn (and send back to the model) in its place; None when it came as a JSON object and
    is recorded as sent.

    Argument text that was repaired, or that only the relaxed parser read, is the object it was
    read as (``arguments``, as parsed, before validation), its text kept in
    ``raw_arguments``; a bridge call (``bridge``: its own arguments as read) has the object in
    its ``arguments`` when the inner arguments came as text. ``admitted`` is the call that went
    through admission (the inner call of a bridge call)."""
    inner = not admitted.is_valid
    if bridge is None:
        return attrs.evolve(sent, arguments=dict(arguments), invalid_reason=None) if inner else None
    if sent.is_valid and not inner:
        return None
    read = dict(bridge)
    if inner:
        read["arguments"] = dict(arguments)
    return attrs.evolve(sent, arguments=read, invalid_reason=None)


def _value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:80] + "…"


def check_parse(
    ctx: AdmissionContext, call: ToolCall, tool: Tool
) -> tuple[Mapping[str, Any], tuple[Event, ...]] | Refused:
    """The call's arguments as an object, parsed with the conservative repairs when they did not
    arrive as a JSON object."""
    if call.arguments is not None and call.invalid_reason is None:
        return call.arguments, ()
    raw = call.raw_arguments if call.raw_arguments is not None else ""
    try:
        # A server that does not hold the model to the arguments' grammar lets it write on.
        parsed = parse_arguments(raw, trailing_text=True)
    except (ValueError, TypeError) as exc:
        reason = getattr(exc, "reason", None) or str(exc)
        if call.invalid_reason and call.invalid_reason not in reason:
            # The adapter's reason (e.g. a prompted dialect's "the call is not closed")
            # often says more than a JSON parser's complaint about text that was never JSON.
            reason = f"{reason} ({call.invalid_reason})"
        return _refuse_arguments(
            ctx,
            call,
            name=tool.name,
            # The parser quotes the text, which may hold a sensitive value.
            reason="the text is not a JSON object (details withheld: the tool has "
            "sensitive arguments)"
            if tool.sensitive_arguments
            else reason,
            message=f"Could not parse the arguments of {tool.name} as a JSON object: "
            f"{reason}. Send the arguments as one JSON object matching the tool's "
            "parameters.",
            stop_detail=f"the arguments of a {tool.name} call could not be parsed",
            tool=tool,
        )
    event = InvalidArguments(
        run_id=ctx.run_id,
        round=ctx.round,
        call_id=call.id,
        name=tool.name,
        recovery="repaired",
        reason="repaired: " + (", ".join(parsed.repairs) or "re-parsed the text"),
    )
    return parsed.arguments, (event,)


def check_empty_text(
    ctx: AdmissionContext, call: ToolCall, tool: Tool, arguments: Mapping[str, Any]
) -> Refused | None:
    """Empty argument text (nothing, whitespace or ``null``) for a tool that takes parameters
    and is not read-only: refused, so the model sends its arguments, never run on its defaults
    alone. An explicit ``{}`` is a choice and runs; so does a call of a tool without parameters."""
    raw = call.raw_arguments
    if raw is None or arguments or raw.strip() not in ("", "null") or tool.policy.read_only:
        return None
    properties = tool.parameters.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return None
    defaults = {
        name: spec["default"]
        for name, spec in properties.items()
        if isinstance(spec, Mapping) and "default" in spec and name not in tool.sensitive_arguments
    }
    effects = ", ".join(tool.policy.risk)
    return _refuse_arguments(
        ctx,
        call,
        name=tool.name,
        reason="no argument text, for a tool that is not read-only",
        message=f"Not run: the call of {tool.name} came without any argument text, and "
        f"{tool.name} is not read-only ({effects}), so it is not run on its defaults alone. "
        "Send the arguments as a JSON object; to use the defaults, send them: "
        f"{json.dumps(defaults, ensure_ascii=False, default=str)}.",
        stop_detail=f"a {tool.name} call came without argument text",
        tool=tool,
        arguments=arguments,
    )


def check_validation(
    ctx: AdmissionContext, call: ToolCall, tool: Tool, arguments: Mapping[str, Any]
) -> Mapping[str, Any] | Refused:
    """The arguments validated against the tool's schema (defaults and coercions applied)."""
    try:
        return tool.validate(arguments)
    except ArgumentsInvalid as exc:
        return _refuse_arguments(
            ctx,
            call,
            name=tool.name,
            reason="; ".join(exc.problems),
            message=str(exc),
            stop_detail=f"the arguments of a {tool.name} call were invalid",
            tool=tool,
            arguments=arguments,
        )


def check_duplicate(
    ctx: AdmissionContext, call: ToolCall, tool: Tool, arguments: Mapping[str, Any]
) -> str | Refused | None:
    """The call's duplicate key (None when the tool allows duplicates), or its refusal when an
    identical call ran earlier in the run."""
    if tool.allow_duplicates:
        return None
    key = duplicate_key(tool, arguments)
    first = ctx.seen.get(key)
    if first is None:
        return key
    event = DuplicateSuppressed(
        run_id=ctx.run_id, round=ctx.round, call_id=call.id, name=tool.name, first_call_id=first
    )
    message = (
        f"Not run: this call is identical to call {first} earlier in this run "
        "(same tool, same arguments). Use that result instead of repeating it."
    )
    return Refused(
        outcome="duplicate",
        result=ToolResult.error(message),
        tool=tool,
        arguments=arguments,
        events=(event,),
    )


def check_approval(
    ctx: AdmissionContext, call: ToolCall, tool: Tool, arguments: Mapping[str, Any]
) -> tuple[Literal["approval", "external"], DeferredRequest] | None:
    """Whether the call waits for a decision: an external tool, any tool when
    ``[loop] execute_tools`` is off, or ``[policy]`` approval (unless approved already, or
    refused by the policy anyway, when asking first would be pointless)."""
    kind: Literal["approval", "external"] = "external"
    if tool.external:
        detail = f"{tool.name} is an external tool: the caller runs it and supplies the result"
    elif not ctx.loop.execute_tools:
        detail = (
            f"{tool.name} is not run here ([loop] execute_tools = false): the caller runs it "
            "and supplies the result"
        )
    else:
        if ctx.approved or ctx.refusal_reason(tool) is not None:
            return None
        reason = ctx.approval_reason(tool)
        if reason is None:
            return None
        detail, kind = reason, "approval"
    request = DeferredRequest(
        call_id=call.id,
        tool=tool.name,
        arguments=arguments,
        reason=kind,
        detail=detail,
        round=ctx.round,
    )
    return kind, request


def admit(call: ToolCall, offer: Offer, ctx: AdmissionContext) -> Verdict:
    """Admit one call, fail-closed: limits (when ``ctx.count``), the tool, parsing, empty text
    for a tool with side effects, validation, duplicates, then external tools and approval.
    Pure: the caller applies the verdict."""
    counted = False
    if ctx.count:
        limited = check_limits(ctx)
        if limited is not None:
            return limited
        counted = True
    sent = call
    bridged = check_bridge(ctx, call, offer)
    if isinstance(bridged, Refused):
        return attrs.evolve(bridged, counted=counted)
    call, unwrapped, bridge = bridged
    checked = check_tool(ctx, call, offer)
    if isinstance(checked, Refused):
        return attrs.evolve(checked, events=(*unwrapped, *checked.events), counted=counted)
    tool, events = checked
    events = (*unwrapped, *events)
    parsed = check_parse(ctx, call, tool)
    if isinstance(parsed, Refused):
        return attrs.evolve(parsed, events=(*events, *parsed.events), counted=counted)
    raw_arguments, repairs = parsed
    events = (*events, *repairs)
    read = as_read(sent, call, bridge, raw_arguments)
    empty = check_empty_text(ctx, call, tool, raw_arguments)
    if empty is not None:
        return attrs.evolve(empty, events=(*events, *empty.events), counted=counted, call=read)
    arguments = check_validation(ctx, call, tool, raw_arguments)
    if isinstance(arguments, Refused):
        events = (*events, *arguments.events)
        return attrs.evolve(arguments, events=events, counted=counted, call=read)
    key = check_duplicate(ctx, call, tool, arguments)
    if isinstance(key, Refused):
        return attrs.evolve(key, events=(*events, *key.events), counted=counted, call=read)
    decision = check_approval(ctx, call, tool, arguments)
    if decision is not None:
        reason, request = decision
        return NeedsDecision(
            reason=reason,
            request=request,
            tool=tool,
            arguments=arguments,
            key=key,
            events=events,
            # Within the limits, but counted only when it runs (approved), never when it waits.
            counted=False,
            call=read,
        )
    return Admitted(
        tool=tool, arguments=arguments, key=key, events=events, counted=counted, call=read
    )
