"""What the surfaces need of a loop: the protocol a replacement loop implements.

The terminal chat, ``toolwire run``, batch and the web chat run conversations through
:meth:`toolwire.Host.new_loop`, which gives the loop an enabled plugin provides
(``toolwire_loop``) or the built-in :class:`~toolwire.loop.ToolCallingLoop`. Only what this
module names is used of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..events import Event
from ..messages import Message
from ._run import Decision, Run
from ._state import Approver


class UnknownRun(LookupError, ValueError):
    """A run id that no stored run has (or a loop that keeps no runs)."""


@runtime_checkable
class RunEvents(Protocol):
    """A run's events as they happen; :attr:`run` is the :class:`Run` once the iteration ended,
    and closing the iterator early stops the run (:class:`~toolwire.loop.RunStream` is one)."""

    run: Run | None

    def __aiter__(self) -> AsyncIterator[Event]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class RunLoop(Protocol):
    """A loop that runs conversations for a host: the built-in
    :class:`~toolwire.loop.ToolCallingLoop`, or one an agent-mode plugin returns from
    ``toolwire_loop``. It reaches the model through ``await host.get_adapter()`` and the tools
    through the host, so the adapters and tools stay as they are.

    Every surface passes ``approval`` (asked for each call that needs a person's decision) and,
    where the person chose one, ``tool_choice``; batch passes ``run_id`` and the job's options.
    A loop may refuse an option it does not support with a ``ValueError`` naming it.
    """

    @property
    def last_run(self) -> Run | None:
        """The last run this loop ended, also one that ended by cancellation or a deadline."""

    async def run(
        self,
        prompt_or_messages: str | Sequence[Message],
        *,
        approval: Approver | None = None,
        cancel: asyncio.Event | None = None,
        **options: Any,
    ) -> Run:
        """Run one conversation to its end."""

    async def resume(
        self,
        run: Run | str,
        decisions: Mapping[str, Decision] | None = None,
        *,
        approval: Approver | None = None,
        cancel: asyncio.Event | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> Run:
        """Go on with a run that ended with deferred calls or was interrupted."""

    def stream(self, prompt_or_messages: str | Sequence[Message], **options: Any) -> RunEvents:
        """Run like :meth:`run`, yielding every event as it happens."""

    def load(self, run_id: str) -> Run:
        """The stored run ``run_id``.

        :raises UnknownRun: when no run by that id is stored.
        """
