"""Tool name rules: what toolwire accepts, what each provider accepts, and the advice between."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .._redact import Inside
from ._errors import ToolDefinitionError

if TYPE_CHECKING:
    from ._model import Tool

MAX_TOOL_NAME_LENGTH = 64
"""The longest tool name OpenAI and Anthropic accept."""

SEARCH_TOOL = "tool_search"
"""The name of the host's built-in search over the tools a round defers (large catalogues):
registered by no plugin, so a plugin's tool of that name is refused."""

CALL_TOOL = "tool_call"
"""The name of the host's built-in bridge to the tools a round defers: ``tool_call(name,
arguments)`` is admitted and run as a call of the tool ``name`` with ``arguments``. Reserved
like :data:`SEARCH_TOOL`."""

_RESERVED = {
    SEARCH_TOOL: "the host's own search over the tools it defers",
    CALL_TOOL: "the host's own bridge to the tools it defers",
}


def reserved_name_problem(name: str) -> str | None:
    """Why a plugin may not register a tool named ``name``, or None when it may."""
    what = _RESERVED.get(name)
    if what is None:
        return None
    return (
        f"tool name {name!r} is {what} ([tools] max_direct, max_direct_bytes, "
        "[tools.exposure]); a tool of that name would silently switch that off. Rename the tool "
        "(for an MCP server's tools, set the server's prefix)"
    )


def flat_sensitive(sensitive: frozenset[str]) -> frozenset[str]:
    """``sensitive`` with each :class:`~toolwire._redact.Inside` name replaced by the names it
    holds: what to redact in the arguments of the call it stands for."""
    if not any(isinstance(s, Inside) for s in sensitive):
        return sensitive
    flat: set[str] = set()
    for name in sensitive:
        flat.update(name.names if isinstance(name, Inside) else (name,))
    return frozenset(flat)


def bridged_name(name: str, arguments: Mapping[str, Any] | None) -> str | None:
    """The tool a call of the bridge (:data:`CALL_TOOL`) names, or None for another call (or a
    bridge call that names none)."""
    if name != CALL_TOOL or arguments is None:
        return None
    target = arguments.get("name")
    return target if isinstance(target, str) and target else None


def call_sensitive(
    name: str,
    arguments: Mapping[str, Any] | None,
    sensitive: Callable[[str], frozenset[str]],
    resolved: str | None = None,
    every: Callable[[], frozenset[str]] | None = None,
) -> frozenset[str]:
    """The arguments to redact in a call of ``name`` with ``arguments``: ``sensitive(name)``
    (and ``sensitive(resolved)``, the tool the call ran as, when it differs); for a bridge
    call, the sensitive arguments of the tool it calls (``resolved``, and the one it names),
    inside its ``arguments`` (an :class:`~toolwire._redact.Inside` name). A bridge call whose
    arguments cannot be read names no tool: ``every()`` (the sensitive arguments of every
    tool) are redacted inside it then, and its raw text dropped."""
    found = sensitive(name)
    if name != CALL_TOOL:
        if resolved is not None and resolved != name:
            found = found | sensitive(resolved)
        return found
    target = bridged_name(name, arguments)
    inner: frozenset[str] = frozenset()
    for each in (target, resolved):
        if each is not None:
            inner = inner | sensitive(each)
    if target is None and resolved is None and every is not None:
        inner = every()
    return found | {Inside("arguments", inner)} if inner else found


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
_PART_CHARS = _NAME_CHARS - {"."}

# The patterns below compile on first use: registering a tool checks its name with
# :func:`is_tool_name`, which needs none of them.


@functools.cache
def _snake_case() -> re.Pattern[str]:
    """The recommended spelling: safe unchanged on every provider and in every prompted dialect."""
    return re.compile(r"[a-z][a-z0-9_]{0,63}")


@functools.cache
def _camel_boundary() -> re.Pattern[str]:
    return re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@functools.cache
def _not_snake() -> re.Pattern[str]:
    return re.compile(r"[^a-z0-9]+")


