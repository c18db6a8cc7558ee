"""The wire form of an offer, kept while the loop offers the same functions, and of each
message, kept while the message lives."""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import attrs

from ._names import WIRE_NAME, ToolNames, aliased_functions

if TYPE_CHECKING:
    from ..tools import FunctionSpec

T = TypeVar("T")


@attrs.frozen
class WireTools:
    """One rendering of the offered functions.

    :ivar functions: the functions as offered (canonical names).
    :ivar names: their aliases under the API's name rule; pass it to :func:`wire_request`.
    :ivar tools: the API's ``tools`` array, rendered from the functions under their wire names.
    """

    functions: tuple[FunctionSpec, ...]
    names: ToolNames
    tools: list[dict[str, Any]]


class RenderedTools:
    """The last rendered ``tools`` array of an adapter, reused while the same functions are
    offered.

    The loop hands over the very same tuple of :class:`FunctionSpec` objects round after round
    while its offer is unchanged (and the same spec objects while the tools are), so an
    identity check is enough to skip working out the aliases and rendering the tools again.

    :param render: the API's ``tools`` array for functions under their wire names.
    :param pattern: the names the API accepts (fully matched).
    :param max_length: the longest name the API accepts.
    :param spell: the readable alias of a refused name (see :class:`ToolNames`), for an API whose
        rule is not ``[a-zA-Z0-9_-]``.
    """

    def __init__(
        self,
        render: Callable[[Sequence[FunctionSpec]], list[dict[str, Any]]],
        *,
        pattern: re.Pattern[str] = WIRE_NAME,
        max_length: int = 64,
        spell: Callable[[str], str] | None = None,
    ) -> None:
        self._render = render
        self._pattern = pattern
        self._max_length = max_length
        self._spell = spell
        self._last: WireTools | None = None

    def get(self, functions: tuple[FunctionSpec, ...]) -> WireTools:
        """The rendering of ``functions`` (made again only when they changed)."""
        last = self._last
        if last is not None and (
            last.functions is functions
            or (
                len(last.functions) == len(functions)
                and all(a is b for a, b in zip(last.functions, functions, strict=True))
            )
        ):
            return last
        names = ToolNames(
            (f.name for f in functions),
            pattern=self._pattern,
            max_length=self._max_length,
            spell=self._spell,
        )
        rendered = WireTools(
            functions=functions,
            names=names,
            tools=self._render(aliased_functions(functions, names)),
        )
        self._last = rendered
        return rendered

    def clear(self) -> None:
        """Forget the kept rendering."""
        self._last = None


class RenderedMessages(Generic[T]):
    """The wire form of each message of a conversation, rendered once and kept.

    Messages never change once written, and the loop hands the same message objects to its
    adapter round after round, so an adapter that renders each message through
    :meth:`get` works only on the messages new to a request; the rest of the conversation
    comes from here. Messages are kept by identity: an equal message in another object is
    rendered anew. A rendering that depends on more than its message (the id a tool result
    answers on the wire, say) is kept with that ``context``, and a message asked for under
    another context is rendered again. An entry goes when its message is collected, so a
    finished conversation leaves nothing behind.

    The kept forms are shared by every request that carries the message: they must not be
    changed after rendering (build a new list or dict where a request needs another one).

    :param render: the wire form of a message under a context (None when the caller gives
        none); it may return None (a message the API does not receive).
    :param limit: the most messages kept at once (None: no limit); past it, the one kept
        longest is forgotten.
    """

    __slots__ = ("_kept", "_limit", "_render")

    def __init__(self, render: Callable[[Any, Hashable], T], limit: int | None = None) -> None:
        self._render = render
        self._limit = limit
        self._kept: dict[int, tuple[weakref.ref[Any], Hashable, T]] = {}

    def get(self, message: object, context: Hashable = None) -> T:
        """The wire form of ``message`` under ``context`` (rendered only the first time)."""
        key = id(message)
        entry = self._kept.get(key)
        if entry is not None and entry[0]() is message and entry[1] == context:
            return entry[2]
        rendered = self._render(message, context)
        kept = self._kept

        def forget(_: weakref.ref[Any]) -> None:
            kept.pop(key, None)

        try:
            ref = weakref.ref(message, forget)
        except TypeError:  # an object that cannot be referred to weakly is not kept
            return rendered
        kept[key] = (ref, context, rendered)
        if self._limit is not None and len(kept) > self._limit:
            kept.pop(next(iter(kept)), None)
        return rendered

    def __len__(self) -> int:
        """The messages kept."""
        return len(self._kept)

    def clear(self) -> None:
        """Forget every kept rendering."""
        self._kept.clear()
