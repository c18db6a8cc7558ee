"""A run's conversation folded into its wire form once, each request adding only its new
messages."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Generic, Protocol, Self, TypeVar

if TYPE_CHECKING:
    from ..messages import Message

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)

KEPT_RUNS = 64
"""The runs whose folds a :class:`RenderedHistory` keeps (the most recently asked for)."""


class HistoryFold(Protocol[R_co]):
    """A conversation's wire form, built message by message."""

    def feed(self, message: Message) -> None:
        """Add the next message of the conversation."""

    def copy(self) -> Self:
        """An independent fold in the same state (feeding it leaves this one as it is)."""

    def result(self) -> R_co:
        """The wire form of the messages fed so far; it must not change this fold."""


class RenderedHistory(Generic[R]):
    """The fold of each run's conversation up to its last request, so the next request of the
    run folds in only the messages new to it.

    The loop sends a run's conversation again in every round with the same message objects,
    new ones appended; a request whose messages start with the messages of the run's last
    request (the same objects, or equal ones: messages are values) continues from that
    request's fold, any other one (a conversation compacted or edited) is folded from its
    start. Folds of the most recently asked runs are kept (:data:`KEPT_RUNS`), so runs that
    share an adapter do not push each other out; a run beyond them is folded from its start,
    as without this.

    What a fold returns is shared with the next request's fold (a list is copied before it
    grows): it must not be changed after it is returned.

    :param start: an empty fold.
    :param kept: how many runs' folds are kept.
    """

    __slots__ = ("_keep", "_kept", "_start")

    def __init__(self, start: Callable[[], HistoryFold[R]], *, kept: int = KEPT_RUNS) -> None:
        self._start = start
        self._keep = kept
        self._kept: OrderedDict[str, tuple[tuple[Message, ...], HistoryFold[R]]] = OrderedDict()

    def get(self, run_id: str, messages: Sequence[Message]) -> R:
        """The fold of ``messages``, the conversation of the run ``run_id`` now."""
        messages = tuple(messages)
        last = self._kept.pop(run_id, None)
        fold: HistoryFold[R] | None = None
        if last is not None:
            before, kept = last
            # Identical messages compare at C speed; the system prompt the loop puts first is
            # a new, equal object every round.
            if len(before) <= len(messages) and messages[: len(before)] == before:
                fold = kept.copy()
                new = messages[len(before) :]
        if fold is None:
            fold = self._start()
            new = messages
        for message in new:
            fold.feed(message)
        self._kept[run_id] = (messages, fold)
        while len(self._kept) > self._keep:
            self._kept.popitem(last=False)
        return fold.result()

    def __len__(self) -> int:
        """The runs kept."""
        return len(self._kept)

    def clear(self) -> None:
        """Forget every kept fold."""
        self._kept.clear()
