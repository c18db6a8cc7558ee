"""The offer of one round: which tools the model sees, their functions, and the system prompt."""

from __future__ import annotations

import enum
import functools
import inspect
import operator
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from .._contain import bounded, describe, is_cancellation, raised_by
from .._request import OfferRequest
from .._selection import Selection as Selection  # kept importable from here
from .._selection import first_reason
from .._selection import unfit as _unfit
from .._trust import TrustLevel
from ..events import (
    Event,
    PluginFailed,
    ToolOmitted,
    ToolResolutionCorrected,
    ToolsDeferred,
    ToolsPromoted,
)
from ..messages import Message
from ..tools._spec import FunctionSpec
from ._catalogue import NOTHING_REACHABLE, Arranged, SearchTools, arrange, budgeted

if TYPE_CHECKING:
    from ..adapters import ProviderAdapter
    from ..config import ToolsConfig
    from ..tools import Tool
    from ._protocol import LoopHost


class NotOffered(enum.Enum):
    """The type of :data:`NOT_OFFERED`."""

    NOT_OFFERED = "not offered"

    def __repr__(self) -> str:
        return "toolwire.NOT_OFFERED"


_SETTING = "[loop] hook_timeout"

NOT_OFFERED: Final = NotOffered.NOT_OFFERED
"""Returned by ``toolwire_resolve_function`` to withdraw a tool from one request and stop the
chain (None lets later implementations decide)."""


@attrs.frozen(kw_only=True)
class Offer:
    """What one round offers: the functions (sorted by tool name), the tools behind them by
    function name, the effective system prompt (base prompt plus tool instructions), and the
    deferred tools a call may still reach."""

    functions: tuple[FunctionSpec, ...] = ()
    tools: Mapping[str, Tool] = attrs.field(factory=dict)
    system_prompt: str | None = None
    reachable: Mapping[str, Tool] = NOTHING_REACHABLE
    """The tools the round defers (large catalogues), by function name: not offered, but
    called through the ``tool_call`` bridge (or by name)."""

    @functools.cached_property
    def names(self) -> tuple[str, ...]:
        """The offered function names, in offer order (worked out once: a kept offer serves many
        rounds)."""
        return tuple(f.name for f in self.functions)


@attrs.frozen
class _Plan:
    """What a round offers when no plugin takes part in resolving it, worked out once.

    ``entries`` holds, in offer order, each candidate with its function spec, the reason it is
    left out, or None for a tool with a resolver (a context tool), resolved every round.
    ``budgeted`` says whether ``[tools]`` lets the catalogue defer tools (else every round
    offers what it resolved, and :func:`~toolwire.loop._catalogue.arrange` is not asked).
    """

    key: tuple[Any, ...]
    tools: Mapping[str, Tool]
    entries: tuple[tuple[Tool, FunctionSpec | str | None], ...]
    functions: tuple[FunctionSpec, ...]
    tools_by_name: Mapping[str, Tool]
    dynamic: bool
    omitted: bool
    budgeted: bool