def _provider_safe(text: str) -> bool:
    """True for 1 to 64 characters of ``[a-zA-Z0-9_-]``, a name OpenAI and Anthropic accept."""
    return 0 < len(text) <= MAX_TOOL_NAME_LENGTH and _PART_CHARS.issuperset(text)


def wire_spelling(name: str) -> str:
    """``name`` with each character outside ``[a-zA-Z0-9_-]`` written ``_``: the readable alias
    under which the OpenAI and Anthropic adapters send a name those APIs refuse."""
    return "".join(ch if ch in _PART_CHARS else "_" for ch in name)


def is_tool_name(name: object) -> bool:
    """True when ``name`` follows the rule (at most 64 characters): what OpenAI and Anthropic
    accept, ``^[a-zA-Z0-9_-]{1,64}$``, plus dotted names such as ``math.factorial`` (a non-empty
    part on each side of every ``.``), which their adapters send under an alias."""
    return (
        isinstance(name, str)
        and len(name) <= MAX_TOOL_NAME_LENGTH
        and all(part and _PART_CHARS.issuperset(part) for part in name.split("."))
    )


def tool_name_problems(name: str) -> list[str]:
    """Every reason ``name`` breaks the rule of :func:`is_tool_name`; empty when valid."""
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


def is_snake_case(name: str) -> bool:
    """Whether ``name`` is lower-case snake_case (``get_weather``), the recommended spelling."""
    return _snake_case().fullmatch(name) is not None


def suggest_tool_name(name: str) -> str | None:
    """A snake_case spelling of ``name`` that follows the default rule, when one can be made."""
    words = _camel_boundary().sub("_", name.strip())
    candidate = _not_snake().sub("_", words.lower()).strip("_")
    candidate = candidate.lstrip("0123456789_")[:MAX_TOOL_NAME_LENGTH].rstrip("_")
    if candidate and candidate != name and _snake_case().fullmatch(candidate):
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
    if not _provider_safe(name[:MAX_TOOL_NAME_LENGTH] or "-"):
        problems.append(
            "characters outside [a-zA-Z0-9_-], which OpenAI and Anthropic refuse (their "
            "adapters send such a name under an alias)"
            if name
            else "an empty name, which every provider refuses"
        )
    if name and not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        problems.append("it does not start with a letter or '_', which Gemini requires")
    if name and not name.isidentifier() and _provider_safe(name):
        problems.append("it is not an identifier, so the prompted ptype dialect cannot call it")
    return problems


def match_tool_name(name: str, offered: Iterable[str]) -> str | None:
    """The one offered name ``name`` means when it is no offered name itself, or None.

    A model may change the case of a name (``Get_Weather`` for ``get_weather``), or call a tool
    by the alias an API saw (``math_factorial`` for ``math.factorial``). A match must be the only
    one: two offered names that both match leave ``name`` unknown.
    """
    if not isinstance(name, str) or not name:
        return None
    found = set(_spelled(name, offered))
    return found.pop() if len(found) == 1 else None


def _spelled(name: str, names: Iterable[str]) -> Iterable[str]:
    """The names that ``name`` spells differently: in another case, or as the wire alias."""
    wanted = name.casefold()
    for candidate in names:
        if candidate.casefold() == wanted or wire_spelling(candidate).casefold() == wanted:
            yield candidate


def sensitive_arguments(tools: Mapping[str, Tool], *names: str | None) -> frozenset[str]:
    """The sensitive arguments of the tools ``names`` stand for, together: for each name, the
    tool registered under it, or else every registered tool it spells differently (another case,
    a wire alias; see :func:`match_tool_name`). A name that means no tool adds nothing.

    Redaction goes by this, not by the exact name, so a model that writes ``Login`` for
    ``login`` has its ``password`` redacted like any call of ``login``.
    """
    found: frozenset[str] = frozenset()
    for name in names:
        if not name:
            continue
        tool = tools.get(name)
        meant = [tool] if tool is not None else [tools[n] for n in _spelled(name, tools)]
        for each in meant:
            if each.sensitive_arguments:
                found = found | each.sensitive_arguments
    return found
