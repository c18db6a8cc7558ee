"""What a request body looks like once secrets are taken out: the API key and sensitive values.

The transport captures every provider request body here when ``[trace] request_bodies`` is on
(or ``toolwire run --show-wire``). A body holds the whole conversation, so the values of
sensitive arguments are in it, in whatever form the wire format gives them: plain strings
(Anthropic's ``input``), JSON text inside a string (Chat Completions ``arguments``), or a
prompted call in the model's text. Redaction therefore goes by value, not by position.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from .._redact import REDACTED
from ..messages import AssistantMessage, Message, ToolCall

__all__ = ["redact_body", "sensitive_values"]

# A value this short is replaced only where it stands whole (a JSON value, a quoted string):
# replacing every "7" or "ab" inside free text would wreck the body and protect nothing.
_SHORTEST_IN_TEXT: Final = 3


def sensitive_values(
    messages: Iterable[Message], sensitive: Callable[[str], frozenset[str]]
) -> frozenset[str]:
    """The values of every sensitive argument of the calls in ``messages``, as text.

    :param messages: the conversation of one request.
    :param sensitive: the names of a tool's sensitive arguments, by tool name.
    :returns: each string value, and the JSON text of each number, found under a sensitive
        argument (at any depth of it); booleans and nulls say nothing worth hiding.
    """
    found: set[str] = set()
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        for part in message.parts:
            if not isinstance(part, ToolCall) or not part.arguments:
                continue
            names = sensitive(part.name)
            if not names:
                continue
            for name in names & part.arguments.keys():
                _collect(part.arguments[name], found)
    return frozenset(found)


def _collect(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        if value:
            found.add(value)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        found.add(json.dumps(value))
    elif isinstance(value, Mapping):
        for item in value.values():
            _collect(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect(item, found)


def redact_body(body: Mapping[str, Any], secrets: Iterable[str]) -> dict[str, Any]:
    """A copy of a JSON request body with every secret replaced by ``[redacted]``.

    A secret is replaced inside every string of the body: as written, JSON-escaped (the
    arguments text of a call is JSON inside a string) and quoted; a string or number that is a
    secret as a whole is replaced too. Secrets of one or two characters are replaced only where
    they stand whole. Keys are left alone: they come from schemas, not from arguments.
    """
    needles = _needles(secrets)
    whole = frozenset(s for s in secrets if s)
    copied: dict[str, Any] = _redacted(body, needles, whole)
    return copied


def _needles(secrets: Iterable[str]) -> tuple[str, ...]:
    out: set[str] = set()
    for secret in secrets:
        if not secret:
            continue
        out.add(secret if len(secret) >= _SHORTEST_IN_TEXT else json.dumps(secret))
        # JSON text inside a string spells the value escaped, with non-ASCII as it is or as
        # \uXXXX (Python's json writes the latter by default), and may itself be quoted again.
        for ascii_only in (False, True):
            quoted = json.dumps(secret, ensure_ascii=ascii_only)
            out.add(quoted)
            out.add(json.dumps(quoted, ensure_ascii=ascii_only)[1:-1])
            if len(secret) >= _SHORTEST_IN_TEXT:
                out.add(quoted[1:-1])
    # Longest first, so that a secret's escaped form is replaced before a shorter one inside it.
    return tuple(sorted(out, key=len, reverse=True))


def _redacted(value: Any, needles: tuple[str, ...], whole: frozenset[str]) -> Any:
    if isinstance(value, str):
        return _redacted_text(value, needles, whole)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return REDACTED if json.dumps(value) in whole else value
    if isinstance(value, Mapping):
        return {key: _redacted(item, needles, whole) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(item, needles, whole) for item in value]
    return value


def _redacted_text(text: str, needles: tuple[str, ...], whole: frozenset[str]) -> str:
    if text in whole:
        return REDACTED
    for needle in needles:
        if needle in text:
            if needle.startswith('"') and needle.endswith('"'):
                text = text.replace(needle, json.dumps(REDACTED))
            elif needle.startswith('\\"') and needle.endswith('\\"'):
                text = text.replace(needle, '\\"' + REDACTED + '\\"')
            else:
                text = text.replace(needle, REDACTED)
    return text
