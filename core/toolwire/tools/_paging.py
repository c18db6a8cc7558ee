"""Paging for tools that return long lists: ``page`` from 1, ``has_more``, and a depth cap."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Generic, TypeVar

import attrs

from ._errors import ArgumentsInvalid
from ._page_number import PageNumber

__all__ = ["Page", "PageNumber", "Paging"]

T = TypeVar("T")


def _as_tuple(items: Iterable[Any]) -> tuple[Any, ...]:
    # A function, not the builtin ``tuple``, as the converter of ``Page.items``: attrs reads a
    # converter's signature, and a builtin's is parsed from its text by ``tokenize``, whose
    # patterns cost milliseconds to compile at every start.
    return tuple(items)


@attrs.frozen(kw_only=True)
class Page(Generic[T]):
    """One page of results as the model sees it: the items, the page number, and ``has_more``.

    There is deliberately no total: counting everything costs the tool, and a model only needs to
    know whether to ask for the next page.
    """

    items: tuple[T, ...] = attrs.field(converter=_as_tuple)
    page: int
    has_more: bool


def _positive(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{attribute.name} must be an integer >= 1; got {value!r}")


@attrs.frozen
class Paging:
    """How a tool pages: ``page_size`` items per page, at most ``max_pages`` pages deep.

    A page past the cap is refused with a message naming the last page, so the model stops
    instead of paging forever; on the last allowed page ``has_more`` is False.

    **Example**::

        PAGING = Paging(page_size=10, max_pages=5)

        @tool
        def search(query: str, page: PageNumber = 1) -> Page[Hit]:
            PAGING.check(page)
            size = PAGING.page_size
            hits = backend.search(query, offset=PAGING.offset(page), limit=size + 1)
            return PAGING.page(page, hits[:size], has_more=len(hits) > size)
    """

    page_size: int = attrs.field(default=10, validator=_positive)
    max_pages: int = attrs.field(default=10, validator=_positive)

    def check(self, page: int, *, argument: str = "page") -> None:
        """Refuse a page number below 1 or past the cap.

        :raises ArgumentsInvalid: naming the page that arrived and the last page.
        """
        if isinstance(page, bool) or not isinstance(page, int) or page < 1:
            raise ArgumentsInvalid(
                [f"{argument}: got {page!r}; pages start at 1 (leave {argument} out for page 1)."]
            )
        if page > self.max_pages:
            raise ArgumentsInvalid(
                [
                    f"{argument}: got {page}; the last page this tool serves is {self.max_pages}. "
                    f"Ask for a page from 1 to {self.max_pages}, or narrow the request."
                ]
            )

    def offset(self, page: int) -> int:
        """The index of the first item of ``page``."""
        self.check(page)
        return (page - 1) * self.page_size

    def page(self, page: int, items: Iterable[T], *, has_more: bool) -> Page[T]:
        """A page of items fetched by the tool; ``has_more`` is cleared on the last allowed page."""
        self.check(page)
        return Page(items=tuple(items), page=page, has_more=has_more and page < self.max_pages)

    def slice(self, items: Sequence[T], page: int, *, argument: str = "page") -> Page[T]:
        """Page ``page`` of an already complete sequence.

        A page past the end of the items is refused naming the last page, like one past the cap.
        """
        self.check(page, argument=argument)
        last = max(1, min(self.max_pages, -(-len(items) // self.page_size)))
        if page > last:
            raise ArgumentsInvalid(
                [
                    f"{argument}: got {page}; the last page is {last}. "
                    f"Ask for a page from 1 to {last}."
                ]
            )
        start = (page - 1) * self.page_size
        chunk = items[start : start + self.page_size]
        return Page(items=tuple(chunk), page=page, has_more=page < last)
