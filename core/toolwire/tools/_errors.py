"""Errors of the tool model: definitions that cannot work, and refused arguments."""

from __future__ import annotations

from collections.abc import Sequence


class ToolDefinitionError(ValueError):
    """A tool cannot be defined as written.

    Raised when the tool is defined (at import of the module that declares it), never during a run:
    a name providers refuse, a parameter type JSON Schema cannot express, a malformed explicit
    schema. The message names the function and the parameter.

    ``problems`` holds every problem found in a parameter schema, each ``$.json.path: what is
    wrong``; it is empty for an error that is not about the schema.
    """

    def __init__(self, message: str, *, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems: tuple[str, ...] = tuple(problems)


class ArgumentsInvalid(ValueError):
    """Arguments of a call were refused; the text is written for the model to correct itself.

    ``problems`` holds one refusal per problem found, each naming the argument path, the value
    that arrived (shortened), what would be valid, and for an optional argument that it may be
    left out. ``str()`` of the exception joins them under one line naming the tool.
    """

    def __init__(self, problems: Sequence[str], *, tool: str | None = None) -> None:
        self.problems: tuple[str, ...] = tuple(problems) or ("the arguments were refused",)
        self.tool = tool
        super().__init__(self._text())

    def _text(self) -> str:
        head = f"Invalid arguments for tool {self.tool}" if self.tool else "Invalid arguments"
        if len(self.problems) == 1:
            return f"{head}: {self.problems[0]}"
        lines = "\n".join(f"- {problem}" for problem in self.problems)
        return f"{head} ({len(self.problems)} problems):\n{lines}"

    def __str__(self) -> str:
        return self._text()
