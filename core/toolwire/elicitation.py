"""Elicitation: a tool (an MCP server, through its tool) asks the person for input while it runs.

The host's side of it is small. A surface with a person in front of it (``toolwire chat``, the
web chat) runs its turns inside :func:`eliciting` with an :data:`Elicitor`: an async function
that shows an :class:`ElicitationRequest` (a message and a flat JSON Schema of the fields
wanted) and returns the person's :class:`ElicitationAnswer`. A tool asks with :func:`elicit`.
Where no elicitor is set (``toolwire batch``, ``toolwire mcp serve``, a plain ``Host.run``)
:func:`elicit` raises :class:`NoElicitor`, so the asking side can refuse clearly.

The elicitor is looked up from the task that runs the tool (a context variable), so two
conversations of one web chat each reach their own page.

**Example**::

    async def ask(request: ElicitationRequest) -> ElicitationAnswer:
        name = input(f"{request.message}\\nname: ")
        return ElicitationAnswer("accept", {"name": name})

    with eliciting(ask):
        run = await host.run("book a table")
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, Literal

import attrs

__all__ = [
    "ElicitationAnswer",
    "ElicitationRequest",
    "Elicitor",
    "FormField",
    "NoElicitor",
    "check_answer",
    "current_elicitor",
    "elicit",
    "eliciting",
    "form_fields",
]

Action = Literal["accept", "decline", "cancel"]


@attrs.frozen(kw_only=True)
class ElicitationRequest:
    """What a tool asks the person.

    ``source`` says who asks (``MCP server 'tickets'``), ``tool`` the host tool whose call asks
    (None when not known); ``message`` is the question; ``schema`` a flat JSON object schema
    whose properties are strings, numbers, integers, booleans or string enums (the fields of
    the form), or None when only a yes/no is wanted; ``url`` an address the person is asked to
    open instead of filling a form. The texts come from outside: a surface shows them as text,
    never as markup.
    """

    source: str
    message: str
    tool: str | None = None
    schema: Mapping[str, Any] | None = None
    url: str | None = None


@attrs.frozen
class ElicitationAnswer:
    """The person's answer: ``accept`` (with ``content``, the form's values by field name),
    ``decline`` (an explicit no) or ``cancel`` (dismissed)."""

    action: Action
    content: Mapping[str, Any] | None = None


Elicitor = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]
"""Shows a request to the person and returns the answer."""


class NoElicitor(Exception):
    """Nobody can be asked here: the surface running the tool has no person in front of it."""


_CURRENT: contextvars.ContextVar[Elicitor | None] = contextvars.ContextVar(
    "toolwire_elicitor", default=None
)


@contextlib.contextmanager
def eliciting(elicitor: Elicitor | None) -> Iterator[None]:
    """Within the block (and the tasks started in it), tools that ask reach ``elicitor``."""
    token = _CURRENT.set(elicitor)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_elicitor() -> Elicitor | None:
    """The elicitor of the running task, or None where nobody can be asked."""
    return _CURRENT.get()


async def elicit(request: ElicitationRequest) -> ElicitationAnswer:
    """Ask the person through the current elicitor; an accepted answer is checked against the
    request's schema (:func:`check_answer`).

    :raises NoElicitor: where no elicitor is set.
    :raises ValueError: when the elicitor's accepted content does not fit the schema.
    """
    elicitor = current_elicitor()
    if elicitor is None:
        raise NoElicitor(
            f"{request.source} asks for input ({request.message!r}), but nobody can be asked "
            "here: only toolwire chat and the web chat show such questions"
        )
    answer = await elicitor(request)
    if answer.action == "accept" and request.schema is not None:
        problems = check_answer(request.schema, answer.content or {})
        if problems:
            raise ValueError("; ".join(problems))
    return answer


@attrs.frozen(kw_only=True)
class FormField:
    """One field of an elicitation form: its name, JSON type (``string``, ``number``,
    ``integer``, ``boolean``), title and description for people, allowed values (for an enum),
    default, and whether it is required."""

    name: str
    type: str
    title: str
    description: str = ""
    choices: tuple[str, ...] = ()
    default: Any = None
    required: bool = False

    def parse(self, text: str) -> Any:
        """The value a person typed, as this field's type (None for an empty answer).

        :raises ValueError: naming the field and what it takes.
        """
        text = text.strip()
        if not text:
            return None
        if self.choices:
            if text in self.choices:
                return text
            raise ValueError(f"{self.title}: one of {', '.join(self.choices)}")
        if self.type == "boolean":
            if text.lower() in ("y", "yes", "true", "1"):
                return True
            if text.lower() in ("n", "no", "false", "0"):
                return False
            raise ValueError(f"{self.title}: yes or no")
        if self.type in ("integer", "number"):
            try:
                return int(text) if self.type == "integer" else float(text)
            except ValueError:
                raise ValueError(
                    f"{self.title}: a{'n integer' if self.type == 'integer' else ' number'}"
                ) from None
        return text


def form_fields(schema: Mapping[str, Any] | None) -> list[FormField]:
    """The fields of a request's schema, in the schema's order (properties of other kinds are
    shown as strings)."""
    if not isinstance(schema, Mapping):
        return []
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    fields = []
    for name, spec in properties.items():
        spec = spec if isinstance(spec, Mapping) else {}
        kind = spec.get("type")
        enum = spec.get("enum")
        fields.append(
            FormField(
                name=str(name),
                type=kind if kind in ("string", "number", "integer", "boolean") else "string",
                title=str(spec.get("title") or name),
                description=str(spec.get("description") or ""),
                choices=tuple(str(v) for v in enum) if isinstance(enum, list) else (),
                default=spec.get("default"),
                required=name in needed,
            )
        )
    return fields


def check_answer(schema: Mapping[str, Any], content: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``content`` as an answer to ``schema`` (empty when it fits): missing
    required fields, fields the schema does not have, values of the wrong type or not among an
    enum's values."""
    problems: list[str] = []
    fields = {f.name: f for f in form_fields(schema)}
    for name, field in fields.items():
        if field.required and content.get(name) is None:
            problems.append(f"{field.title} ({name}) is required")
    for name, value in content.items():
        found = fields.get(name)
        if found is None:
            problems.append(f"{name!r} is not a field of the form")
        elif value is not None and not _fits(found, value):
            field = found
            expected = f"one of {', '.join(field.choices)}" if field.choices else f"a {field.type}"
            problems.append(f"{field.title} ({name}) = {value!r}: expected {expected}")
    return problems


def _fits(field: FormField, value: Any) -> bool:
    if field.choices:
        return isinstance(value, str) and value in field.choices
    if field.type == "boolean":
        return isinstance(value, bool)
    if field.type == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if field.type == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str)
