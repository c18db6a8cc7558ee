"""Tool name rules: the default snake_case rule, and the limits of each provider."""

from __future__ import annotations

import re

from ._errors import ToolDefinitionError

MAX_TOOL_NAME_LENGTH = 64
"""The longest tool name OpenAI and Anthropic accept."""

TOOL_NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,63}")
"""The default rule: ASCII snake_case starting with a letter, at most 64 characters."""

_PROVIDER_SAFE = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_SNAKE = re.compile(r"[^a-z0-9]+")
_SNAKE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def tool_name_problems(name: str) -> list[str]:
    """Every reason ``name`` breaks the default rule; empty when the name is valid."""
    if not name:
        return ["it is empty"]
    problems: list[str] = []
    if any(ch.isspace() for ch in name):
        problems.append("it contains spaces")
    if len(name) > MAX_TOOL_NAME_LENGTH:
        problems.append(
            f"it is {len(name)} characters long; providers accept at most {MAX_TOOL_NAME_LENGTH}"
        )
    if any("A" <= ch <= "Z" for ch in name):
        problems.append("it contains uppercase letters")
    if not ("a" <= name[0] <= "z") and not name[0].isspace():
        problems.append(f"it starts with {name[0]!r} instead of a lowercase letter")
    odd = sorted(
        {ch for ch in name if ch not in _SNAKE_CHARS and not ch.isspace() and not "A" <= ch <= "Z"}
    )
    if odd:
        shown = ", ".join(repr(ch) for ch in odd)
        problems.append(
            f"it contains characters that providers refuse or that need escaping: {shown}"
        )
    return problems


def suggest_tool_name(name: str) -> str | None:
    """A snake_case spelling of ``name`` that follows the default rule, when one can be made."""
    words = _CAMEL_BOUNDARY.sub("_", name.strip())
    candidate = _NOT_SNAKE.sub("_", words.lower()).strip("_")
    candidate = candidate.lstrip("0123456789_")[:MAX_TOOL_NAME_LENGTH].rstrip("_")
    if candidate and candidate != name and TOOL_NAME_PATTERN.fullmatch(candidate):
        return candidate
    return None


def validate_tool_name(name: object) -> None:
    """Refuse a tool name that breaks the default rule, saying why.

    The rule is ``^[a-z][a-z0-9_]{0,63}$``: ASCII snake_case, starting with a letter, short enough
    for every provider, and safe in every prompted dialect without escaping.

    :raises ToolDefinitionError: naming the name, each reason, and a valid spelling when one exists.
    """
    if not isinstance(name, str):
        raise ToolDefinitionError(
            f"a tool name must be a string; got {type(name).__name__} {name!r}"
        )
    if TOOL_NAME_PATTERN.fullmatch(name):
        return
    reasons = "; ".join(tool_name_problems(name))
    suggestion = suggest_tool_name(name)
    hint = f" (for example {suggestion!r})" if suggestion else ""
    raise ToolDefinitionError(
        f"invalid tool name {name!r}: {reasons}. A tool name is ASCII snake_case: a lowercase "
        f"letter, then lowercase letters, digits or '_', at most {MAX_TOOL_NAME_LENGTH} "
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
            "characters outside [a-zA-Z0-9_-], which OpenAI and Anthropic refuse"
            if name
            else "an empty name, which every provider refuses"
        )
    if name and not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        problems.append("it does not start with a letter or '_', which Gemini requires")
    if name and not name.isidentifier() and _PROVIDER_SAFE.fullmatch(name):
        problems.append("it is not an identifier, so the prompted ptype dialect cannot call it")
    return problems