class OfferCache:
    """The offer of the last round, reused while nothing that decides it has changed.

    It applies when only the built-in ``toolwire_resolve_function`` and
    ``toolwire_system_prompt_instructions`` are registered (a plugin's implementation may answer
    differently every round, so then every round is resolved). What each tool offers is worked
    out once and kept while the host's tool mapping is the same object (the registry makes a
    new one whenever a tool is added or removed, as after an MCP server's ``list_changed``) and
    the selection, the provider's trust, the adapter's API and name limit, the base system
    prompt and ``[tools]`` are equal. Tools with a resolver (context tools) are still asked
    every round, with that round's request: what the request says (the run's values, the tool
    its tool choice names) reaches them, so a run that names a tool never gets the kept answer
    of one that named another, or none. While the offered specs are the very same objects, the
    previous :class:`Offer` object is returned, so adapters can keep their rendering of it.
    """

    def __init__(self) -> None:
        self._plan: _Plan | None = None
        self._offer: Offer | None = None
        self._offer_prompt: str | None = None
        # The last round's resolved entries (context tools' answers included), and the
        # functions and tools made of them.
        self._resolved: tuple[list[FunctionSpec | str], tuple[FunctionSpec, ...], dict[str, Tool]]
        self._resolved = ([], (), {})
        self.search = SearchTools()  # the catalogue's sizes and tool_search, kept between rounds

    def clear(self) -> None:
        """Forget the kept offer: the next round is worked out from scratch."""
        self._plan = None
        self._offer = None
        self._resolved = ([], (), {})

    def plan_for(
        self,
        tools: Mapping[str, Tool],
        selection: Selection,
        trust: TrustLevel,
        api: str,
        max_name: int,
        base_system_prompt: str | None,
        config: ToolsConfig,
    ) -> _Plan:
        """The kept plan when it was made for these, else a new one."""
        key = (selection, trust, api, max_name, base_system_prompt, config)
        plan = self._plan
        if plan is not None and plan.tools is tools and plan.key == key:
            return plan
        entries: list[tuple[Tool, FunctionSpec | str | None]] = []
        for tool in selection.candidates(tools):
            reason = _unfit(tool, trust, max_name, api)
            if reason is not None:
                entries.append((tool, reason))
            elif tool.resolver is not None:
                entries.append((tool, None))
            else:
                spec = tool.function_spec()
                entries.append(
                    (tool, spec if spec.tool is not None else attrs.evolve(spec, tool=tool))
                )
        functions = tuple(e for _, e in entries if isinstance(e, FunctionSpec))
        plan = _Plan(
            key=key,
            tools=tools,
            entries=tuple(entries),
            functions=functions,
            tools_by_name={
                spec.name: tool for tool, spec in entries if isinstance(spec, FunctionSpec)
            },
            dynamic=any(e is None for _, e in entries),
            omitted=any(isinstance(e, str) for _, e in entries),
            budgeted=budgeted(config),
        )
        self._plan, self._offer = plan, None
        self._resolved = ([], (), {})
        return plan

    def resolved(
        self, plan: _Plan, entries: list[FunctionSpec | str]
    ) -> tuple[tuple[FunctionSpec, ...], dict[str, Tool]]:
        """The functions and tools of a round whose plan's ``entries`` resolved as given (a
        spec, or why the tool is left out): the last round's very objects when every entry is
        the one it was then (a context tool's resolver usually answers with the tool's own
        spec), so the kept offer is found by identity."""
        last, functions, tools = self._resolved
        if len(last) == len(entries) and all(map(operator.is_, last, entries)):
            return functions, tools
        functions = tuple(e for e in entries if isinstance(e, FunctionSpec))
        tools = {
            entry.name: tool
            for (tool, _), entry in zip(plan.entries, entries, strict=True)
            if isinstance(entry, FunctionSpec)
        }
        self._resolved = (entries, functions, tools)
        return functions, tools

    def offer_for(
        self,
        functions: tuple[FunctionSpec, ...],
        tools: Mapping[str, Tool],
        base_system_prompt: str | None,
        reachable: Mapping[str, Tool] = NOTHING_REACHABLE,
    ) -> Offer:
        """The kept offer when it has these very specs, else a new one (kept from now on)."""
        offer = self._offer
        if (
            offer is not None
            and self._offer_prompt == base_system_prompt
            and offer.reachable is reachable
            and (offer.functions is functions or _same(offer.functions, functions))
            and (
                offer.tools is tools
                or all(offer.tools[spec.name] is tools[spec.name] for spec in functions)
            )
        ):
            return offer
        instructions = [
            text.strip()
            for spec in functions
            if isinstance(text := tools[spec.name].instructions, str) and text.strip()
        ]
        offer = Offer(
            functions=functions,
            tools=tools,
            system_prompt=_system_prompt(base_system_prompt, instructions),
            reachable=reachable,
        )
        self._offer, self._offer_prompt = offer, base_system_prompt
        return offer


