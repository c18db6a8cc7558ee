"""``Tool`` and its policy: the definition every provider is offered and the host runs.

A tool comes from a typed function (``@tool`` / ``Tool.from_function``), from a toolbox method, or
from an explicit JSON Schema with a handler (``Tool.from_schema``). The parameter schema of a
function tool is ``{"type": "object", "properties": …, "required": […],
"additionalProperties": false}``: an argument the function does not take is refused with the list
of valid ones, rather than dropped, so a misspelt argument never silently loses its value.
"""

from __future__ import annotations

import contextvars
import enum
import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeAlias, TypeVar, overload

import attrs

from .._effects import READ_ONLY_EFFECTS, RISK_ORDER, SideEffect
from .._fieldwise import record_eq, record_hash, record_repr
from .._trust import TrustLevel, declared_level
from ._context import Inject, ToolContext
from ._docstrings import ParsedDocstring, parse_docstring
from ._errors import (
    ArgumentsInvalid,
    CallInterrupt,
    InjectionMissing,
    ToolDefinitionError,
    result_for,
)
from ._names import validate_tool_name
from ._result import ToolResult
from ._schemacheck import check_parameter_schema
from ._spec import FunctionSpec
from ._typeschema import (
    SchemaBuilder,
    annotated_description,
    function_hints,
    is_union,
    json_default,
    strip_annotated,
)
from ._validation import ArgumentValidator, json_text

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from .._request import OfferRequest
    from ._strict import StrictProjection

_T = TypeVar("_T")
MaybeAwaitable: TypeAlias = "_T | Awaitable[_T]"
"""A value, or an awaitable of it (what an ``async def`` returns)."""

Resolver = Callable[["Tool", "OfferRequest"], "MaybeAwaitable[FunctionSpec | None]"]
"""A context tool's resolver: the function it offers to one request, or None for nothing (or an
awaitable of it: a resolver may be ``async def``)."""

SchemaHandler = Callable[..., Any]
"""An explicit-schema tool's handler: ``handler(arguments)``, or
``handler(arguments, context: ToolContext)`` (the context goes by annotation)."""


class Activation(enum.StrEnum):
    """How a tool reaches a round's offer.

    ``selected``: offered whenever config selects it. ``context``: offers itself from the
    conversation through its resolver (for example a page reader only once a URL was mentioned).
    """

    SELECTED = "selected"
    CONTEXT = "context"


def _side_effects(value: Iterable[SideEffect | str] | str | None) -> frozenset[SideEffect] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value)
    out = set()
    for item in items:
        try:
            out.add(SideEffect(item))
        except ValueError:
            valid = ", ".join(s.value for s in SideEffect)
            raise ToolDefinitionError(
                f"unknown side effect {item!r}; valid side effects: {valid}"
            ) from None
    return frozenset(out)


