"""Class-based tools: a toolbox configured through its constructor, each public method a tool."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import attrs

from ._errors import ToolDefinitionError
from ._model import Tool
from ._names import validate_tool_name


class Toolbox:
    """Base class of toolboxes: tools that share configuration or a client.

    Configure a toolbox through its constructor; :meth:`tools` returns its tools bound to the
    instance. Every public method (a name not starting with ``_``) is a tool; methods decorated
    with ``@tool(...)`` keep their options. Set ``marked_only = True`` to offer only decorated
    methods. Hidden parameters (``ToolContext``, ``Injected[...]``) work as on functions.

    **Example**::

        class Notes(Toolbox):
            def __init__(self, root: Path) -> None:
                self.root = root

            def read_note(self, title: Annotated[str, "Title of the note."]) -> str:
                \"\"\"Read one note.\"\"\"
                return (self.root / f"{title}.md").read_text()

            @tool(requires_approval=True, side_effects=["writes_files"])
            def write_note(self, title: str, text: str) -> None:
                \"\"\"Write a note, replacing one with the same title.\"\"\"

        tools = Notes(Path("notes")).tools()
    """

    marked_only: ClassVar[bool] = False

    def tools(self, *, prefix: str = "") -> tuple[Tool, ...]:
        """The tools of this toolbox, bound to it, in definition order (base classes first).

        ``prefix`` is put before every name, so two instances can be registered side by side.

        :raises ToolDefinitionError: for a method that cannot be a tool (naming it).
        """
        members: dict[str, Any] = {}
        for klass in reversed(type(self).__mro__):
            if klass is Toolbox or klass is object or not issubclass(klass, Toolbox):
                continue
            for name, value in vars(klass).items():
                if name.startswith("_") or name in _RESERVED:
                    continue
                members.pop(name, None)
                members[name] = value
        out: list[Tool] = []
        for name, value in members.items():
            if isinstance(value, Tool):
                bound = value.__get__(self, type(self))
            elif inspect.isfunction(value) and not self.marked_only:
                bound = Tool.from_function(getattr(self, name))
            else:
                continue
            if prefix:
                validate_tool_name(prefix + bound.name)
                bound = attrs.evolve(bound, name=prefix + bound.name)
            if bound.is_method:
                raise ToolDefinitionError(f"{type(self).__name__}.{name} could not be bound")
            out.append(bound)
        return tuple(out)


_RESERVED = frozenset(vars(Toolbox)) | {"marked_only"}