def _same(kept: tuple[FunctionSpec, ...], functions: tuple[FunctionSpec, ...]) -> bool:
    """Whether two tuples of specs hold the very same specs, in order."""
    return len(kept) == len(functions) and all(map(operator.is_, kept, functions))


async def resolve_offer(
    host: LoopHost,
    adapter: ProviderAdapter,
    selection: Selection,
    *,
    run_id: str,
    round: int,
    messages: tuple[Message, ...],
    base_system_prompt: str | None,
    provider_trust: TrustLevel,
    emit: Callable[[Event], None],
    cache: OfferCache | None = None,
    values: Mapping[str, Any] | None = None,
    chosen_tool: str | None = None,
) -> Offer:
    """Resolve one round's offer (DESIGN §5 steps 1 and 2).

    Candidates are checked against the adapter's tool-name limit and the provider's trust level,
    then each is resolved through ``toolwire_resolve_function`` (an awaitable answer is awaited);
    a tool whose resolution raises, returns None or :data:`NOT_OFFERED` is left out alone, with a
    :class:`~toolwire.events.ToolOmitted` event. The instructions of the offered tools
    (``toolwire_system_prompt_instructions``) follow the base prompt in the same order; a tool
    whose instructions implementation raises is left out of the request (``PluginFailed`` and
    ``ToolOmitted``): without its instructions it might be misused.

    With a ``cache`` (see :class:`OfferCache`) the same answers and events come from the kept
    offer while nothing that decides them changed. ``values`` are the run's own
    (``OfferRequest.values``), and ``chosen_tool`` the tool its tool choice names
    (``OfferRequest.chosen_tool``, every round of the run): the resolvers are told, and whether
    they offer it is theirs to say.
    """
    request_for = _offer_requests(
        host,
        adapter,
        run_id,
        round,
        messages,
        provider_trust,
        values if values is not None else {},
        chosen_tool,
    )
    pipeline = host.pipeline
    if cache is not None and pipeline.direct_resolve and pipeline.direct_instructions:
        return await _cached_offer(
            cache,
            host,
            adapter,
            selection,
            run_id=run_id,
            round=round,
            messages=messages,
            base_system_prompt=base_system_prompt,
            provider_trust=provider_trust,
            emit=emit,
            request_for=request_for,
        )
    return await _uncached_offer(
        host,
        adapter,
        selection,
        run_id,
        round,
        messages,
        base_system_prompt,
        provider_trust,
        emit,
        request_for,
    )


async def _uncached_offer(
    host: LoopHost,
    adapter: ProviderAdapter,
    selection: Selection,
    run_id: str,
    round: int,
    messages: tuple[Message, ...],
    base_system_prompt: str | None,
    provider_trust: TrustLevel,
    emit: Callable[[Event], None],
    request_for: Callable[[Tool], OfferRequest],
) -> Offer:
    """:func:`resolve_offer` asking every hook implementation, every round."""
    functions, tools, requests = await _resolve_each(
        host, adapter, selection, run_id, round, provider_trust, emit, request_for
    )
    kept = _arranged(host, functions, tools, messages, SearchTools(), run_id, round, emit)
    if kept.deferred:
        asked = {spec.name: request for spec, request in zip(functions, requests, strict=True)}
        requests = [asked.get(spec.name, requests[0]) for spec in kept.functions]
        functions, tools = list(kept.functions), dict(kept.tools)
    instructions, failed = await _instructions(
        host,
        tools,
        functions,
        requests,
        direct=host.pipeline.direct_instructions,
        emit=emit,
        bound=host.config.loop.hook_timeout,
    )
    for name, reason in failed.items():
        # A tool without its instructions may be misused: it is left out of this request.
        emit(ToolOmitted(run_id=run_id, round=round, tool=name, reason=reason))
        del tools[name]
    return Offer(
        functions=tuple(spec for spec in functions if spec.name not in failed),
        tools=tools,
        system_prompt=_system_prompt(base_system_prompt, instructions),
        reachable=kept.reachable,
    )


