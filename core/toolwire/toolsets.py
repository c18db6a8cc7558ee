"""Toolsets: sources of tools, and small compositions over them.

A toolset is anything with a ``tools()`` method returning its current tools by name. The
compositions here wrap any toolset and change what it offers, without copying it: a wrapped
toolset whose tools change (an MCP server after ``notifications/tools/list_changed``) is seen
changed through every wrapper on the next ``tools()``.

**Example**::

    notes = toolset([search_notes, delete_note])
    offered = (
        notes.filtered(exclude=["delete_note"])
        .prefixed("notes_")
        .approval_required(["notes_search_notes"])
    )
    combined(offered, toolset([calculator])).tools()   # {"calculator": …, "notes_search_notes": …}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

import attrs

from .tools import Tool, ToolDefinitionError
from .tools._names import validate_tool_name

__all__ = [
    "ApprovalRequiredToolset",
    "CombinedToolset",
    "ExternalToolset",
    "FilteredToolset",
    "PrefixedToolset",
    "RenamedToolset",
    "StaticToolset",
    "ToolSource",
    "Toolset",
    "combined",
    "external",
    "toolset",
]


@runtime_checkable
class ToolSource(Protocol):
    """Anything that can say which tools it has right now."""

    def tools(self) -> Mapping[str, Tool]:
        """The current tools, by name."""
        ...


class Toolset:
    """Base of every toolset here: ``tools()`` plus the composition methods.

    Subclasses implement :meth:`tools`; the methods return new wrappers and never change
    ``self``.
    """

    def tools(self) -> Mapping[str, Tool]:
        """The current tools, by name."""
        raise NotImplementedError

    def filtered(
        self,
        predicate: Callable[[Tool], bool] | None = None,
        *,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] = (),
    ) -> FilteredToolset:
        """Only the tools named in ``include`` (all when None), minus ``exclude`` (exclude wins),
        for which ``predicate`` (when given) is true."""
        return FilteredToolset(self, predicate=predicate, include=include, exclude=exclude)

    def prefixed(self, prefix: str) -> PrefixedToolset:
        """Every tool named ``<prefix><name>``."""
        return PrefixedToolset(self, prefix)

    def renamed(self, names: Mapping[str, str]) -> RenamedToolset:
        """Tools renamed by ``{new name: current name}``; unnamed tools keep their names."""
        return RenamedToolset(self, names)

    def approval_required(self, names: Iterable[str] | bool = True) -> ApprovalRequiredToolset:
        """Every call of the named tools (all of them with ``True``) needs approval."""
        return ApprovalRequiredToolset(self, names)


def _as_toolset(source: ToolSource | Iterable[Tool]) -> ToolSource:
    if isinstance(source, ToolSource):
        return source
    return StaticToolset(source)


class StaticToolset(Toolset):
    """A fixed collection of tools. Two tools with one name are refused."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        collected: dict[str, Tool] = {}
        for tool in tools:
            if not isinstance(tool, Tool):
                raise ToolDefinitionError(
                    f"a toolset holds toolwire.Tool objects; got {tool!r} "
                    "(decorate functions with @toolwire.tool)"
                )
            if tool.name in collected:
                raise ToolDefinitionError(f"tool name {tool.name!r} appears twice in one toolset")
            collected[tool.name] = tool
        self._tools = dict(sorted(collected.items()))

    def tools(self) -> Mapping[str, Tool]:
        return self._tools

    def __repr__(self) -> str:
        return f"StaticToolset({list(self._tools)!r})"


class CombinedToolset(Toolset):
    """The tools of several toolsets. A name two of them use is refused naming both."""

    def __init__(self, *sources: ToolSource | Iterable[Tool]) -> None:
        self.sources = tuple(_as_toolset(s) for s in sources)

    def tools(self) -> Mapping[str, Tool]:
        out: dict[str, Tool] = {}
        owners: dict[str, ToolSource] = {}
        for source in self.sources:
            for name, tool in source.tools().items():
                if name in out:
                    raise ToolDefinitionError(
                        f"tool name {name!r} is offered by two toolsets: {owners[name]!r} and "
                        f"{source!r}; prefix or rename one of them"
                    )
                out[name] = tool
                owners[name] = source
        return dict(sorted(out.items()))

    def __repr__(self) -> str:
        return f"CombinedToolset{self.sources!r}"


class FilteredToolset(Toolset):
    """The tools of ``inner`` that pass ``include``, ``exclude`` and ``predicate``."""

    def __init__(
        self,
        inner: ToolSource,
        *,
        predicate: Callable[[Tool], bool] | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] = (),
    ) -> None:
        self.inner = inner
        self.predicate = predicate
        self.include = _names(include, "include") if include is not None else None
        self.exclude = _names(exclude, "exclude")

    def tools(self) -> Mapping[str, Tool]:
        return {
            name: tool
            for name, tool in self.inner.tools().items()
            if name not in self.exclude
            and (self.include is None or name in self.include)
            and (self.predicate is None or self.predicate(tool))
        }

    def __repr__(self) -> str:
        return f"{self.inner!r}.filtered()"


