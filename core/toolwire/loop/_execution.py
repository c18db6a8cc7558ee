"""Execution of one admitted call, in layers like an HTTP client's send pipeline.

From the outside in: the ledger's rows (:func:`toolwire.loop._lifecycle.send_recorded`: the
call's ``started`` row, fail closed, and its ``settled`` row), :func:`with_backstop` caps and
filters the result of a tool returning untrusted content that did not filter it,
:func:`with_retries` repeats a retryable failure with backoff, and :func:`attempt` makes one
attempt under the tool's timeout and the run's deadline. An exception becomes a
:class:`ToolResult` in one place only, :func:`toolwire.tools._errors.result_for`.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs

from ..tools._errors import CallInterrupt, Retry, RunCancelled, not_executed, result_for
from ..tools._result import ToolResult, ToolStatus
from ._cancel import until_cancelled
from ._lifecycle import CallEvent
from ._run import Outcome

if TYPE_CHECKING:
    from ..tools import Tool, ToolContext
    from ._state import CallSlot


@attrs.define(kw_only=True)
class Attempt:
    """What one attempt at a call needs: ``send`` starts the tool (the execution hook, or the
    tool inline) and returns what to await, or None when no implementation ran it."""

    tool: Tool
    send: Callable[[], Awaitable[Any] | None]
    timeout: float | None = None
    """Seconds the attempt may take: the tool's timeout, or what is left of the run's deadline."""
    deadline_bound: bool = False
    """``timeout`` is what is left of the run's deadline."""
    timeout_setting: str | None = None
    """Where ``timeout`` comes from when the tool sets none (``[loop] tool_timeout``)."""
    coarse: CoarseBounds | None = None
    """Enforce ``timeout`` on these shared timers instead of a timer of its own."""
    cancel: asyncio.Event | None = None
    on_deadline: Callable[[], None] = lambda: None
    """Called when the run's deadline stopped the attempt."""


def _checked(result: Any) -> ToolResult:
    if not isinstance(result, ToolResult):
        return ToolResult.error(
            f"Tool execution failed: toolwire_execute_tool produced a "
            f"{type(result).__name__}, not a ToolResult."
        )
    return result


async def attempt(a: Attempt) -> ToolResult:
    """One attempt: ``send`` under the timeout, stopped early when the run is cancelled
    (:class:`RunCancelled` and task cancellation propagate)."""
    name = a.tool.name
    try:
        awaitable = a.send()
        if awaitable is None:
            return not_executed(name)
        if a.cancel is not None:
            awaitable = until_cancelled(awaitable, a.cancel)
        if a.timeout is None:
            return _checked(await awaitable)
        if a.coarse is not None:
            return await _coarsely_bounded(a, awaitable)
        try:
            async with asyncio.timeout(a.timeout):
                return _checked(await awaitable)
        except TimeoutError as exc:
            if a.deadline_bound:
                a.on_deadline()
            return _timed_out(a, exc)
    except (RunCancelled, asyncio.CancelledError, CallInterrupt):
        raise  # a decision from inside the call is the caller's to apply
    except BaseException as exc:
        # SystemExit, KeyboardInterrupt or GeneratorExit raised by a tool or a middleware is its
        # own failure, not the host's: a real Ctrl-C reaches an asyncio run as the cancellation
        # of its task, which propagates above.
        return result_for(exc, a.tool)


def _timed_out(a: Attempt, exc: TimeoutError) -> ToolResult:
    return result_for(
        exc,
        a.tool,
        timeout=a.timeout,
        deadline_bound=a.deadline_bound,
        timeout_setting=a.timeout_setting,
    )


class CoarseBounds:
    """Time bounds for many calls on a few timers: calls whose bounds end within the same tenth
    of a second share one timer, which cancels the calls still running when it fires.

    ``asyncio.timeout`` arms a timer per call, which costs about as much as the rest of a
    trivial call; the default bound (``[loop] tool_timeout``) applies to every call and needs no
    more precision than a tenth of a second.
    """

    _GRAIN = 10  # buckets per second

    def __init__(self) -> None:
        self._buckets: dict[int, set[_Bound]] = {}

    def start(self, seconds: float) -> _Bound:
        """Bound the current task for ``seconds`` (rounded up to the next tenth)."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        key = math.ceil((loop.time() + seconds) * self._GRAIN)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = set()
            loop.call_at(key / self._GRAIN, self._expire, key)
        bound = _Bound(task, bucket)
        bucket.add(bound)
        return bound

    def _expire(self, key: int) -> None:
        for bound in self._buckets.pop(key, ()):
            bound.expired = True
            bound.task.cancel()


class _Bound:
    __slots__ = ("bucket", "expired", "task")

    def __init__(self, task: asyncio.Task[Any], bucket: set[_Bound]) -> None:
        self.task = task
        self.bucket = bucket
        self.expired = False


async def _coarsely_bounded(a: Attempt, awaitable: Awaitable[Any]) -> ToolResult:
    """``awaitable`` under ``a.timeout`` on shared timers, with ``asyncio.timeout``'s rules: the
    bound's own cancellation becomes a timeout; any other cancellation propagates."""
    assert a.coarse is not None
    assert a.timeout is not None
    bound = a.coarse.start(a.timeout)
    try:
        result = await awaitable
    except asyncio.CancelledError:
        if bound.expired and bound.task.uncancel() == 0:
            return _timed_out(a, TimeoutError())
        raise
    finally:
        bound.bucket.discard(bound)
    if bound.expired:  # the tool swallowed the bound's cancellation and answered anyway
        bound.task.uncancel()
    return _checked(result)


async def with_backstop(
    send: Callable[[], Awaitable[tuple[ToolResult, Outcome]]],
    context: ToolContext,
    *,
    filtered: Callable[[], bool],
    max_bytes: int,
) -> tuple[ToolResult, Outcome]:
    """For a tool that returns untrusted content: the result of ``send`` cut to ``max_bytes``
    and run through the host's untrusted-content filter, whatever its status, unless the tool
    filtered during the call (``filtered()``), so nothing from outside reaches the model
    unfiltered and nothing is filtered twice."""
    result, outcome = await send()
    if outcome != "executed" or filtered():
        return result, outcome
    from ..tools import truncate_result
    from ..untrusted import filter_result

    return await filter_result(context, truncate_result(result, max_bytes)), outcome


async def with_retries(
    a: Attempt, slot: CallSlot, *, backoff: float, backoff_max: float
) -> tuple[ToolResult, Outcome]:
    """Attempts until one does not fail retryably or the tool's ``max_retries`` are used
    (``slot.attempts`` counts them). A cancelled run answers the call as cancelled; when the
    task itself is cancelled the slot is answered so, then the cancellation propagates."""
    attempts = 0
    try:
        while True:
            attempts += 1
            slot.attempts = attempts
            result = await attempt(a)
            if (
                result.status is ToolStatus.ERROR
                and result.retryable
                and attempts <= a.tool.policy.max_retries
                and not isinstance(result.exception, Retry)  # the model tries again, not the host
            ):
                await asyncio.sleep(min(backoff * 2 ** (attempts - 1), backoff_max))
                continue
            return result, "executed"
    except RunCancelled as exc:
        return result_for(exc, a.tool), "cancelled"
    except asyncio.CancelledError as exc:
        slot.answer(CallEvent.SETTLE, "cancelled", result_for(exc, a.tool))
        raise
