"""Cancellation of a run while tools run: stopping the tool, answering every call."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Sequence
from typing import Any

from ..tools._errors import RunCancelled
from ..tools._result import ToolResult
from ._lifecycle import CallEvent
from ._state import CallSlot

__all__ = ["RunCancelled", "answer_cancelled", "until_cancelled"]


async def until_cancelled(awaitable: Awaitable[Any], cancel: asyncio.Event) -> Any:
    """Await ``awaitable`` unless ``cancel`` is set first (then cancel it, raise RunCancelled)."""
    if cancel.is_set():
        if inspect.iscoroutine(awaitable):
            awaitable.close()
        raise RunCancelled
    work = asyncio.ensure_future(awaitable)
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait({work, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        work.cancel()
        waiter.cancel()
        await asyncio.gather(work, waiter, return_exceptions=True)
        raise
    if work.done():
        waiter.cancel()
        return work.result()
    work.cancel()
    await asyncio.gather(work, return_exceptions=True)
    raise RunCancelled


def answer_cancelled(slots: Sequence[CallSlot]) -> None:
    """Answer every call still without a result (deferred ones too) as cancelled."""
    for slot in slots:
        if slot.result is None:
            slot.answer(
                CallEvent.STOP,
                "cancelled",
                ToolResult.error("Cancelled: the run was cancelled before this call finished."),
            )
