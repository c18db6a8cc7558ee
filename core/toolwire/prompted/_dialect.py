"""The names of the prompted tool-calling dialects, checking them, and the dialect of each tool."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final, Literal, TypeAlias

import attrs

Dialect: TypeAlias = Literal["json", "xml", "ptype", "python", "typescript"]
"""The name of a way to write tool calls in text (see :data:`DIALECTS`)."""

DIALECTS: Final[tuple[Dialect, ...]] = ("json", "xml", "ptype", "python", "typescript")
"""Every dialect: ``json`` (``<tool_call>{…}</tool_call>``), ``xml``
(``<name><arg>…</arg></name>``), ``ptype`` (``name("a", 5)``), ``python``
(``name('a', 5, flag=True)``) and ``typescript`` (``name("a", undefined, true)``)."""

CALL_DIALECTS: Final[frozenset[Dialect]] = frozenset({"ptype", "python", "typescript"})
"""The dialects whose calls are function calls on a line of their own (``name(…)``)."""


def check_dialect(value: object) -> Dialect:
    """``value`` as a :data:`Dialect`; a ``ValueError`` naming it and the valid ones otherwise."""
    if value not in DIALECTS:
        valid = ", ".join(repr(d) for d in DIALECTS)
        raise ValueError(f"unknown tool dialect {value!r}; valid dialects: {valid}")
    return value


def _checked_per_tool(value: Mapping[str, object]) -> Mapping[str, Dialect]:
    checked: dict[str, Dialect] = {}
    for name, dialect in value.items():
        try:
            checked[name] = check_dialect(dialect)
        except ValueError as exc:
            raise ValueError(f"tool {name!r}: {exc}") from None
    return MappingProxyType(checked)


@attrs.frozen(hash=False)
class ToolDialects:
    """The dialect each tool is called in: its entry in ``per_tool``, else ``default``.

    Everything that takes a dialect (the catalogue, the scanner, the history) also takes a
    ``ToolDialects``, so one request can offer tools in several dialects.

    Example::

        ToolDialects("ptype", {"write_file": "xml"})
    """

    default: Dialect = attrs.field(default="json", converter=check_dialect)
    per_tool: Mapping[str, Dialect] = attrs.field(factory=dict, converter=_checked_per_tool)

    def of(self, name: str) -> Dialect:
        """The dialect the tool ``name`` is called in."""
        return self.per_tool.get(name, self.default)

    def in_use(self, names: Iterable[str]) -> tuple[Dialect, ...]:
        """The dialects of the tools ``names``, in the order of :data:`DIALECTS` (the default
        alone when there are none)."""
        used = {self.of(name) for name in names}
        return tuple(d for d in DIALECTS if d in used) or (self.default,)

    def aliased(self, alias: Mapping[str, str]) -> ToolDialects:
        """The same choice with tools known by other names (``alias`` maps a tool's name to the
        name it is offered under)."""
        if not alias:
            return self
        per_tool = {alias.get(name, name): dialect for name, dialect in self.per_tool.items()}
        return ToolDialects(self.default, per_tool)


DialectChoice: TypeAlias = Dialect | ToolDialects
"""One dialect for every tool, or a :class:`ToolDialects`."""


def tool_dialects(choice: object) -> ToolDialects:
    """``choice`` (a dialect name or a :class:`ToolDialects`) as a :class:`ToolDialects`."""
    if isinstance(choice, ToolDialects):
        return choice
    return ToolDialects(check_dialect(choice))
