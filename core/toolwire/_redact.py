"""Redaction, in one place: what stands where a secret was, and how it is taken out of each
kind of value.

- a provider's API key from what the provider sends back: text, raw bytes, parsed JSON
  (:func:`redact_text`, :func:`redact_raw`, :func:`redact_json`);
- the values of sensitive arguments from a captured request body (:func:`redact_body`), from
  free text such as a tool's failure or a log line (:func:`scrub`);
- sensitive arguments by name, in an argument mapping (:func:`redact_arguments`), a tool call
  (:func:`redacted_call`) and a model's answer (:func:`redacted_message`).

Which arguments are sensitive is the tools' business (``Tool.sensitive_arguments``, looked up by
the tool a call resolved to: :func:`toolwire.tools._names.sensitive_arguments`); this module
only takes values out. It imports nothing else of toolwire, so every layer can use it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import attrs

if TYPE_CHECKING:
    from .messages import AssistantMessage, ToolCall

__all__ = [
    "REDACTED",
    "Inside",
    "escapes_may_hide",
    "redact_arguments",
    "redact_body",
    "redact_json",
    "redact_raw",
    "redact_text",
    "redacted_call",
    "redacted_message",
    "scrub",
    "sensitive_values_in",
]

REDACTED: Final = "[redacted]"
"""What stands where a secret was."""

# Shorter "secrets" are not worth the damage of replacing them everywhere in a text.
_SHORTEST: Final = 6

# A sensitive value this short is left in free text (a tool's failure): "7" or "ab" would wreck
# the message and protect nothing.
_SHORTEST_SCRUBBED: Final = 4

# A value this short is replaced in a request body only where it stands whole (a JSON value, a
# quoted string).
_SHORTEST_IN_TEXT: Final = 3


def _secret(secret: str | None) -> str | None:
    return secret if secret is not None and len(secret) >= _SHORTEST else None


def redact_text(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced by :data:`REDACTED`."""
    needle = _secret(secret)
    if needle is not None and needle in text:
        return text.replace(needle, REDACTED)
    return text


def redact_json(value: Any, secret: str | None) -> Any:
    """A parsed JSON value with ``secret`` redacted from every string in it, keys included.

    The value is rebuilt only when the secret is in it.
    """
    needle = _secret(secret)
    if needle is None or isinstance(value, str):
        return value if needle is None else redact_text(value, needle)
    if not isinstance(value, dict | list):
        return value
    encoded = json.dumps(value, ensure_ascii=False)
    escaped = json.dumps(needle, ensure_ascii=False)[1:-1]
    if escaped not in encoded:
        return value
    return json.loads(encoded.replace(escaped, REDACTED))


# What a JSON string may escape other than as ``\u`` and four digits: a secret holding none of
# these can only be hidden from a plain search of the text by ``\u`` escapes.
_SHORT_ESCAPED: Final = frozenset('"\\/\b\f\n\r\t')


def escapes_may_hide(text: str | bytes, secret: str | None) -> bool:
    """Whether JSON ``text`` may spell ``secret`` with escapes (``\\u0073k-…``, or ``\\/``
    for a ``/`` of the secret), where :func:`redact_text` or :func:`redact_raw` would not find
    it: only then need the parsed value go through :func:`redact_json`. Cheap: two searches of
    the text."""
    needle = _secret(secret)
    if needle is None:
        return False
    if isinstance(text, bytes):
        if b"\\" not in text:
            return False
        escaped_code = b"\\u" in text
    else:
        if "\\" not in text:
            return False
        escaped_code = "\\u" in text
    return escaped_code or not _SHORT_ESCAPED.isdisjoint(needle)


def redact_raw(raw: bytes, secret: str | None) -> bytes:
    """Raw bytes of an answer with the UTF-8 of ``secret`` replaced by :data:`REDACTED`."""
    needle = _secret(secret)
    if needle is None:
        return raw
    encoded = needle.encode("utf-8")
    return raw.replace(encoded, REDACTED.encode("ascii")) if encoded in raw else raw


def scrub(text: str, arguments: Any, sensitive: Iterable[str]) -> str:
    """``text`` with the value of each ``sensitive`` argument of ``arguments`` replaced by
    :data:`REDACTED` (strings and numbers of at least four characters: a tool's failure message
    or traceback may quote them)."""
    if not isinstance(arguments, Mapping):
        return text
    for name in sensitive:
        value = arguments.get(name)
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            secret = str(value)
            if len(secret) >= _SHORTEST_SCRUBBED:
                text = text.replace(secret, REDACTED)
    return text


class Inside(str):
    """A name to redact that stands for sensitive arguments inside an object argument: the
    argument ``self`` (a ``str``, the outer name) holds arguments of another call, whose
    ``names`` are sensitive (a bridge call's ``arguments``, see ``toolwire.tools._names``).
    Only those values are redacted in it; when it is not an object (JSON text), all of it."""

    names: frozenset[str]

    def __new__(cls, outer: str, names: frozenset[str]) -> Inside:
        made = super().__new__(cls, outer)
        made.names = names
        return made


def redact_arguments(arguments: Mapping[str, Any], sensitive: frozenset[str]) -> Mapping[str, Any]:
    """``arguments`` with the value of every sensitive argument replaced by ``"[redacted]"``
    (for an :class:`Inside` name, the sensitive values inside that argument)."""
    if not sensitive or sensitive.isdisjoint(arguments):
        return arguments
    inside = {str(s): s.names for s in sensitive if isinstance(s, Inside)}
    if not inside:
        return {k: (REDACTED if k in sensitive else v) for k, v in arguments.items()}
    return {
        k: v if k not in sensitive else _inside(v, inside[k]) if k in inside else REDACTED
        for k, v in arguments.items()
    }


def _inside(value: Any, names: frozenset[str]) -> Any:
    if isinstance(value, Mapping):
        return redact_arguments(value, names)
    return REDACTED if value is not None else None


def sensitive_values_in(arguments: Mapping[str, Any], sensitive: frozenset[str]) -> list[Any]:
    """The values of the ``sensitive`` arguments of ``arguments`` (inside an :class:`Inside`
    argument, those of its names; all of it when it is not an object)."""
    found: list[Any] = []
    for name in sensitive & arguments.keys():
        value = arguments[name]
        entry = next(s for s in sensitive if s == name)
        if isinstance(entry, Inside) and isinstance(value, Mapping):
            found.extend(sensitive_values_in(value, entry.names))
        else:
            found.append(value)
    return found


Call = TypeVar("Call", bound="ToolCall")


def redacted_call(call: Call, sensitive: frozenset[str]) -> Call:
    """``call`` with its ``sensitive`` arguments and its raw argument text redacted (itself when
    there is nothing to redact)."""
    if not sensitive:
        return call
    arguments = call.arguments
    return attrs.evolve(
        call,
        arguments=redact_arguments(arguments, sensitive) if arguments is not None else None,
        raw_arguments=REDACTED if call.raw_arguments is not None else None,
    )


Message_ = TypeVar("Message_", bound="AssistantMessage")


def redacted_message(message: Message_, sensitive: Callable[[Any], frozenset[str]]) -> Message_:
    """A model's answer with each call redacted (``sensitive`` gives the names to redact for a
    part of it, none for a part that is not a call); itself when nothing needed it."""
    parts = tuple(
        redacted_call(cast("ToolCall", p), s) if (s := sensitive(p)) else p for p in message.parts
    )
    if all(a is b for a, b in zip(parts, message.parts, strict=True)):
        return message
    return attrs.evolve(message, parts=parts)


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