async def _resolve_each(
    host: LoopHost,
    adapter: ProviderAdapter,
    selection: Selection,
    run_id: str,
    round: int,
    provider_trust: TrustLevel,
    emit: Callable[[Event], None],
    request_for: Callable[[Tool], OfferRequest],
) -> tuple[list[FunctionSpec], dict[str, Tool], list[OfferRequest]]:
    """Each candidate resolved for this round (``toolwire_resolve_function``, or the tool
    itself when only the built-in implementation is registered: same answers, no hook machinery
    per tool and round); the ones left out reported with ``ToolOmitted``."""
    resolve = _resolver(
        host.hook.toolwire_resolve_function,
        direct=host.pipeline.direct_resolve,
        emit=emit,
        bound=host.config.loop.hook_timeout,
    )
    max_name = adapter.capabilities.max_tool_name_length
    functions: list[FunctionSpec] = []
    tools: dict[str, Tool] = {}
    requests: list[OfferRequest] = []
    for tool in selection.candidates(host.tools):
        spec: FunctionSpec | str | None = _unfit(tool, provider_trust, max_name, adapter.api)
        if spec is None:
            request = request_for(tool)
            spec = await resolve(tool, request)
        if not isinstance(spec, FunctionSpec):
            emit(ToolOmitted(run_id=run_id, round=round, tool=tool.name, reason=spec))
            continue
        functions.append(spec if spec.tool is not None else attrs.evolve(spec, tool=tool))
        tools[spec.name] = tool
        requests.append(request)
    return functions, tools, requests


async def _cached_offer(
    cache: OfferCache,
    host: LoopHost,
    adapter: ProviderAdapter,
    selection: Selection,
    *,
    run_id: str,
    round: int,
    messages: tuple[Message, ...],
    base_system_prompt: str | None,
    provider_trust: TrustLevel,
    emit: Callable[[Event], None],
    request_for: Callable[[Tool], OfferRequest],
) -> Offer:
    """:func:`resolve_offer` with only the built-in resolution, from the kept plan: only the
    context tools are asked, and only tools left out are reported, every round."""
    capabilities = adapter.capabilities
    config = host.config
    plan = cache.plan_for(
        host.tools,
        selection,
        provider_trust,
        adapter.api,
        capabilities.max_tool_name_length,
        base_system_prompt,
        config.tools,
    )
    functions: tuple[FunctionSpec, ...] = plan.functions
    tools: Mapping[str, Tool] = plan.tools_by_name
    if plan.dynamic or plan.omitted:
        resolve = _resolver(
            host.hook.toolwire_resolve_function,
            direct=True,
            emit=emit,
            bound=config.loop.hook_timeout,
        )
        entries: list[FunctionSpec | str] = []
        requests: dict[str | None, OfferRequest] = {}  # by plugin: only the settings differ
        for tool, entry in plan.entries:
            if entry is None:
                request = requests.get(tool.plugin)
                if request is None:
                    request = requests[tool.plugin] = request_for(tool)
                entry = await resolve(tool, request)
                if isinstance(entry, FunctionSpec) and entry.tool is None:
                    entry = attrs.evolve(entry, tool=tool)
            if not isinstance(entry, FunctionSpec):
                emit(ToolOmitted(run_id=run_id, round=round, tool=tool.name, reason=entry))
            entries.append(entry)
        functions, tools = cache.resolved(plan, entries)
    if not plan.budgeted:
        return cache.offer_for(functions, tools, base_system_prompt)
    kept = _arranged(host, functions, tools, messages, cache.search, run_id, round, emit)
    return cache.offer_for(kept.functions, kept.tools, base_system_prompt, kept.reachable)