class PrefixedToolset(Toolset):
    """The tools of ``inner``, each named ``<prefix><name>``."""

    def __init__(self, inner: ToolSource, prefix: str) -> None:
        if not isinstance(prefix, str):
            raise ToolDefinitionError(f"a tool-name prefix must be a string; got {prefix!r}")
        self.inner = inner
        self.prefix = prefix

    def tools(self) -> Mapping[str, Tool]:
        if not self.prefix:
            return self.inner.tools()
        return {
            self.prefix + name: _with_name(tool, self.prefix + name)
            for name, tool in self.inner.tools().items()
        }

    def __repr__(self) -> str:
        return f"{self.inner!r}.prefixed({self.prefix!r})"


class RenamedToolset(Toolset):
    """The tools of ``inner`` renamed by ``{new name: current name}``.

    A current name the inner toolset does not have is ignored (a server may drop a tool);
    a new name that collides with a kept name is refused.
    """

    def __init__(self, inner: ToolSource, names: Mapping[str, str]) -> None:
        if not isinstance(names, Mapping):
            raise ToolDefinitionError(
                f"renames are a mapping of new name to current name; got {names!r}"
            )
        for new in names:
            validate_tool_name(new)
        self.inner = inner
        self.names = dict(names)
        self._old_to_new = {old: new for new, old in names.items()}

    def tools(self) -> Mapping[str, Tool]:
        out: dict[str, Tool] = {}
        for name, tool in self.inner.tools().items():
            new = self._old_to_new.get(name, name)
            if new in out:
                raise ToolDefinitionError(
                    f"renaming gives two tools the name {new!r}; rename {name!r} differently"
                )
            out[new] = _with_name(tool, new) if new != name else tool
        return dict(sorted(out.items()))

    def __repr__(self) -> str:
        return f"{self.inner!r}.renamed({self.names!r})"


class ApprovalRequiredToolset(Toolset):
    """The tools of ``inner``; calls of the named ones (all with ``True``) need approval."""

    def __init__(self, inner: ToolSource, names: Iterable[str] | bool = True) -> None:
        self.inner = inner
        self.names: frozenset[str] | None = (
            None if names is True else frozenset() if names is False else _names(names, "names")
        )

    def tools(self) -> Mapping[str, Tool]:
        names = self.names
        return {
            name: (
                attrs.evolve(tool, policy=attrs.evolve(tool.policy, requires_approval=True))
                if (names is None or name in names) and not tool.policy.requires_approval
                else tool
            )
            for name, tool in self.inner.tools().items()
        }

    def __repr__(self) -> str:
        return f"{self.inner!r}.approval_required()"


class ExternalToolset(Toolset):
    """Tools the caller runs: schema only, every call ends the run as a deferred request."""

    def __init__(self, definitions: Iterable[Mapping[str, Any]]) -> None:
        tools = []
        for index, definition in enumerate(definitions):
            if not isinstance(definition, Mapping):
                raise ToolDefinitionError(
                    f"external tool #{index}: give a mapping with name, description and "
                    f"parameters; got {definition!r}"
                )
            unknown = set(definition) - {"name", "description", "parameters"}
            if unknown or "name" not in definition:
                raise ToolDefinitionError(
                    f"external tool #{index}: keys are name (required), description and "
                    f"parameters; got {sorted(definition)}"
                )
            tools.append(
                Tool.from_schema(
                    definition["name"],
                    definition.get("description", ""),
                    definition.get("parameters", {"type": "object", "properties": {}}),
                    external=True,
                )
            )
        self._static = StaticToolset(tools)

    def tools(self) -> Mapping[str, Tool]:
        return self._static.tools()

    def __repr__(self) -> str:
        return f"ExternalToolset({list(self._static.tools())!r})"


def toolset(tools: Iterable[Tool]) -> StaticToolset:
    """A toolset of fixed tools."""
    return StaticToolset(tools)


def combined(*sources: ToolSource | Iterable[Tool]) -> CombinedToolset:
    """One toolset over several (toolsets or plain iterables of tools)."""
    return CombinedToolset(*sources)


def external(definitions: Iterable[Mapping[str, Any]]) -> ExternalToolset:
    """A toolset of tools the caller runs, from ``{name, description, parameters}`` mappings."""
    return ExternalToolset(definitions)


def _with_name(tool: Tool, name: str) -> Tool:
    validate_tool_name(name)
    return attrs.evolve(tool, name=name)


def _names(value: Iterable[str], what: str) -> frozenset[str]:
    if isinstance(value, str):
        raise ToolDefinitionError(f"{what}: give tool names as a list, not the string {value!r}")
    names = frozenset(value)
    for name in names:
        if not isinstance(name, str):
            raise ToolDefinitionError(f"{what}: tool names are strings; got {name!r}")
    return names
