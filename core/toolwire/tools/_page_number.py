"""The type of a paging tool's ``page`` parameter, apart from the paging helpers: declaring such
a tool needs the type, not the classes of :mod:`._paging`."""

from __future__ import annotations

from typing import Annotated, TypeAlias

PageNumber: TypeAlias = Annotated[int, "Page of results, starting at 1.", {"minimum": 1}]
"""The type of a tool's ``page`` parameter: an integer from 1 (``0`` is refused, not "no page")."""