def _arranged(
    host: LoopHost,
    functions: Sequence[FunctionSpec],
    tools: Mapping[str, Tool],
    messages: tuple[Message, ...],
    search: SearchTools,
    run_id: str,
    round: int,
    emit: Callable[[Event], None],
) -> Arranged:
    """The round's functions within the catalogue budget (``loop/_catalogue.py``), with the
    events saying what was deferred and what ``tool_search`` promoted."""
    arranged = arrange(functions, tools, messages, host.config.tools, search)
    if arranged.promoted:
        emit(ToolsPromoted(run_id=run_id, round=round, tools=arranged.promoted))
    if arranged.deferred:
        emit(
            ToolsDeferred(
                run_id=run_id, round=round, tools=arranged.deferred, reason=arranged.reason
            )
        )
    return arranged


async def why_not_offered(
    host: LoopHost,
    selection: Selection,
    name: str,
    request: OfferRequest,
    *,
    max_name: int,
    emit: Callable[[Event], None],
) -> str | None:
    """The first reason the offer would leave the tool ``name`` out of ``request``, or None when
    it would offer it: the same checks as :func:`resolve_offer`, in its order (the selection,
    then trust and name length, then ``toolwire_resolve_function``)."""
    tool = host.tools.get(name)
    if tool is None:
        known = ", ".join(host.tools) or "none are registered"
        return f"no tool named {name!r} is registered; registered tools: {known}"
    reason = first_reason(selection, tool, request.provider_trust, max_name, request.api)
    if reason is not None:
        return reason
    resolve = _resolver(
        host.hook.toolwire_resolve_function,
        direct=host.pipeline.direct_resolve,
        emit=emit,
        bound=host.config.loop.hook_timeout,
    )
    spec = await resolve(tool, request)
    return spec if isinstance(spec, str) else None


def _offer_requests(
    host: LoopHost,
    adapter: ProviderAdapter,
    run_id: str,
    round: int,
    messages: tuple[Message, ...],
    provider_trust: TrustLevel,
    values: Mapping[str, Any],
    chosen_tool: str | None,
) -> Callable[[Tool], OfferRequest]:
    """What the resolution of each tool learns about this round: the round's facts, and the
    settings of the tool's plugin (None when the host cannot structure them), the one part that
    differs from tool to tool."""

    def request_for(tool: Tool) -> OfferRequest:
        try:
            settings = host.plugin_settings(tool.plugin)
        except Exception:
            settings = None
        return OfferRequest(
            run_id=run_id,
            round=round,
            messages=messages,
            api=adapter.api,
            model=host.config.provider.model,
            provider_trust=provider_trust,
            native_tools=adapter.capabilities.native_tools,
            settings=settings,
            values=values,
            chosen_tool=chosen_tool,
        )

    return request_for


def _plugin_failed(
    hook: Any, name: str, exc: BaseException, request: OfferRequest, tool: Tool, what: str
) -> PluginFailed:
    """The report of a hook implementation that raised while the offer was resolved, naming the
    plugin that raised (the tool's own plugin when no frame of an implementation shows)."""
    impls = hook.get_hookimpls() if hasattr(hook, "get_hookimpls") else ()
    plugin = raised_by(exc, impls) or tool.plugin or ""
    return PluginFailed(
        run_id=request.run_id,
        round=request.round,
        plugin=plugin,
        hook=name,
        error=f"{what} of tool {tool.name!r} left out: {describe(exc)}",
    )


