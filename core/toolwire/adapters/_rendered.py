"""The wire form of an offer, kept while the loop offers the same functions."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ._names import WIRE_NAME, ToolNames, aliased_functions

if TYPE_CHECKING:
    from ..tools import FunctionSpec


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
