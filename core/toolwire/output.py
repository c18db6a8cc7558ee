"""A run's typed final answer: its schema, and the answer checked and structured.

``run(..., output=T)`` takes a dataclass, an attrs class, a TypedDict (or any type the tool
model can describe: ``list[str]``, ``Literal[...]``, a union of records) or a JSON Schema
object. :class:`OutputSpec` derives the schema exactly as the tool model derives a parameter's
(:func:`toolwire.tools.schema_for`), validates an answer with the same compiled validators and
refusals as tool arguments, and structures the valid answer into ``T`` with cattrs. A schema
whose root is not an object (a list, a union) is sent wrapped as the one property ``value`` of
an object, because native structured output and tool arguments both need an object; the answer
is unwrapped before it is structured.

Providers receive the schema three ways (the loop picks one per adapter): natively
(``response_format`` …, see :attr:`~toolwire.adapters.AdapterCapabilities.native_output`), as
the arguments of the answer tool :meth:`OutputSpec.function`, or, for models without either,
as instructions in the system prompt (:meth:`OutputSpec.instructions`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from ._json.relaxed import ArgumentsSyntaxError
from ._json.relaxed import parse_arguments as parse_relaxed
from .tools._errors import ArgumentsInvalid, ToolDefinitionError
from .tools._spec import FunctionSpec

if TYPE_CHECKING:
    from .config import Config

__all__ = ["ANSWER_TOOL", "OutputInvalid", "OutputSpec", "read_schema_file"]

ANSWER_TOOL: Final = "final_answer"
"""The name of the answer tool offered on the tool path."""

_WRAPPED: Final = "value"
_NAME: Final = re.compile(r"[^A-Za-z0-9_-]")


class OutputInvalid(ValueError):
    """An answer that does not match the run's output schema.

    ``problems`` says each thing wrong (the path, the value that arrived, what would be valid);
    ``str()`` is written for the model to correct its answer.
    """

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems: tuple[str, ...] = tuple(problems) or ("the answer was refused",)
        super().__init__(self._text())

    def _text(self) -> str:
        if len(self.problems) == 1:
            return f"The answer does not match the required schema: {self.problems[0]}"
        lines = "\n".join(f"- {problem}" for problem in self.problems)
        count = len(self.problems)
        return f"The answer does not match the required schema ({count} problems):\n{lines}"


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object" and not any(
        key in schema for key in ("anyOf", "oneOf", "allOf", "$ref")
    )


def _wire_name(text: str) -> str:
    name = _NAME.sub("_", text).strip("_")[:64]
    return name or "answer"


@attrs.frozen(kw_only=True)
class OutputSpec:
    """What a run's final answer must be.

    :ivar name: the schema's name as providers receive it (``[A-Za-z0-9_-]``, at most 64).
    :ivar description: what the answer is, for the model.
    :ivar schema: the object schema providers receive (the answer's own, or it wrapped).
    :ivar wrapped: the answer's schema is not an object, and sits under the property ``value``.
    :ivar target: the type a valid answer is structured into (None: the JSON value as it is).
    :ivar strict: None to let each adapter decide, False never to ask for strict output.
    """

    name: str
    description: str
    schema: Mapping[str, Any]
    wrapped: bool = False
    target: Any = None
    strict: bool | None = None
    _cache: dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False, alias="_cache")

    @classmethod
    def of(
        cls,
        output: Any,
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> OutputSpec:
        """The spec of ``output``: a type, a JSON Schema object, or an :class:`OutputSpec`.

        :raises ToolDefinitionError: for a type the tool model cannot describe, or a schema
            with problems (each named by its path).
        """
        if isinstance(output, OutputSpec):
            return output
        if isinstance(output, Mapping):
            from .tools._schemacheck import schema_problems

            schema = dict(output)
            problems = schema_problems(schema)
            if problems:
                raise ToolDefinitionError(
                    "the output schema cannot be used: " + "; ".join(problems), problems=problems
                )
            title = schema.get("title")
            default_name = title if isinstance(title, str) and title else "answer"
            text = schema.get("description")
            target = None
        else:
            from .tools._model import schema_for

            schema = schema_for(output)
            default_name = getattr(output, "__name__", None) or "answer"
            text = schema.get("description")
            target = output
        wrapped = not _is_object_schema(schema)
        wire = schema
        if wrapped:
            wire = {
                "type": "object",
                "properties": {_WRAPPED: schema},
                "required": [_WRAPPED],
                "additionalProperties": False,
            }
        said = description or (text if isinstance(text, str) and text else "")
        return cls(
            name=_wire_name(name or default_name),
            description=said or "The final answer.",
            schema=wire,
            wrapped=wrapped,
            target=target,
        )

    @classmethod
    def for_run(cls, output: Any, config: Config) -> OutputSpec | None:
        """A run's spec: ``output`` (see :meth:`of`), else ``[run] output_schema`` of
        ``config`` (a table, or a JSON file relative to the file that set it), else None for a
        text answer.

        :raises ToolDefinitionError: (a ``ValueError``) for a type or schema that cannot be
            used; ``ValueError`` for a schema file that cannot be read.
        """
        if output is not None:
            return cls.of(output)
        schema = config.run.output_schema
        if schema is None:
            return None
        if isinstance(schema, str):
            origin = config.origin_of("$.run.output_schema")
            base = Path(origin).parent if origin else Path.cwd()
            schema = read_schema_file(base / schema, where="[run] output_schema")
        return cls.of(schema)

    # -- checking an answer ------------------------------------------------------------------

    def check(self, arguments: Any) -> Any:
        """The answer given as a JSON object (the answer tool's arguments, or the parsed text),
        validated, unwrapped and structured into :attr:`target`.

        :raises OutputInvalid: naming every problem.
        """
        from .tools._validation import ArgumentValidator

        validator = self._cache.get("validator")
        if validator is None:
            validator = self._cache["validator"] = ArgumentValidator(dict(self.schema))
        try:
            valid = validator.validate(arguments)
        except ArgumentsInvalid as exc:
            raise OutputInvalid(exc.problems) from None
        value = valid[_WRAPPED] if self.wrapped else dict(valid)
        return self._structure(value)

    def parse(self, text: str) -> Any:
        """The answer written as JSON text (native or prompted output): parsed (a markdown fence
        and the other conservative repairs of tool arguments allowed), then :meth:`check`.

        :raises OutputInvalid: for text that is not JSON, or an answer that does not match.
        """
        stripped = text.strip()
        if self.wrapped:
            value = _json_value(stripped)
            if isinstance(value, Mapping) and set(value) == {_WRAPPED}:
                return self.check(value)
            return self.check({_WRAPPED: value})
        try:
            parsed = parse_relaxed(stripped)
        except ArgumentsSyntaxError as exc:
            raise OutputInvalid(
                [f"the answer must be one JSON object and nothing else; {exc.reason}"]
            ) from None
        return self.check(parsed.arguments)

    def _structure(self, value: Any) -> Any:
        if self.target is None:
            return value
        structure: Callable[[Any], Any] | None
        if "structure" in self._cache:
            structure = self._cache["structure"]
        else:
            from .tools._convert import structure_function

            structure = self._cache["structure"] = structure_function(self.target)
        if structure is None:
            return value
        try:
            return structure(value)
        except Exception as exc:  # cattrs' errors and the target's own checks
            from .tools._convert import structure_error_text

            raise OutputInvalid([structure_error_text(exc)]) from None

    # -- how the model is told ---------------------------------------------------------------

    def function(self, name: str = ANSWER_TOOL) -> FunctionSpec:
        """The answer tool of the tool path: calling it with the answer as its arguments ends
        the run."""
        return FunctionSpec(
            name=name,
            description=(
                f"Give the final answer: {self.description} Call this once, when you have the "
                "answer; its arguments are the answer."
            ),
            parameters=self.schema,
            strict=self.strict,
        )

    def instructions(self) -> str:
        """What the system prompt says on the prompted path (and beside native output)."""
        shown = json.dumps(self.schema, ensure_ascii=False, indent=2)
        return (
            "When you give your final answer, write only a JSON object that matches this JSON "
            f"Schema, and nothing else ({self.description}):\n```json\n{shown}\n```"
        )

    def retry_message(self, error: OutputInvalid, *, tool: str | None = None) -> str:
        """What the model is told about an answer that did not match, to answer again."""
        how = (
            f"Call the tool {tool} again with the corrected answer."
            if tool is not None
            else "Answer again with only the corrected JSON object."
        )
        return f"{error} {how}"

    # -- keeping it with a run ---------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """What a stored run keeps of the spec (the target type is not kept: a run loaded from
        storage checks its answer against the schema and keeps the JSON value)."""
        return {
            "name": self.name,
            "description": self.description,
            "schema": dict(self.schema),
            "wrapped": self.wrapped,
            "strict": self.strict,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> OutputSpec:
        """The inverse of :meth:`to_json` (no target type)."""
        return cls(
            name=str(data["name"]),
            description=str(data.get("description") or "The final answer."),
            schema=dict(data["schema"]),
            wrapped=bool(data.get("wrapped", False)),
            strict=data.get("strict"),
        )


def read_schema_file(path: str | os.PathLike[str], *, where: str) -> dict[str, Any]:
    """The JSON Schema object in the file ``path`` (``where`` names the option or key that
    named it, for errors).

    :raises ValueError: naming the file, when it cannot be read or holds no JSON object.
    """
    shown = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{where}: the schema file {shown!r} cannot be read: {exc}") from None
    try:
        schema = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{where}: the schema file {shown!r} is not JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise ValueError(
            f"{where}: the schema file {shown!r} holds a JSON {type(schema).__name__}, not a "
            "JSON Schema object"
        )
    return schema


def _json_value(text: str) -> Any:
    """Any JSON value written as text, a markdown fence around it allowed."""
    body = text
    fence = re.fullmatch(r"```[A-Za-z0-9_-]*\s*\n(.*?)\n?```", body, re.S)
    if fence is not None:
        body = fence.group(1).strip()
    try:
        return json.loads(body)
    except ValueError as exc:
        raise OutputInvalid(
            [f"the answer must be one JSON value and nothing else; it is not JSON ({exc})"]
        ) from None