def _resolver(
    hook: Callable[..., Any], *, direct: bool, emit: Callable[[Event], None], bound: float
) -> Callable[[Tool, OfferRequest], Awaitable[FunctionSpec | str]]:
    """Resolve one tool for a request: its function spec, or why it is left out."""

    async def resolve(tool: Tool, request: OfferRequest) -> FunctionSpec | str:
        try:
            spec: Any = tool.resolve(request) if direct else hook(tool=tool, request=request)
            if type(spec) is not FunctionSpec and inspect.isawaitable(spec):
                spec = await bounded(spec, "toolwire_resolve_function", bound, _SETTING)
        except BaseException as exc:
            # SystemExit, KeyboardInterrupt and the like cost only this tool's offer.
            if is_cancellation(exc):
                raise
            emit(_plugin_failed(hook, "toolwire_resolve_function", exc, request, tool, "offer"))
            return f"toolwire_resolve_function raised {describe(exc)}"
        if spec is None or spec is NOT_OFFERED:
            return (
                "nothing to offer for this request (toolwire_resolve_function "
                f"returned {'NOT_OFFERED' if spec is NOT_OFFERED else 'None'})"
            )
        if not isinstance(spec, FunctionSpec):
            return f"toolwire_resolve_function returned {type(spec).__name__}, not a FunctionSpec"
        if spec.tool is tool and spec.name == tool.name and spec.strict == tool.strict:
            return spec  # the usual answer: the tool's own spec, asked every round
        return _as_registered(tool, spec, request, emit)

    return resolve


def _as_registered(
    tool: Tool, spec: FunctionSpec, request: OfferRequest, emit: Callable[[Event], None]
) -> FunctionSpec:
    """``spec`` under ``tool``'s registered name and strict mode: only the description and the
    parameters of a resolution count. What a resolution changed is put back, with a
    ``ToolResolutionCorrected`` event (a strict mode of None leaves the registered one)."""
    changes: list[str] = []
    if spec.name != tool.name:
        changes.append(f"name {spec.name!r} kept as {tool.name!r}")
    if spec.strict is not None and spec.strict != tool.strict:
        changes.append(f"strict {spec.strict!r} kept as {tool.strict!r}")
    if changes:
        emit(
            ToolResolutionCorrected(
                run_id=request.run_id, round=request.round, tool=tool.name, changes=tuple(changes)
            )
        )
    if changes or spec.strict != tool.strict or (spec.tool is not None and spec.tool is not tool):
        return attrs.evolve(spec, name=tool.name, strict=tool.strict, tool=tool)
    return spec


async def _instructions(
    host: LoopHost,
    tools: Mapping[str, Tool],
    functions: list[FunctionSpec],
    requests: list[OfferRequest],
    *,
    direct: bool,
    emit: Callable[[Event], None],
    bound: float,
) -> tuple[list[str], dict[str, str]]:
    """The offered tools' instructions in offer order, and the tools whose implementation raised
    (by name, with the reason): each of those costs only its own tool, with a ``PluginFailed``
    event, and is left out of the request by the caller."""
    instructions: list[str] = []
    failed: dict[str, str] = {}
    instruct = host.hook.toolwire_system_prompt_instructions
    for spec, request in zip(functions, requests, strict=True):
        tool = tools[spec.name]
        try:
            text: Any = tool.instructions if direct else instruct(tool=tool, request=request)
            if inspect.isawaitable(text):
                text = await bounded(text, "toolwire_system_prompt_instructions", bound, _SETTING)
        except BaseException as exc:
            if is_cancellation(exc):
                raise
            emit(
                _plugin_failed(
                    instruct,
                    "toolwire_system_prompt_instructions",
                    exc,
                    request,
                    tool,
                    "instructions",
                )
            )
            failed[spec.name] = f"toolwire_system_prompt_instructions raised {describe(exc)}"
            continue
        if isinstance(text, str) and text.strip():
            instructions.append(text.strip())
    return instructions, failed


def _system_prompt(base: str | None, instructions: list[str]) -> str | None:
    """The base prompt followed by the offered tools' instructions."""
    if not instructions:
        return base
    return "\n\n".join([base, *instructions] if base else instructions)
