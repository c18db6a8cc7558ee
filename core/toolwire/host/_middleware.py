"""``toolwire.middleware``: execution middleware as ``async def (call, context, call_next)``."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Generator
from typing import TYPE_CHECKING, Any, TypeAlias, overload

from .._markers import hookimpl

if TYPE_CHECKING:
    from ..messages import ToolCall
    from ..tools import ToolContext, ToolResult

CallNext: TypeAlias = "Callable[[], Awaitable[ToolResult]]"
Middleware: TypeAlias = "Callable[[ToolCall, ToolContext, CallNext], Awaitable[ToolResult]]"
ExecuteWrapper: TypeAlias = Callable[..., Generator[None, Any, Any]]

__all__ = ["CallNext", "Middleware", "middleware"]


@overload
def middleware(func: Middleware, /) -> ExecuteWrapper: ...


@overload
def middleware(
    *, tryfirst: bool = False, trylast: bool = False
) -> Callable[[Middleware], ExecuteWrapper]: ...


def middleware(
    func: Middleware | None = None, /, *, tryfirst: bool = False, trylast: bool = False
) -> ExecuteWrapper | Callable[[Middleware], ExecuteWrapper]:
    """Turn ``async def mw(call, context, call_next) -> ToolResult`` into execution middleware.

    The result is a ``wrapper=True`` implementation of ``toolwire_execute_tool``; keep it as an
    attribute of a plugin module (or object) under any name, like any other hookimpl.
    ``await call_next()`` runs the rest of the chain (inner middleware, then the tool) and returns
    its :class:`~toolwire.ToolResult`; call it at most once. Not calling it skips the tool: return
    a result of your own (for example ``ToolResult.blocked(...)``) or raise
    :class:`~toolwire.ToolBlocked`. ``call`` and ``context`` are what the tool receives; the inner
    chain was created with them, so a middleware cannot swap them.

    ``tryfirst`` / ``trylast`` place the middleware outermost / innermost among the wrappers.

    **Example**::

        @toolwire.middleware
        async def log_duration(call, context, call_next):
            started = time.perf_counter()
            try:
                return await call_next()
            finally:
                print(call.name, time.perf_counter() - started)
    """

    def decorate(mw: Middleware) -> ExecuteWrapper:
        if not inspect.iscoroutinefunction(mw):
            raise TypeError(
                f"toolwire.middleware takes an 'async def (call, context, call_next)' function, "
                f"got {mw!r}"
            )

        def toolwire_execute_tool(
            call: ToolCall, context: ToolContext
        ) -> Generator[None, Any, Any]:
            inner = yield
            return _chain(mw, call, context, inner)

        toolwire_execute_tool.__name__ = getattr(mw, "__name__", "middleware")
        toolwire_execute_tool.__qualname__ = getattr(mw, "__qualname__", "middleware")
        toolwire_execute_tool.__doc__ = mw.__doc__
        # Not __wrapped__: pluggy reads the hookimpl's signature, which must stay (call, context).
        toolwire_execute_tool.middleware = mw  # type: ignore[attr-defined]
        marked: ExecuteWrapper = hookimpl(
            wrapper=True,
            tryfirst=tryfirst,
            trylast=trylast,
            specname="toolwire_execute_tool",
        )(toolwire_execute_tool)
        return marked

    if func is not None:
        return decorate(func)
    return decorate


async def _chain(mw: Middleware, call: ToolCall, context: ToolContext, inner: Any) -> ToolResult:
    """Run one middleware around the awaitable produced by the inner implementations."""
    used = False

    async def call_next() -> ToolResult:
        nonlocal used
        if used:
            raise RuntimeError(
                f"middleware {getattr(mw, '__qualname__', mw)!r} called call_next() twice for "
                f"tool call {call.id!r}; the inner chain runs once"
            )
        used = True
        if inner is None:
            from ..tools._errors import not_executed

            return not_executed(call.name)
        result: ToolResult = await inner
        return result

    try:
        return await mw(call, context, call_next)
    finally:
        if not used and inspect.iscoroutine(inner):
            inner.close()