def _check_optional_positive(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ToolDefinitionError(
            f"{attribute.name} must be a positive number or None; got {value!r}"
        )


def _check_retries(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ToolDefinitionError(f"max_retries must be an integer >= 0; got {value!r}")


@attrs.frozen(kw_only=True)
class ToolPolicy:
    """How the host treats calls of a tool.

    ``side_effects`` None means unclassified (treated as the most cautious class by approval
    policies). ``timeout`` is in seconds; ``max_result_bytes`` truncates the text the model gets;
    ``max_retries`` retries a failed call marked retryable; ``sequential`` makes the call a barrier
    when a turn's calls run concurrently.

    ``inline`` runs a sync function on the event loop's thread instead of a worker thread, which
    saves the thread hand-off of every call (several context switches). It is for a function
    that is fast and bounded by its own limits whatever the arguments (a calculator that caps its
    input): while it runs nothing else of the process runs, and it cannot be stopped at a timeout
    or cancelled midway (``[loop] tool_timeout`` and the run's deadline do not bound it). A tool
    with a ``timeout`` of its own, an async function and an external tool cannot set it.
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    side_effects: frozenset[SideEffect] | None = attrs.field(default=None, converter=_side_effects)
    idempotent: bool = False
    requires_approval: bool = False
    timeout: float | None = attrs.field(default=None, validator=_check_optional_positive)
    max_result_bytes: int | None = attrs.field(default=None, validator=_check_optional_positive)
    max_retries: int = attrs.field(default=0, validator=_check_retries)
    sequential: bool = False
    inline: bool = False

    @property
    def read_only(self) -> bool:
        """True when the tool declares that it changes nothing (``read_only``, perhaps with
        ``reads_files``)."""
        effects = self.side_effects
        if not effects:
            return False
        return SideEffect.READ_ONLY in effects and effects <= READ_ONLY_EFFECTS

    @property
    def risk(self) -> tuple[str, ...]:
        """The declared side effects for people, gravest first (``("unclassified",)`` when the
        tool declares none): what a tool-call card shows."""
        if self.side_effects is None:
            return ("unclassified",)
        return tuple(e.value for e in RISK_ORDER if e in self.side_effects)


def _activation(value: Activation | str) -> Activation:
    try:
        return Activation(value)
    except ValueError:
        valid = ", ".join(a.value for a in Activation)
        raise ToolDefinitionError(f"unknown activation {value!r}; valid: {valid}") from None


def _trust(value: TrustLevel | str | int | None) -> TrustLevel | None:
    if value is None:
        return None
    try:
        # A tool may be made before the host whose [trust] levels it names: the host checks
        # a level its own scheme lacks when it registers the tool.
        return declared_level(value)
    except ValueError as exc:
        raise ToolDefinitionError(f"min_provider_trust: {exc}") from None


def _check_parameters(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, Mapping):
        raise ToolDefinitionError(
            f"parameters must be a JSON Schema object (a mapping); got {type(value).__name__}"
        )
    check_parameter_schema(value, f"tool {instance.name}")


def _name_tuple(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _name_set(value: Iterable[str]) -> frozenset[str]:
    if isinstance(value, str):
        raise ToolDefinitionError(f"give argument names as a list, not the string {value!r}")
    return frozenset(value)


def _requirements(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        raise ToolDefinitionError(
            f"give required tools as a list of names, not the string {value!r}"
        )
    names: list[str] = []
    for name in value:
        if not isinstance(name, str) or not name:
            raise ToolDefinitionError(f"requires: {name!r} is not a tool name")
        if name not in names:
            names.append(name)
    return tuple(names)


@attrs.frozen(kw_only=True)
class ToolOptions:
    """The options of a tool, one record for ``@tool(...)``, :meth:`Tool.from_function` and
    :meth:`Tool.from_schema`: each takes them as keywords (``requires_approval=True``) or whole
    (``options=ToolOptions(...)``, keywords given beside it change its fields).

    - ``title``: the tool's name for people; ``icon``: a short text (an emoji or a few
      characters) shown beside it, never sent to a model.
    - ``description_for_model``: what the model reads instead of the description.
    - ``strict``: None lets each adapter decide, False never sends the schema strict.
    - ``instructions``: system-prompt text sent while the tool is offered, kept out of the
      description.
    - ``activation``: ``selected``, or ``context`` with a ``resolver`` that offers the tool only
      when a request calls for it.
    - ``policy``: a whole :class:`ToolPolicy`; the shortcuts ``side_effects``, ``idempotent``,
      ``requires_approval``, ``timeout``, ``max_result_bytes``, ``max_retries``, ``sequential``
      and ``inline`` change its matching field (None leaves it).
    - ``allow_duplicates``: run a call identical to an earlier one of the run again.
    - ``sensitive_arguments``: argument names whose values are redacted in events, traces and
      refusals.
    - ``returns_untrusted_content``: results go through the untrusted-content filter.
    - ``min_provider_trust``: the least trusted provider the tool is offered to.
    - ``requires``: the tools this one needs to be useful (selected with it).
    - ``path_arguments``: argument names that are file system paths, checked against the
      workspace before the tool runs.
    - ``background_safe``: whether a call may run with nobody watching (None: only a read-only
      tool that asks for no approval).
    - ``external``: schema only; the caller runs it and the run ends ``deferred`` at its calls.
    - ``plugin``: the plugin that registers the tool (set by the host).
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    title: str | None = None
    icon: str | None = None
    description_for_model: str | None = None
    strict: bool | None = None
    instructions: str | None = None
    activation: Activation = attrs.field(default=Activation.SELECTED, converter=_activation)
    resolver: Resolver | None = None
    policy: ToolPolicy | None = None
    side_effects: frozenset[SideEffect] | None = attrs.field(default=None, converter=_side_effects)
    idempotent: bool | None = None
    requires_approval: bool | None = None
    timeout: float | None = None
    max_result_bytes: int | None = None
    max_retries: int | None = None
    sequential: bool | None = None
    inline: bool | None = None
    allow_duplicates: bool = False
    sensitive_arguments: frozenset[str] = attrs.field(default=frozenset(), converter=_name_set)
    returns_untrusted_content: bool = False
    min_provider_trust: TrustLevel | None = attrs.field(default=None, converter=_trust)
    requires: tuple[str, ...] = attrs.field(default=(), converter=_requirements)
    path_arguments: frozenset[str] = attrs.field(default=frozenset(), converter=_name_set)
    background_safe: bool | None = None
    external: bool = False
    plugin: str | None = None

    def _tool_policy(self) -> ToolPolicy:
        """``policy`` (default: the empty one) with the shortcuts given applied."""
        changes = {
            name: value for name in _POLICY_SHORTCUTS if (value := getattr(self, name)) is not None
        }
        if self.policy is None:
            return ToolPolicy(**changes) if changes else _NO_POLICY
        return attrs.evolve(self.policy, **changes) if changes else self.policy

    def _tool_fields(self) -> dict[str, Any]:
        """The :class:`Tool` fields these options set."""
        return {name: getattr(self, name) for name in _TOOL_FIELDS} | {
            "policy": self._tool_policy()
        }


_POLICY_SHORTCUTS = (
    "side_effects",
    "idempotent",
    "requires_approval",
    "timeout",
    "max_result_bytes",
    "max_retries",
    "sequential",
    "inline",
)
_NO_POLICY = ToolPolicy()
_OPTION_NAMES = frozenset(a.name for a in attrs.fields(ToolOptions))
_TOOL_FIELDS = tuple(sorted(_OPTION_NAMES - {"policy", *_POLICY_SHORTCUTS}))


def _options(options: ToolOptions | None, keywords: Mapping[str, Any], owner: str) -> ToolOptions:
    """``options`` (default: none set) with the option ``keywords`` applied, refusing a keyword
    that is no option."""
    unknown = sorted(set(keywords) - _OPTION_NAMES)
    if unknown:
        raise TypeError(
            f"{owner}: {', '.join(map(repr, unknown))} is not a tool option; the options: "
            f"{', '.join(sorted(_OPTION_NAMES))}"
        )
    if options is None:
        return ToolOptions(**keywords)
    return attrs.evolve(options, **keywords) if keywords else options


def _empty_parameters() -> dict[str, Any]:
    return {"type": "object", "properties": {}, "additionalProperties": False}


# -- running functions -------------------------------------------------------------------------

_EMPTY = inspect.Parameter.empty
_POSITIONAL_ONLY = inspect.Parameter.POSITIONAL_ONLY


# The two records below are named tuples, not attrs classes: each attrs class costs a compile of
# its generated methods at every start, and these are private.
class _Param(NamedTuple):
    name: str
    positional_only: bool
    annotation: Any
    hidden: Literal["context", "inject"] | None
    key: str | None
    default: Any


def _is_async(function: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(function):
        return True
    if inspect.isfunction(function) or inspect.ismethod(function):
        return False
    try:
        call = type(function).__call__
    except AttributeError:
        return False
    return inspect.iscoroutinefunction(call)


# What tools return most, none of it awaitable: ``inspect.isawaitable`` is asked only about the
# rest (it goes through the ``Awaitable`` ABC's Python-level check).
_NEVER_AWAITABLE = frozenset({str, dict, list, int, float, bool, type(None), ToolResult})


async def _run(
    function: Callable[..., Any], is_async: bool, inline: bool, /, *args: Any, **kwargs: Any
) -> Any:
    """Call ``function``: awaited when async, else in a worker thread, or on this thread when
    ``inline`` (the policy's ``inline``); an awaitable a sync function returns is awaited. The
    three leading parameters are positional-only, so a tool's own parameter may bear their
    names.

    Inline, the call runs as :func:`run_in_thread` runs it in a worker: in a copy of the
    caller's context variables (what the call sets stays its own), a ``GeneratorExit`` or
    ``StopIteration`` raised as it would come out of a worker."""
    if is_async:
        return await function(*args, **kwargs)
    if inline:
        try:
            result = contextvars.copy_context().run(_in_worker, function, *args, **kwargs)
        except _WorkerExit as exc:
            raise exc.raised from None
    else:
        result = await run_in_thread(functools.partial(function, *args, **kwargs))
    if type(result) not in _NEVER_AWAITABLE and inspect.isawaitable(result):
        result = await result
    return result


async def run_in_thread(call: Callable[[], _T], *, executor: Executor | None = None) -> _T:
    """Run ``call()`` in a worker thread, as the host runs a sync tool, and return its value.

    ``executor`` runs it instead of the event loop's default thread pool: a
    ``ThreadPoolExecutor(max_workers=1)`` of its own keeps every call of a tool on one thread,
    for objects that belong to the thread that made them (a ``sqlite3`` connection). The
    caller's context variables are copied into the thread, as ``asyncio.to_thread`` does. An
    exception ``call`` raises is raised here, even the ``GeneratorExit`` or ``StopIteration``
    an asyncio future cannot carry (which would stall the call); a ``StopIteration`` arrives as
    the ``RuntimeError`` any coroutine raising it gives.

    **Example**::

        db_thread = ThreadPoolExecutor(max_workers=1)
        connection = db_thread.submit(sqlite3.connect, "notes.db").result()
        rows = await run_in_thread(
            lambda: connection.execute("select 1").fetchall(), executor=db_thread
        )
    """
    import asyncio  # deferred: declaring tools must not need an event loop library

    context = contextvars.copy_context()
    try:
        result: _T = await asyncio.get_running_loop().run_in_executor(
            executor, context.run, _in_worker, call
        )
    except _WorkerExit as exc:
        raise exc.raised from None
    return result


class _WorkerExit(Exception):
    """Carries a ``GeneratorExit`` or ``StopIteration`` out of a worker thread. Thrown into the
    awaiting task as it is, a ``GeneratorExit`` would close every coroutine of the task and leave
    the run at its outermost frame; an asyncio future refuses a ``StopIteration``, so the call
    would never finish. Raised again in the coroutine, a ``StopIteration`` becomes the
    ``RuntimeError`` an async tool raising it gets."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__(type(raised).__name__)
        self.raised = raised


def _in_worker(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    try:
        return function(*args, **kwargs)
    except (GeneratorExit, StopIteration) as exc:
        raise _WorkerExit(exc) from None


class _Unset:
    pass


_UNSET: Any = _Unset()

_CONTEXT_ATTRIBUTES = frozenset(
    {"tool", "call_id", "run_id", "round", "messages", "settings", "provider_trust"}
    | {"services", "progress", "cancelled"}
)


class _FastPlan(NamedTuple):
    names: frozenset[str]
    hooked: tuple[tuple[str, Callable[[Any], Any]], ...]
    required: tuple[str, ...]


class _FunctionRunner:
    """Calls a Python function with structured arguments and injected values."""

    __slots__ = (
        "_fast",
        "_hooks",
        "function",
        "hidden_names",
        "is_async",
        "method",
        "params",
        "reads_context",
    )

    def __init__(
        self, function: Callable[..., Any], params: tuple[_Param, ...], *, method: bool = False
    ) -> None:
        self.function = function
        self.params = params
        self.method = method
        self.is_async = _is_async(function)
        self.hidden_names = tuple(p.name for p in params if p.hidden)
        self.reads_context = bool(self.hidden_names)  # the context, or services found in it
        self._hooks: tuple[Callable[[Any], Any] | None, ...] | None = None
        self._fast: _FastPlan | None = None

    def bind(self, instance: object) -> _FunctionRunner:
        bound = self.function.__get__(instance, type(instance))
        return _FunctionRunner(bound, self.params)

    def call(self, *args: Any, **kwargs: Any) -> Any:
        if self.method:
            raise TypeError(
                f"{self.function.__qualname__} is a toolbox method; call it on an instance"
            )
        return self.function(*args, **kwargs)

    def _structure_hooks(self) -> tuple[Callable[[Any], Any] | None, ...]:
        from ._convert import structure_function

        hooks = tuple(
            None if param.hidden else structure_function(param.annotation) for param in self.params
        )
        self._hooks = hooks
        if not any(param.positional_only for param in self.params):
            visible = [(p, h) for p, h in zip(self.params, hooks, strict=True) if not p.hidden]
            self._fast = _FastPlan(
                names=frozenset(p.name for p, _ in visible),
                hooked=tuple((p.name, h) for p, h in visible if h is not None),
                required=tuple(p.name for p, _ in visible if p.default is _EMPTY),
            )
        return hooks

    async def run(
        self, tool: Tool, arguments: Mapping[str, Any], context: ToolContext | None
    ) -> Any:
        args, kwargs = self.prepare(tool, arguments, context)
        return await _run(self.function, self.is_async, tool.policy.inline, *args, **kwargs)

    def prepare(
        self, tool: Tool, arguments: Mapping[str, Any], context: ToolContext | None
    ) -> tuple[list[Any], dict[str, Any]]:
        """The call's positional and keyword arguments: structured, injected, defaults left out
        (``context`` may be None only when the function has no hidden parameter)."""
        if self._hooks is None:
            self._structure_hooks()
        fast = self._fast
        if fast is None:
            return self._prepare_each(tool, arguments, context)
        # The common case, kept lean: validated arguments, keyword parameters only. Anything
        # unexpected takes the careful path, which names every problem.
        kwargs = dict(arguments)
        if not kwargs.keys() <= fast.names:
            return self._prepare_each(tool, arguments, context)
        try:
            for name, hook in fast.hooked:
                if name in kwargs:
                    kwargs[name] = hook(kwargs[name])
        except Exception:
            return self._prepare_each(tool, arguments, context)
        for name in fast.required:
            if name not in kwargs:
                return self._prepare_each(tool, arguments, context)
        if self.hidden_names:
            assert context is not None
            for param in self.params:
                if param.hidden == "context":
                    kwargs[param.name] = context
                elif param.hidden == "inject":
                    value = _injected(tool, param, context)
                    if value is not _UNSET:
                        kwargs[param.name] = value
        return [], kwargs

    def _prepare_each(
        self, tool: Tool, arguments: Mapping[str, Any], context: ToolContext | None
    ) -> tuple[list[Any], dict[str, Any]]:
        hooks = self._hooks or self._structure_hooks()
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        problems: list[str] = []
        for param, hook in zip(self.params, hooks, strict=True):
            if param.hidden == "context":
                value: Any = context
            elif param.hidden == "inject":
                assert context is not None
                value = _injected(tool, param, context)
            elif param.name in arguments:
                value = arguments[param.name]
                if hook is not None:
                    try:
                        value = hook(value)
                    except Exception as exc:
                        problems.append(_structure_problem(tool, param, value, exc))
                        continue
            elif param.default is not _EMPTY:
                value = _UNSET
            else:
                problems.append(f"{param.name}: missing; it is required.")
                continue
            if value is _UNSET:
                if not param.positional_only:
                    continue
                value = param.default
            if param.positional_only:
                args.append(value)
            else:
                kwargs[param.name] = value
        if problems:
            raise ArgumentsInvalid(problems, tool=tool.name)
        return args, kwargs


def _structure_problem(tool: Tool, param: _Param, value: Any, exc: Exception) -> str:
    from ._convert import structure_error_text

    shown = "a value" if param.name in tool.sensitive_arguments else json_text(value)
    kind = getattr(strip_annotated(param.annotation)[0], "__name__", str(param.annotation))
    return (
        f"{param.name}: got {shown}; it could not be read as {kind} ({structure_error_text(exc)})."
    )


def _injected(tool: Tool, param: _Param, context: ToolContext) -> Any:
    key = param.key or param.name
    if key in context.services:
        return context.services[key]
    base, _ = strip_annotated(param.annotation)
    if isinstance(base, type) and issubclass(base, ToolContext):
        return context
    if key in _CONTEXT_ATTRIBUTES:
        return getattr(context, key)
    found = _service_of_type(tool, param, context.services)
    if found is not _UNSET or param.default is not _EMPTY:
        return found
    offered = ", ".join(sorted(context.services)) or "none"
    raise InjectionMissing(
        f"tool {tool.name} needs the host service {key!r} (parameter {param.name}), which this "
        f"host does not provide (services: {offered})"
    )


def _service_of_type(tool: Tool, param: _Param, services: Mapping[str, Any]) -> Any:
    """The one service that is an instance of the parameter's type, else ``_UNSET``; two or more
    are an :class:`InjectionMissing` naming them (a name must choose). Built-in types
    (``str``, ``dict`` …) say nothing about which service is meant, so they go by name only."""
    base, _ = strip_annotated(param.annotation)
    if not isinstance(base, type) or base.__module__ == "builtins":
        return _UNSET
    matches = [name for name, value in services.items() if isinstance(value, base)]
    if len(matches) == 1:
        return services[matches[0]]
    if matches:
        raise InjectionMissing(
            f"tool {tool.name}, parameter {param.name}: several host services are "
            f"{base.__name__} ({', '.join(sorted(matches))}); name the parameter after one of "
            f"them or mark it Injected with Inject(key)"
        )
    return _UNSET


def missing_service(
    tool: Tool,
    services_of: Callable[[], Mapping[str, Any]],
    per_run: frozenset[str] = frozenset(),
) -> str | None:
    """Why ``tool`` cannot get one of its ``Injected`` parameters from the services
    ``services_of()`` returns (asked only for a tool that has such parameters) and the names in
    ``per_run``, which the loop adds to every run; None when it can get them all.

    The same lookup as a call makes: by key, the call's own context, then by type; a parameter
    with a default may go without.
    """
    runner = tool._runner
    if not isinstance(runner, _FunctionRunner):
        return None
    injected = [param for param in runner.params if param.hidden == "inject"]
    if not injected:
        return None
    services = services_of()
    for param in injected:
        key = param.key or param.name
        base, _ = strip_annotated(param.annotation)
        if key in services or key in per_run or key in _CONTEXT_ATTRIBUTES:
            continue
        if isinstance(base, type) and issubclass(base, ToolContext):
            continue
        try:
            found = _service_of_type(tool, param, services)
        except InjectionMissing as exc:
            return str(exc)
        if found is not _UNSET or param.default is not _EMPTY:
            continue
        offered = ", ".join(sorted({*services, *per_run})) or "none"
        kind = base.__name__ if isinstance(base, type) else str(param.annotation)
        return (
            f"tool {tool.name} needs the service {key!r} (parameter {param.name}: {kind}), which "
            f"no enabled plugin and no Host.load(services=...) provides; services: {offered}"
        )
    return None


class _SchemaRunner:
    """Calls the handler of an explicit-schema tool with the raw (validated) arguments, and the
    call's context where the handler asks for it (see :func:`_context_slot`)."""

    __slots__ = ("context_slot", "handler", "hidden_names", "is_async", "reads_context")

    def __init__(self, handler: SchemaHandler, owner: str) -> None:
        self.handler = handler
        self.is_async = _is_async(handler)
        self.context_slot = _context_slot(handler, owner)
        self.hidden_names: tuple[str, ...] = ()
        self.reads_context = self.context_slot is not None

    def call(self, *args: Any, **kwargs: Any) -> Any:
        return self.handler(*args, **kwargs)

    async def run(
        self, tool: Tool, arguments: Mapping[str, Any], context: ToolContext | None
    ) -> Any:
        slot, inline = self.context_slot, tool.policy.inline
        if slot is None:
            return await _run(self.handler, self.is_async, inline, dict(arguments))
        if slot == "":
            return await _run(self.handler, self.is_async, inline, dict(arguments), context)
        return await _run(self.handler, self.is_async, inline, dict(arguments), **{slot: context})


def _context_slot(handler: Callable[..., Any], owner: str) -> str | None:
    """Where a ``from_schema`` handler takes the call's :class:`ToolContext`: the name of its
    parameter annotated ``ToolContext`` (``""``: passed by position, for a positional-only one
    or an unannotated second parameter without a default, as in ``lambda arguments, context:``),
    or None when it takes none. A parameter with a default and no such annotation keeps its
    default (``def handler(arguments, _f=fn)``: the closure idiom), whatever its position.

    :raises ToolDefinitionError: for a parameter the host has no value for (one without a
        default, past the arguments and the context).
    """
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):
        return ""  # cannot tell (a builtin): (arguments, context), as documented
    try:
        hints = function_hints(_annotated_callable(handler), owner)
    except ToolDefinitionError:  # an annotation that does not resolve: read the written one
        hints = {}
    listed = list(signature.parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    slot: str | None = None
    for index, param in enumerate(listed[1:], start=1):
        annotation = hints.get(param.name, param.annotation)
        if isinstance(annotation, str):
            wanted = annotation.rsplit(".", 1)[-1] == "ToolContext"
        else:
            wanted = annotation is not inspect.Parameter.empty and _is_context_type(annotation)
        # An unannotated second parameter that must be given: lambda arguments, context: ...
        by_position = (
            index == 1
            and param.annotation is inspect.Parameter.empty
            and (
                param.kind is inspect.Parameter.VAR_POSITIONAL
                or (param.kind in positional and param.default is inspect.Parameter.empty)
            )
        )
        if slot is None and (wanted or by_position):
            keyword = wanted and param.kind is not inspect.Parameter.POSITIONAL_ONLY
            slot = param.name if keyword and index > 1 else ""
            continue
        if param.default is inspect.Parameter.empty and param.kind not in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        ):
            raise ToolDefinitionError(
                f"{owner}: the handler's parameter {param.name!r} has no value to receive: a "
                "from_schema handler takes the arguments, and the call's context in a parameter "
                "annotated ToolContext; give it a default, or drop it"
            )
    return slot


_Runner = _FunctionRunner | _SchemaRunner


class _ToolState:
    """Values a tool computes once, on first use (validator, offer, strict projection)."""

    __slots__ = ("projection", "spec", "validate")

    def __init__(self) -> None:
        self.validate: Callable[[Any], Mapping[str, Any]] | None = None
        self.spec: FunctionSpec | None = None
        self.projection: StrictProjection | None = None


# -- the tool ----------------------------------------------------------------------------------

_ICON_MAX_CHARACTERS = 16


def _check_icon(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > _ICON_MAX_CHARACTERS
        or not value.isprintable()
    ):
        raise ToolDefinitionError(
            f"a tool icon must be a short printable text (an emoji or up to "
            f"{_ICON_MAX_CHARACTERS} characters) or None; got {value!r}"
        )


@attrs.frozen(kw_only=True, eq=False)
class Tool:
    """A tool the host can offer to models and run.

    ``parameters`` is the canonical, provider-neutral JSON Schema of the arguments (an optional
    argument is absent from ``required``); ``parameter_order`` is the positional order of the
    prompted ``ptype`` dialect. ``strict`` is None to let each adapter decide, False to never send
    the schema strict. ``instructions`` go into the system prompt when the tool is offered, never
    into the description. ``external`` tools are schema only: the caller runs them and the run
    ends ``deferred`` at their calls. ``plugin`` is set by the host when it registers the tool.
    ``icon`` is a short text (an emoji or a few characters) that user interfaces show beside the
    title; it never reaches a model.

    ``requires`` names the tools this one needs to be useful (``search_confluence`` finds pages
    that ``read_web_page`` reads): selecting it selects them too, past ``[tools] enable`` and the
    allow lists; a required tool that is not registered, or is denied or hidden, leaves this
    one out, with that reason.

    ``path_arguments`` names the arguments that are file system paths (a string, or a list of
    strings): the host refuses a call whose path lies outside ``[policy] workspace`` and
    ``trusted_roots`` before the tool runs. ``background_safe`` says whether a call may run
    with nobody watching (``[policy] unattended = true``); None means only a tool that declares
    itself read only and asks for no approval.

    ``schema_notes`` lists what ``Tool.from_schema(..., normalize=True)`` changed in the schema
    it was given (one ``$.path: change`` each).

    ``policy_config_key`` says where a person declares the policy of a tool whose author could
    not, such as one a plugin makes from another framework's definition
    (``[tools.llm-tools.policy.simple_eval]``); a refusal for undeclared side effects names it.

    ``parameters`` is checked when the tool is made, against the JSON Schema 2020-12 rules that
    change what validates: a tool that exists never fails at call time because of its schema.

    A tool made from a function is callable like the function, so its author can test it directly.
    Tools compare by identity.
    """

    __repr__ = record_repr

    name: str = attrs.field()
    title: str | None = None
    icon: str | None = attrs.field(default=None, validator=_check_icon)
    description: str = ""
    description_for_model: str | None = None
    parameters: Mapping[str, Any] = attrs.field(
        factory=_empty_parameters, validator=_check_parameters
    )
    parameter_order: tuple[str, ...] = attrs.field(converter=_name_tuple)
    strict: bool | None = None
    instructions: str | None = None
    activation: Activation = attrs.field(default=Activation.SELECTED, converter=_activation)
    resolver: Resolver | None = attrs.field(default=None, repr=False)
    policy: ToolPolicy = attrs.field(default=_NO_POLICY)
    allow_duplicates: bool = False
    sensitive_arguments: frozenset[str] = attrs.field(default=frozenset(), converter=_name_set)
    returns_untrusted_content: bool = False
    min_provider_trust: TrustLevel | None = attrs.field(default=None, converter=_trust)
    requires: tuple[str, ...] = attrs.field(default=(), converter=_requirements)
    path_arguments: frozenset[str] = attrs.field(default=frozenset(), converter=_name_set)
    background_safe: bool | None = None
    external: bool = False
    plugin: str | None = None
    schema_notes: tuple[str, ...] = attrs.field(default=(), converter=_name_tuple)
    policy_config_key: str | None = None
    _runner: _Runner | None = attrs.field(default=None, repr=False, alias="runner")
    _state: _ToolState = attrs.field(init=False, factory=_ToolState, repr=False)

    @name.validator
    def _check_name(self, attribute: attrs.Attribute[str], value: Any) -> None:
        if not isinstance(value, str) or not value:
            raise ToolDefinitionError(f"a tool name must be a non-empty string; got {value!r}")

    @policy.validator
    def _check_policy(self, attribute: attrs.Attribute[ToolPolicy], value: Any) -> None:
        if not getattr(value, "inline", False):
            return
        runner = self._runner
        if runner is None:
            problem = "an external tool is run by the caller, not by the host"
        elif runner.is_async:
            problem = "its function is async, so it runs on the event loop already"
        elif value.timeout is not None:
            problem = (
                f"a call run inline cannot be stopped at its timeout ({value.timeout:g} s); "
                "drop the timeout, or let the call run in a worker thread"
            )
        else:
            return
        raise ToolDefinitionError(
            f"tool {self.name}: inline applies to a sync function the host runs; {problem}"
        )

    @parameter_order.default
    def _default_order(self) -> tuple[str, ...]:
        properties = self.parameters.get("properties")
        return tuple(properties) if isinstance(properties, Mapping) else ()

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        options: ToolOptions | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        parameter_descriptions: Mapping[str, str] | None = None,
        **keywords: Any,
    ) -> Tool:
        """Make a tool from a typed (sync or async) function.

        The name is the function's (or ``name``); the description is the docstring's text before
        its sections (or ``description``); each parameter's description comes from
        ``parameter_descriptions``, else ``Annotated[T, "…"]``, else the docstring's
        Args/Parameters/``:param:`` entry. A parameter with a default is optional and its default
        is written into the schema. Parameters typed ``ToolContext`` or ``Injected[T]`` are hidden:
        the host supplies them and a value the model sends under their name is discarded.
        ``Annotated[T, {"minimum": 1}]`` adds JSON Schema keywords to a parameter.

        The other options are those of :class:`ToolOptions`, given whole (``options``) or as
        keywords (``requires_approval=True``), which change the fields of ``options`` when both
        are given.

        :raises TypeError: for a keyword that is no option (naming the options).
        :raises ToolDefinitionError: for a name providers refuse, a parameter without a type, a
            variadic parameter, or a type JSON Schema cannot express (naming function and
            parameter).
        """
        if isinstance(function, Tool):
            raise ToolDefinitionError(
                f"{function.name} is already a tool; change its fields with attrs.evolve"
            )
        if not callable(function):
            raise ToolDefinitionError(f"a tool needs a callable; got {function!r}")
        method = _is_unbound_method(function)
        tool_name = name if name is not None else getattr(function, "__name__", None)
        if not isinstance(tool_name, str):
            raise ToolDefinitionError(
                f"{function!r} has no __name__; give the tool a name (name=...)"
            )
        owner = f"tool {tool_name} (function {_qualified_name(function)})"
        validate_tool_name(tool_name)
        chosen = _options(options, keywords, owner)
        doc = parse_docstring(inspect.getdoc(function))
        parameters, params = _parameters_of(
            function, owner, method=method, descriptions=parameter_descriptions or {}, doc=doc
        )
        return cls._made(
            chosen,
            owner,
            [p.name for p in params if not p.hidden],
            name=tool_name,
            description=doc.description if description is None else description,
            parameters=parameters,
            runner=_FunctionRunner(function, params, method=method),
        )

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        handler: SchemaHandler | None = None,
        options: ToolOptions | None = None,
        *,
        normalize: bool = False,
        **keywords: Any,
    ) -> Tool:
        """Make a tool from an explicit JSON Schema, for arguments known only at run time.

        ``handler(arguments)`` or ``handler(arguments, context: ToolContext)`` (sync or async)
        receives the validated arguments as a dict. Without a handler the tool must be
        ``external``: the caller runs it. The schema is copied; it must describe a JSON object.

        The schema is checked whole: every problem is reported at once, each with its JSON path
        (``$.properties.size.type: 'float' is not a JSON Schema type; use "number"``). With
        ``normalize=True`` the dialects of other hosts are first rewritten by
        :func:`~toolwire.tools.normalize_schema`, and what changed is kept in ``schema_notes``.
        Without it, the two words of other hosts that JSON Schema would silently ignore are read
        all the same (and noted): ``optional: true`` on a property as "not required", OpenAPI's
        ``nullable: true`` as "null allowed"; ``toolwire doctor`` warns about them. Other
        keywords JSON Schema does not define are kept and ignored, as JSON Schema says.

        The handler gets the call's :class:`ToolContext` in a parameter annotated
        ``ToolContext`` (or an unannotated second parameter without a default, as in
        ``lambda arguments, context: ...``); a parameter with a default keeps it.

        The other options are those of :class:`ToolOptions`, given whole (``options``) or as
        keywords, as for :meth:`from_function`.

        :raises TypeError: for a keyword that is no option (naming the options).
        :raises ToolDefinitionError: for a bad name, a schema that is not a sound JSON object
            schema or not JSON (``problems`` lists each problem), or a missing handler.
        """
        validate_tool_name(name)
        owner = f"tool {name}"
        chosen = _options(options, keywords, owner)
        if not isinstance(parameters, Mapping):
            raise ToolDefinitionError(
                f"{owner}: parameters must be a JSON Schema mapping; "
                f"got {type(parameters).__name__}"
            )
        try:
            text = json.dumps(parameters, ensure_ascii=False)
            copied: dict[str, Any] = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise ToolDefinitionError(f"{owner}: parameters are not JSON ({exc})") from exc
        notes: tuple[str, ...] = ()
        if normalize:
            from ._normalize import normalize_schema

            copied, notes = normalize_schema(copied)
        elif '"optional"' in text or '"nullable"' in text:
            from ._normalize import read_foreign_words

            copied, notes = read_foreign_words(copied)
        check_parameter_schema(copied, owner)
        kind = copied.get("type")
        if kind != "object":
            raise ToolDefinitionError(
                f'{owner}: the parameter schema must have "type": "object" (providers take '
                f"arguments as one JSON object); got type {kind!r}"
            )
        if handler is None and not chosen.external:
            raise ToolDefinitionError(
                f"{owner}: give a handler, or mark the tool external=True (the caller runs it)"
            )
        if handler is not None and not callable(handler):
            raise ToolDefinitionError(f"{owner}: the handler must be callable; got {handler!r}")
        properties = copied.get("properties")
        return cls._made(
            chosen,
            owner,
            list(properties) if isinstance(properties, Mapping) else [],
            name=name,
            description=description,
            parameters=copied,
            schema_notes=notes,
            runner=_SchemaRunner(handler, owner) if handler is not None else None,
        )

    @classmethod
    def _made(cls, options: ToolOptions, owner: str, arguments: list[str], **fields: Any) -> Tool:
        """The tool of ``options`` whose arguments (in their positional order) are
        ``arguments``, refusing sensitive or path arguments it does not take."""
        _check_sensitive(options.sensitive_arguments, arguments, owner)
        _check_sensitive(options.path_arguments, arguments, owner, "path_arguments")
        return cls(**options._tool_fields(), parameter_order=tuple(arguments), **fields)

    # -- behaving like the function -------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the original function (or handler) directly, bypassing validation."""
        if self._runner is None:
            raise TypeError(f"tool {self.name} has no implementation: the caller runs it")
        return self._runner.call(*args, **kwargs)

    def __get__(self, instance: object, owner: type | None = None) -> Tool:
        runner = self._runner
        if instance is None or not isinstance(runner, _FunctionRunner) or not runner.method:
            return self
        return attrs.evolve(self, runner=runner.bind(instance))

    @property
    def __wrapped__(self) -> Callable[..., Any] | None:
        """The function or handler this tool runs (None for an external tool)."""
        runner = self._runner
        if isinstance(runner, _FunctionRunner):
            return runner.function
        if isinstance(runner, _SchemaRunner):
            return runner.handler
        return None

    @property
    def is_method(self) -> bool:
        """True for a tool declared on a toolbox class and not yet bound to an instance."""
        return isinstance(self._runner, _FunctionRunner) and self._runner.method

    @property
    def hidden_parameters(self) -> tuple[str, ...]:
        """Names of parameters the host supplies (never in the schema)."""
        return self._runner.hidden_names if self._runner is not None else ()

    @property
    def reads_context(self) -> bool:
        """Whether running the tool reads its call's :class:`ToolContext`: a function with a
        parameter the host supplies (the context, or a service), or a handler that takes the
        context. The loop builds a call's context only when something reads it."""
        return self._runner is not None and self._runner.reads_context

    # -- offering --------------------------------------------------------------------------------

    def function_spec(self) -> FunctionSpec:
        """The default offer: name, ``description_for_model`` (or description), parameters."""
        spec = self._state.spec
        if spec is None:
            spec = self._state.spec = FunctionSpec(
                name=self.name,
                description=self.description_for_model or self.description,
                parameters=self.parameters,
                strict=self.strict,
                parameter_order=self.parameter_order,
                tool=self,
            )
        return spec

    def resolve(self, request: OfferRequest) -> MaybeAwaitable[FunctionSpec | None]:
        """What this tool offers to ``request``: its resolver's answer (awaitable, for an async
        resolver), else ``function_spec()``."""
        if self.resolver is not None:
            return self.resolver(self, request)
        return self._state.spec or self.function_spec()

    def strict_projection(self) -> StrictProjection:
        """The strict-mode form of ``parameters`` (computed once), or why there is none."""
        projection = self._state.projection
        if projection is None:
            from ._strict import strict_projection

            projection = self._state.projection = strict_projection(self.parameters)
        return projection

    # -- calling ---------------------------------------------------------------------------------

    def validate(self, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """Validate model arguments against ``parameters``; return them cleaned.

        A ``null`` sent for an optional argument is treated exactly as an absent one, and values
        sent under hidden parameter names are dropped.

        :raises ArgumentsInvalid: with one refusal per problem (``.problems``).
        """
        validate = self._state.validate
        if validate is None:
            validator = ArgumentValidator(
                self.parameters,
                tool=self.name,
                hidden=self.hidden_parameters,
                sensitive=self.sensitive_arguments,
            )
            validate = self._state.validate = validator.validate
        try:
            return validate(arguments)
        except ArgumentsInvalid:
            raise
        except ToolDefinitionError as exc:
            # The schema was checked when the tool was made, so this is a gap in that check:
            # the call is refused, and the run goes on.
            raise ArgumentsInvalid(
                [f"the tool's own parameter schema cannot be used to check arguments ({exc})"],
                tool=self.name,
            ) from exc
        except RecursionError:
            raise ArgumentsInvalid(
                ["the arguments nest too deeply to be checked; send them less deeply nested"],
                tool=self.name,
            ) from None
        except Exception as exc:
            # Nothing a schema holds may end the run: whatever checking it raised refuses the call.
            raise ArgumentsInvalid(
                [
                    "the arguments could not be checked against the tool's parameter schema "
                    f"({type(exc).__name__}: {exc})"
                ],
                tool=self.name,
            ) from exc

    async def invoke(
        self, arguments: Mapping[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        """Validate, structure and run one call, and turn its outcome into a ``ToolResult``.

        Sync functions run in a worker thread (on this thread when the policy says ``inline``).
        The return value becomes the result: a ``ToolResult`` as is, ``str`` as content, ``None``
        as an empty success, anything else as JSON ``data``. ``ToolBlocked`` gives a ``blocked``
        result, refused arguments an ``error`` result with the refusals, any other exception
        ``Tool execution failed: <Type>: <message>`` (``retryable``, the exception kept on the
        result, and logged with its traceback to the ``toolwire.tools`` logger). Cancellation
        propagates.
        """
        try:
            cleaned = self.validate(arguments)
        except ArgumentsInvalid as exc:
            named = exc if exc.tool else ArgumentsInvalid(exc.problems, tool=self.name)
            return ToolResult.error(str(named), exception=exc)
        return await self.invoke_validated(cleaned, context)

    async def invoke_validated(
        self, arguments: Mapping[str, Any], context: ToolContext | None = None
    ) -> ToolResult:
        """:meth:`invoke` for arguments that :meth:`validate` already returned (the loop's
        admission validates every call): the same outcomes, without validating twice."""
        runner = self._runner
        if runner is None:
            return ToolResult.error(
                f"Tool {self.name} is run by the caller, not by the host.", retryable=False
            )
        if context is None and runner.reads_context:
            context = ToolContext(tool=self, call_id="call", run_id="run", round=0)
        try:
            value = await runner.run(self, arguments, context)
        except CallInterrupt:
            raise  # a decision (approval, deferral, adjustment) the loop applies
        except BaseException as exc:
            # SystemExit, KeyboardInterrupt or GeneratorExit from a tool is the tool's failure:
            # caught here, before it can pass through a generator-based middleware. A real Ctrl-C
            # reaches an asyncio run as the cancellation of its task, which propagates.
            import asyncio  # already loaded: a tool is running

            if isinstance(exc, asyncio.CancelledError):
                raise
            return result_for(exc, self, arguments, by_tool=True)
        return returned_result(value)


_JSON_SCALARS = frozenset({int, float, bool})


def returned_result(value: Any, by: str = "the tool") -> ToolResult:
    """The result a tool's return value makes (see :meth:`Tool.invoke`), or the error saying
    that ``by`` returned a value that cannot be sent as JSON."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult.ok()
    if isinstance(value, str):
        return ToolResult.ok(value)
    if type(value) in _JSON_SCALARS:  # JSON as it is: nothing to unstructure or check
        return ToolResult.ok(data=value)
    try:
        from ._convert import unstructure_result

        data = unstructure_result(value)
        json.dumps(data, ensure_ascii=False)
    except Exception as exc:
        return ToolResult.error(
            f"Tool execution failed: {by} returned a {type(value).__name__} that cannot be "
            f"sent as JSON ({type(exc).__name__}: {exc})",
            exception=exc,
        )
    return ToolResult.ok(data=data)


def _check_sensitive(
    names: Iterable[str], visible: list[str], owner: str, what: str = "sensitive_arguments"
) -> None:
    """Refuse a list of argument names (``what``) naming arguments the tool does not take."""
    unknown = sorted(set(names) - set(visible))
    if unknown:
        raise ToolDefinitionError(
            f"{owner}: {what} names {', '.join(unknown)}, which the tool does not "
            f"take; its arguments: {', '.join(visible) or 'none'}"
        )


def _qualified_name(function: Callable[..., Any]) -> str:
    module = getattr(function, "__module__", None) or "?"
    qualname = getattr(function, "__qualname__", None) or repr(function)
    return f"{module}.{qualname}"


def _is_unbound_method(function: Callable[..., Any]) -> bool:
    if not inspect.isfunction(function):
        return False
    parts = function.__qualname__.split(".")
    if len(parts) < 2 or parts[-2] == "<locals>":
        return False  # a module's or a local function: no signature to read
    return list(inspect.signature(function).parameters)[:1] == ["self"]


def _annotated_callable(function: Callable[..., Any]) -> Any:
    """The object whose ``__annotations__`` describe the parameters of ``function``."""
    if isinstance(function, functools.partial):
        return _annotated_callable(function.func)
    if inspect.ismethod(function):
        return function.__func__
    if inspect.isfunction(function) or inspect.isbuiltin(function):
        return function
    try:
        return type(function).__call__
    except AttributeError:
        return function


def _is_context_type(tp: Any) -> bool:
    base, _ = strip_annotated(tp)
    if is_union(base):
        from typing import get_args

        members = [m for m in get_args(base) if m is not type(None)]
        return len(members) == 1 and _is_context_type(members[0])
    return isinstance(base, type) and issubclass(base, ToolContext)


def _parameters_of(
    function: Callable[..., Any],
    owner: str,
    *,
    method: bool,
    descriptions: Mapping[str, str],
    doc: ParsedDocstring | None = None,
) -> tuple[dict[str, Any], tuple[_Param, ...]]:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"{owner}: its signature cannot be read ({exc})") from exc
    hints = function_hints(_annotated_callable(function), owner)
    if doc is None:
        doc = parse_docstring(inspect.getdoc(function))
    builder = SchemaBuilder(owner)
    properties: dict[str, Any] = {}
    required: list[str] = []
    params: list[_Param] = []
    items = list(signature.parameters.values())
    if method:
        items = items[1:]
    for parameter in items:
        where = f"parameter {parameter.name}"
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            star = "*" if parameter.kind is parameter.VAR_POSITIONAL else "**"
            raise ToolDefinitionError(
                f"{owner}, parameter {star}{parameter.name}: variadic parameters cannot be "
                "offered to a model; declare each argument"
            )
        annotation = hints.get(parameter.name, parameter.annotation)
        if annotation is _EMPTY:
            raise ToolDefinitionError(
                f"{owner}, {where}: no type annotation; a model needs to know what to send "
                f"(for example `{parameter.name}: str`)"
            )
        _, metadata = strip_annotated(annotation)
        inject = next((item for item in metadata if isinstance(item, Inject)), None)
        hidden: Literal["context", "inject"] | None = None
        if _is_context_type(annotation):
            hidden = "context"
        elif inject is not None:
            hidden = "inject"
        params.append(
            _Param(
                name=parameter.name,
                positional_only=parameter.kind is _POSITIONAL_ONLY,
                annotation=annotation,
                hidden=hidden,
                key=inject.key if inject is not None else None,
                default=parameter.default,
            )
        )
        if hidden:
            continue
        optional = parameter.default is not _EMPTY
        schema = (
            builder.optional_schema(annotation, where)
            if optional
            else builder.schema(annotation, where)
        )
        text = (
            descriptions.get(parameter.name)
            or annotated_description(annotation)
            or doc.parameters.get(parameter.name)
        )
        if text:
            schema["description"] = text
        if optional:
            ok, value = json_default(parameter.default)
            if ok and value is not None:
                schema["default"] = value
        properties[parameter.name] = schema
        if not optional:
            required.append(parameter.name)
    unknown = sorted(set(descriptions) - set(properties))
    if unknown:
        raise ToolDefinitionError(
            f"{owner}: parameter_descriptions names {', '.join(unknown)}, which the model is not "
            f"offered; offered parameters: {', '.join(properties) or 'none'}"
        )
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    parameters["additionalProperties"] = False
    return parameters, tuple(params)


def schema_for(type_or_function: Any, /) -> dict[str, Any]:
    """The JSON Schema toolwire derives for ``type_or_function``, outside of any tool.

    For a function (or method, or ``functools.partial``) it is the object schema of the
    parameters a model would be offered: the same schema :func:`tool` builds, with descriptions
    from ``Annotated`` metadata and the docstring, defaults, and context or injected parameters
    left out. For any other type (a class, ``list[int]``, ``Literal[...]``, a ``TypedDict``, an
    attrs or dataclass record, an enum) it is the schema of values of that type.

    Use it for hand-written definitions (``Tool.from_schema``) or to check what a tool would
    send.

    :raises ToolDefinitionError: naming the parameter or field whose type has no JSON Schema.
    """
    if _is_function_like(type_or_function):
        name = _qualified_name(type_or_function)
        parameters, _ = _parameters_of(
            type_or_function,
            f"function {name}",
            method=_is_unbound_method(type_or_function),
            descriptions={},
        )
        return parameters
    builder = SchemaBuilder(f"type {_type_label(type_or_function)}")
    return dict(builder.schema(type_or_function, "the type"))


def _is_function_like(value: Any) -> bool:
    if isinstance(value, functools.partial):
        return True
    return inspect.isfunction(value) or inspect.ismethod(value) or inspect.isbuiltin(value)


def _type_label(tp: Any) -> str:
    return tp.__qualname__ if isinstance(tp, type) else repr(tp)


# -- the decorator -------------------------------------------------------------------------------


@overload
def tool(function: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    function: None = None,
    /,
    *,
    options: ToolOptions | None = None,
    name: str | None = None,
    description: str | None = None,
    parameter_descriptions: Mapping[str, str] | None = None,
    **keywords: Any,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    function: Callable[..., Any] | None = None, /, **options: Any
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function into a :class:`Tool`, bare (``@tool``) or with options (``@tool(…)``).

    It takes what :meth:`Tool.from_function` takes: ``name``, ``description``,
    ``parameter_descriptions`` and the :class:`ToolOptions`, as keywords or as ``options=``; the
    policy shortcuts (``requires_approval=True``, ``timeout=30`` …) change the matching field of
    ``policy``. The decorated object is the ``Tool``, and calling it calls the function. On a
    method of a :class:`Toolbox`, the tool binds to the instance.

    **Example**::

        @tool(side_effects=["read_only"], idempotent=True)
        def forecast(city: Annotated[str, "City name, e.g. Lyon."], days: int = 3) -> str:
            \"\"\"Weather forecast for a city.\"\"\"
    """
    if function is not None:
        if isinstance(function, str):
            raise TypeError(f"write @tool(name={function!r}) to name a tool")
        if options:
            raise TypeError("pass options as @tool(...) keywords, not with a function")
        return Tool.from_function(function)

    def decorate(target: Callable[..., Any]) -> Tool:
        return Tool.from_function(target, **options)

    return decorate
