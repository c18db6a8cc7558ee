"""Errors of the tool model: definitions that cannot work, refused arguments, and the decisions
a tool or a middleware raises while a call runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._contain import describe
from .._redact import scrub

if TYPE_CHECKING:
    from ._model import Tool
    from ._result import ToolResult


class ToolDefinitionError(ValueError):
    """A tool cannot be defined as written.

    Raised when the tool is defined (at import of the module that declares it), never during a run:
    a name providers refuse, a parameter type JSON Schema cannot express, a malformed explicit
    schema. The message names the function and the parameter.

    ``problems`` holds every problem found in a parameter schema, each ``$.json.path: what is
    wrong``; it is empty for an error that is not about the schema.
    """

    def __init__(self, message: str, *, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems: tuple[str, ...] = tuple(problems)


class ArgumentsInvalid(ValueError):
    """Arguments of a call were refused; the text is written for the model to correct itself.

    ``problems`` holds one refusal per problem found, each naming the argument path, the value
    that arrived (shortened), what would be valid, and for an optional argument that it may be
    left out. ``str()`` of the exception joins them under one line naming the tool.
    """

    def __init__(self, problems: Sequence[str], *, tool: str | None = None) -> None:
        self.problems: tuple[str, ...] = tuple(problems) or ("the arguments were refused",)
        self.tool = tool
        super().__init__(self._text())

    def _text(self) -> str:
        head = f"Invalid arguments for tool {self.tool}" if self.tool else "Invalid arguments"
        if len(self.problems) == 1:
            return f"{head}: {self.problems[0]}"
        lines = "\n".join(f"- {problem}" for problem in self.problems)
        return f"{head} ({len(self.problems)} problems):\n{lines}"

    def __str__(self) -> str:
        return self._text()


# -- decisions raised while a call runs --------------------------------------------------------


class CallInterrupt(Exception):
    """Base of what a tool or an execution middleware raises to stop the current attempt at a
    call with a decision rather than a result: :class:`AdjustArguments`,
    :class:`ApprovalRequired`, :class:`CallDeferred`. The loop handles them; ``Tool.invoke``
    lets them pass."""


class AdjustArguments(CallInterrupt):
    """Raised by an execution middleware, before it calls ``call_next()``, to run the call with
    other ``arguments``.

    The loop validates them against the tool's schema again (a refusal answers the call with
    an error naming the middleware's arguments), emits ``ArgumentsAdjusted`` (sensitive values
    redacted) and runs the call again through the whole chain with the new arguments; a
    middleware sees the adjusted call then and lets it pass. ``reason`` says why, for people.
    """

    def __init__(self, arguments: Mapping[str, Any], reason: str = "") -> None:
        if not isinstance(arguments, Mapping):
            raise TypeError(
                f"AdjustArguments(arguments=...) takes a mapping of argument names to values, "
                f"got {type(arguments).__name__}"
            )
        super().__init__(reason or "the arguments were adjusted")
        self.arguments: dict[str, Any] = dict(arguments)
        self.reason = reason


class ApprovalRequired(CallInterrupt):
    """Raised by a tool or a middleware when this call needs a person's approval first.

    The run's approver is asked, as for ``[policy] require_approval``; without one the run ends
    ``deferred`` and ``resume`` with ``Approve()`` runs the call again, with
    ``ToolContext.approved`` set (check it so as not to ask twice). ``Deny`` and ``Supply``
    answer it. Raise it before taking any effect.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CallDeferred(CallInterrupt):
    """Raised by a tool or a middleware to leave this call for later: the run ends ``deferred``
    (reason ``deferred``) whatever the approver would say; ``resume`` decides it like any
    deferred call (``Approve()`` runs it again with ``ToolContext.approved`` set)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Retry(Exception):
    """Tell the model to try again: the call is answered with an error result holding
    ``message`` (``retryable``), and the host does not repeat the call itself.

    Raised by a tool or a middleware while the call runs; or given as the decision on a
    deferred call (returned by the run's approver or external handler, or passed to
    ``resume``), where it answers the call the same way instead of running it. As a decision,
    ``attempt`` names the request it answers, as for ``Approve``, ``Deny`` and ``Supply``.
    """

    def __init__(self, message: str, *, attempt: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.attempt = check_attempt(attempt)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message,), {"attempt": self.attempt})

    def __repr__(self) -> str:
        attempt = f", attempt={self.attempt}" if self.attempt is not None else ""
        return f"Retry({self.message!r}{attempt})"


def check_attempt(value: int | None) -> int | None:
    """``value`` as the attempt of a request a decision answers (None: not named).

    :raises ValueError: for anything but None or an integer of 1 or more.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"attempt={value!r}: expected the attempt of a request, 1 or more")
    return value


