"""Containing what a plugin's hook raises: what it was, whether it is the task's real
cancellation, and which plugin raised it."""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import pluggy

T = TypeVar("T")


def describe(exc: BaseException) -> str:
    """The exception's type and message, as one line for a person or a model."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class HookTimedOut(Exception):
    """A hook's awaitable answer took longer than its bound."""

    def __init__(self, hook: str, seconds: float, setting: str) -> None:
        super().__init__(f"{hook} took longer than {seconds:g} s ({setting})")
        self.hook = hook
        self.seconds = seconds
        self.setting = setting


async def bounded(awaitable: Awaitable[T], hook: str, seconds: float, setting: str) -> T:
    """Await a hook's answer for at most ``seconds``.

    :raises HookTimedOut: when the bound ran out (a ``TimeoutError`` the hook raised itself
        passes as it is).
    """
    import asyncio  # loaded already: a hook's answer is being awaited

    try:
        async with asyncio.timeout(seconds) as scope:
            return await awaitable
    except TimeoutError as exc:
        if scope.expired():
            raise HookTimedOut(hook, seconds, setting) from exc
        raise


def is_cancellation(exc: BaseException) -> bool:
    """True when ``exc`` is the cancellation of the running task (a real Ctrl-C under
    ``asyncio.run`` arrives so): the one exception a hook's failure must let through.

    A ``CancelledError`` a plugin raises itself, without its task being cancelled, is that
    plugin's failure like any other.
    """
    import asyncio  # only asked about an exception raised under asyncio

    if not isinstance(exc, asyncio.CancelledError):
        return False
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop: nothing to cancel
        return False
    return task is not None and task.cancelling() > 0


def raised_by(exc: BaseException, impls: Iterable[pluggy.HookImpl]) -> str | None:
    """The name of the plugin whose implementation raised ``exc``: the innermost frame of its
    traceback that belongs to one of ``impls``, also in the exceptions it was raised from (a time
    bound's cancellation passes through the coroutine it stopped); None when none does."""
    owners = {}
    for impl in impls:
        code = getattr(impl.function, "__code__", None)
        if code is not None:
            owners[code] = impl.plugin_name
    current: BaseException | None = exc
    for _ in range(4):
        if current is None:
            break
        found = None
        tb = current.__traceback__
        while tb is not None:
            found = owners.get(tb.tb_frame.f_code, found)
            tb = tb.tb_next
        if found is not None:
            return found
        current = current.__cause__ or current.__context__
    return None
