"""The ``json`` dialect: ``{"name": …, "arguments": {…}}`` objects read leniently, and written."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from .._json.relaxed import ArgumentsSyntaxError, parse_arguments
from ._brackets import BracketScanner
from ._found import Found

_FENCED: Final = re.compile(
    r"\A\s*```[\w+.-]*[ \t]*\r?\n?(?P<body>.*?)(?:\r?\n)?[ \t]*(?:```\s*)?\Z", re.S
)
_ARGUMENT_KEYS: Final = ("arguments", "parameters", "args", "input")
_SEPARATORS: Final = re.compile(r"[\s,;]*")


def strip_fence(text: str) -> str:
    """``text`` without a markdown code fence around it (a missing closing fence is accepted)."""
    match = _FENCED.match(text) if text.lstrip().startswith("```") else None
    return match["body"] if match else text


find_json_end: Final = BracketScanner(
    {"'": r"(?:[^'\\]|\\.)*'", '"': r'(?:[^"\\]|\\.)*"'}, brackets="[]{}"
).end
"""The index after the bracket closing the one at ``start`` of a JSON text, or None when the text
ends first. Both quote styles are skipped: valid JSON has no apostrophes outside strings, and
relaxed JSON uses them as quotes."""


def read_calls(text: str) -> list[Found]:
    """The calls in a JSON body: one object, an array of objects, or objects one after another.

    Single quotes, trailing commas, unquoted keys, a code fence and arguments given as a JSON
    string are accepted. Text that is none of these is one invalid call, with the reason.
    """
    body = strip_fence(text.strip()).strip()
    value, problem = _load(body)
    if problem is not None:
        return [Found(_guess_name(body), None, problem)]
    items = value if isinstance(value, list) else [value]
    if not items:
        return [Found("", None, "an empty list of calls")]
    return [call_from_object(item) for item in items]


def _load(body: str) -> tuple[Any, str | None]:
    try:
        return json.loads(body), None
    except ValueError:
        pass
    first_error: str | None = None
    try:
        if body.startswith("["):
            return parse_arguments('{"_":' + body + "}").arguments["_"], None
        return parse_arguments(body).arguments, None
    except ArgumentsSyntaxError as exc:
        first_error = exc.reason
    several = _several_objects(body)
    if several is not None:
        return several, None
    return None, f"the call is not a valid JSON object: {first_error}"


def _several_objects(body: str) -> list[Any] | None:
    """Objects written one after another (``{…}\\n{…}``), each parsed leniently."""
    found: list[Any] = []
    pos = _SEPARATORS.match(body).end()  # type: ignore[union-attr]
    while pos < len(body):
        if body[pos] != "{":
            return None
        end = find_json_end(body, pos)
        if end is None:
            return None
        try:
            found.append(parse_arguments(body[pos:end]).arguments)
        except ArgumentsSyntaxError:
            return None
        pos = _SEPARATORS.match(body, end).end()  # type: ignore[union-attr]
    return found if len(found) > 1 else None


_NAME_GUESS: Final = re.compile(r"""["']?name["']?\s*:\s*["']([^"'\\]{1,128})["']""")


def _guess_name(body: str) -> str:
    match = _NAME_GUESS.search(body)
    return match.group(1) if match else ""


def call_from_object(item: Any) -> Found:
    """A call from one parsed object: ``{"name", "arguments"}`` (or ``parameters``, ``args``).

    The OpenAI shape ``{"type": "function", "function": {…}}`` and arguments encoded as a JSON
    string are accepted; with no arguments key, the other keys are the arguments.
    """
    if not isinstance(item, dict):
        return Found("", None, f"expected a JSON object with a name and arguments, got {item!r}")
    if isinstance(item.get("function"), dict):
        item = item["function"]
    name = item.get("name")
    if not isinstance(name, str) or not name:
        return Found("", None, 'the call has no "name" string; write {"name": …, "arguments": {…}}')
    key = next((k for k in _ARGUMENT_KEYS if k in item), None)
    if key is None:
        arguments: Any = {k: v for k, v in item.items() if k not in ("name", "type", "id")}
    else:
        arguments = item[key]
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = parse_arguments(arguments).arguments
        except ArgumentsSyntaxError as exc:
            return Found(name, None, f"the arguments string is not a JSON object: {exc.reason}")
    if not isinstance(arguments, dict):
        shown = json.dumps(arguments)
        return Found(name, None, f"the arguments must be a JSON object, got {shown}")
    return Found(name, arguments, None)


def render_call(name: str, arguments: Mapping[str, Any]) -> str:
    """``<tool_call>{"name": …, "arguments": …}</tool_call>`` (``</`` in strings as ``<\\/``)."""
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return "<tool_call>" + body.replace("</", "<\\/") + "</tool_call>"