class ToolFatal(Exception):
    """Raised by a tool to classify its failure as fatal to the run.

    The call is answered with an error result holding ``message``; calls of the same turn
    still running finish, the ones not started are answered as not run, and the run then ends
    with stop reason ``tool_fatal``, its detail naming the tool, the call and the message.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def decision_result(exc: Retry | ToolFatal, tool: str) -> ToolResult:
    """The result of a call that raised ``Retry`` or ``ToolFatal`` (the exception kept on it)."""
    from ._result import ToolResult

    if isinstance(exc, Retry):
        return ToolResult.error(exc.message or f"Try {tool} again.", retryable=True, exception=exc)
    return ToolResult.error(
        f"Tool {tool} failed, and the run stops: {exc.message}", retryable=False, exception=exc
    )


class RunCancelled(Exception):
    """The run's cancel event was set while a tool ran: the call stops."""


class InjectionMissing(Exception):
    """The host has no value for an injected parameter: a host configuration problem."""


def result_for(
    exc: BaseException,
    tool: Tool,
    arguments: Mapping[str, Any] | None = None,
    *,
    by_tool: bool = False,
    timeout: float | None = None,
    deadline_bound: bool = False,
    timeout_setting: str | None = None,
) -> ToolResult:
    """The result the model gets for a call of ``tool`` that raised ``exc``: the one place where
    an exception becomes a result.

    A policy's block (``ToolBlocked``), arguments the tool refused, a ``Retry`` or ``ToolFatal``
    decision, the run's cancellation, a timeout (with ``timeout``: the tool's own, the default
    bound named by ``timeout_setting``, or what was left of the run's deadline), a service the
    host lacks, or a failure. ``by_tool``: the tool's own code raised it (not a middleware or the
    host), so the failure is logged and may pass (``retryable``). The values of the tool's
    sensitive ``arguments`` are taken out of the message. A :class:`CallInterrupt` never gets
    here: it is a decision the caller applies.
    """
    import asyncio  # loaded already: a call ran

    from ._result import ToolBlocked, ToolResult

    name = tool.name
    if isinstance(exc, ToolBlocked):
        return ToolResult.blocked(exc.message, retryable=exc.retryable, exception=exc)
    if isinstance(exc, ArgumentsInvalid):
        named = exc if exc.tool else ArgumentsInvalid(exc.problems, tool=name)
        return ToolResult.error(str(named), exception=exc)
    if isinstance(exc, Retry | ToolFatal):
        return decision_result(exc, name)
    if isinstance(exc, RunCancelled | asyncio.CancelledError):
        return ToolResult.error(f"Cancelled: the run was cancelled while {name} ran.")
    if isinstance(exc, TimeoutError) and timeout is not None:
        return ToolResult.error(_timed_out(name, timeout, deadline_bound, timeout_setting))
    if isinstance(exc, InjectionMissing):
        return ToolResult.error(f"Tool execution failed: {exc}", exception=exc)
    if not by_tool:
        return ToolResult.error(f"Tool execution failed: {describe(exc)}", exception=exc)
    message = scrub(f"{type(exc).__name__}: {exc}", arguments, tool.sensitive_arguments)
    _log_failure(tool, exc, arguments)
    # A raised exception is often passing (a network blip, a locked file): the model may try
    # again, and the host does when the tool's max_retries allow it.
    return ToolResult.error(f"Tool execution failed: {message}", retryable=True, exception=exc)


def _timed_out(name: str, timeout: float, deadline_bound: bool, setting: str | None) -> str:
    if deadline_bound:
        return f"Tool {name} was stopped: the run's deadline passed while it ran."
    if setting is not None:
        return (
            f"Tool {name} timed out after {timeout:g} s, the default bound for tools that set "
            f"no timeout of their own ({setting})."
        )
    return f"Tool {name} timed out after {timeout:g} s."


def _log_failure(tool: Tool, exc: BaseException, arguments: Mapping[str, Any] | None) -> None:
    """Log the tool's exception with its traceback (``toolwire.tools``), redacted like the
    result: a sensitive argument may appear in the message or a frame's source line."""
    import logging

    log = logging.getLogger("toolwire.tools")
    if not log.isEnabledFor(logging.ERROR):
        return
    import traceback

    text = "".join(traceback.format_exception(exc))
    log.error(
        "tool %s raised:\n%s", tool.name, scrub(text, arguments, tool.sensitive_arguments).rstrip()
    )


def not_executed(name: str) -> ToolResult:
    """The result of a call no implementation of ``toolwire_execute_tool`` ran."""
    from ._result import ToolResult

    return ToolResult.error(f"No implementation of toolwire_execute_tool ran the tool {name!r}.")
