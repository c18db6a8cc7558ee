"""The names of the prompted tool-calling dialects, and checking a dialect name."""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

Dialect: TypeAlias = Literal["json", "xml", "ptype"]

DIALECTS: Final[tuple[Dialect, ...]] = ("json", "xml", "ptype")
"""Every dialect: ``json`` (``<tool_call>{…}</tool_call>``), ``xml`` (``<name><arg>…</arg></name>``)
and ``ptype`` (``name("a", 5)``)."""


def check_dialect(value: object) -> Dialect:
    """``value`` as a :data:`Dialect`; a ``ValueError`` naming it and the valid ones otherwise."""
    if value not in DIALECTS:
        valid = ", ".join(repr(d) for d in DIALECTS)
        raise ValueError(f"unknown tool dialect {value!r}; valid dialects: {valid}")
    return value
