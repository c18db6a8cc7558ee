"""Tool name rules: what toolwire accepts, what each provider accepts, and the advice between."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ._errors import ToolDefinitionError

MAX_TOOL_NAME_LENGTH = 64
"""The longest tool name OpenAI and Anthropic accept."""

TOOL_NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")
"""The rule (at most 64 characters): what OpenAI and Anthropic accept, ``^[a-zA-Z0-9_-]{1,64}$``,
plus dotted names such as ``math.factorial``, which their adapters send under an alias."""

SNAKE_CASE = re.compile(r"[a-z][a-z0-9_]{0,63}")
"""The recommended spelling: safe unchanged on every provider and in every prompted dialect."""

_PROVIDER_SAFE = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_SNAKE = re.compile(r"[^a-z0-9]+")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


def is_tool_name(name: object) -> bool:
    """True when ``name`` follows the rule of :data:`TOOL_NAME_PATTERN`."""
    return (
        isinstance(name, str)
        and len(name) <= MAX_TOOL_NAME_LENGTH
        and TOOL_NAME_PATTERN.fullmatch(name) is not None
    )


def tool_name_problems(name: str) -> list[str]:
    """Every reason ``name`` breaks the rule of :data:`TOOL_NAME_PATTERN`; empty when valid."""
    if not name:
        return ["it is empty"]
    problems: list[str] = []
    if any(ch.isspace() for ch in name):
        problems.append("it contains spaces")
    if len(name) > MAX_TOOL_NAME_LENGTH:
        problems.append(
            f"it is {len(name)} characters long; providers accept at most {MAX_TOOL_NAME_LENGTH}"
        )
    odd = sorted({ch for ch in name if ch not in _NAME_CHARS and not ch.isspace()})
    if odd:
        shown = ", ".join(repr(ch) for ch in odd)
        problems.append(f"it contains characters that providers refuse: {shown}")
    if name.startswith(".") or name.endswith(".") or ".." in name:
        problems.append("a dotted name needs a name part on each side of every '.'")
    return problems


def suggest_tool_name(name: str) -> str | None:
    """A snake_case spelling of ``name`` that follows the default rule, when one can be made."""
    words = _CAMEL_BOUNDARY.sub("_", name.strip())
    candidate = _NOT_SNAKE.sub("_", words.lower()).strip("_")
    candidate = candidate.lstrip("0123456789_")[:MAX_TOOL_NAME_LENGTH].rstrip("_")
    if candidate and candidate != name and SNAKE_CASE.fullmatch(candidate):
        return candidate
    return None


def validate_tool_name(name: object) -> None:
    """Refuse a tool name that breaks the rule, saying why.

    The rule is the union of what providers accept: ASCII letters, digits, ``_`` and ``-``
    (``^[a-zA-Z0-9_-]{1,64}$``, as OpenAI and Anthropic take them), plus dotted names such as
    ``math.factorial``, at most 64 characters. A name an API refuses is sent to it under a
    stable alias, and its calls are mapped back; snake_case is what every provider and dialect
    takes unchanged (``toolwire doctor`` says where a name needs an alias).

    :raises ToolDefinitionError: naming the name, each reason, and a valid spelling when one exists.
    """
    if not isinstance(name, str):
        raise ToolDefinitionError(
            f"a tool name must be a string; got {type(name).__name__} {name!r}"
        )
    if is_tool_name(name):
        return
    reasons = "; ".join(tool_name_problems(name))
    suggestion = suggest_tool_name(name)
    hint = f" (for example {suggestion!r})" if suggestion else ""
    raise ToolDefinitionError(
        f"invalid tool name {name!r}: {reasons}. A tool name is ASCII letters, digits, '_' and "
        f"'-', optionally in dotted parts (math.factorial), at most {MAX_TOOL_NAME_LENGTH} "
        f"characters{hint}"
    )


def provider_name_problems(name: str) -> list[str]:
    """Reasons some provider or prompted dialect would refuse or mangle ``name``."""
    problems: list[str] = []
    if len(name) > MAX_TOOL_NAME_LENGTH:
        problems.append(
            f"{len(name)} characters: OpenAI and Anthropic accept at most {MAX_TOOL_NAME_LENGTH}"
        )
    if not _PROVIDER_SAFE.fullmatch(name[:MAX_TOOL_NAME_LENGTH] or "-"):
        problems.append(
            "characters outside [a-zA-Z0-9_-], which OpenAI and Anthropic refuse (their "
            "adapters send such a name under an alias)"
            if name
            else "an empty name, which every provider refuses"
        )
    if name and not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        problems.append("it does not start with a letter or '_', which Gemini requires")
    if name and not name.isidentifier() and _PROVIDER_SAFE.fullmatch(name):
        problems.append("it is not an identifier, so the prompted ptype dialect cannot call it")
    return problems


_ALIAS_CHARACTER = re.compile(r"[^a-zA-Z0-9_-]")


def match_tool_name(name: str, offered: Iterable[str]) -> str | None:
    """The one offered name ``name`` means when it is no offered name itself, or None.

    A model may change the case of a name (``Get_Weather`` for ``get_weather``), or call a tool
    by the alias an API saw (``math_factorial`` for ``math.factorial``). A match must be the only
    one: two offered names that both match leave ``name`` unknown.
    """
    if not isinstance(name, str) or not name:
        return None
    wanted = name.casefold()
    found = {
        candidate
        for candidate in offered
        if candidate.casefold() == wanted
        or _ALIAS_CHARACTER.sub("_", candidate).casefold() == wanted
    }
    return found.pop() if len(found) == 1 else None
