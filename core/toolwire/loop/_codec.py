"""JSON forms of messages, tool calls, results and events, for ``Run.to_json`` and the ledger."""

from __future__ import annotations

import enum
import functools
import json
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from .._redact import REDACTED as REDACTED
from .._redact import redact_arguments as redact_arguments
from .._trust import TrustLevel, declared_level
from ..events import Event
from ..messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    OpaquePart,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    UserPart,
)
from ..tools._result import Source, ToolResult, ToolStatus
from ..usage import Usage
from ..utf8 import utf8_json

Redactor = Callable[[str], frozenset[str]]
"""Maps a tool name to the names of its sensitive arguments (empty: nothing to redact)."""

CallRedactor = Callable[[ToolCall], frozenset[str]]
"""Maps a call to the names of the arguments to redact in it."""

_STORED = json.JSONEncoder(ensure_ascii=False, default=str)
_fast_json: Callable[[Any], str] | None = None


def stored_json(value: Any) -> str:
    """The JSON text the ledger stores for ``value``: non-ASCII kept, anything JSON has no form
    for as its ``str``, a float that is not finite as ``null``.

    Written by orjson (imported on the ledger's first write), an order of magnitude faster than
    the standard encoder on rows this small; what orjson refuses (an integer past 64 bits, a
    lone surrogate) gets the standard encoder's answer, and so does everything when orjson
    cannot be imported. A lone surrogate (a file name that is not UTF-8) is written as its
    ``\\uXXXX`` escape, so the text is UTF-8 and reads back as the same value.
    """
    global _fast_json
    if _fast_json is None:
        _fast_json = _fast_encoder()
    try:
        return _fast_json(value)
    except TypeError:  # orjson.JSONEncodeError
        return utf8_json(_STORED.encode(value))


def _fast_encoder() -> Callable[[Any], str]:
    try:
        import orjson
    except ImportError:  # a dependency of toolwire, but a broken install must not stop the ledger
        return lambda value: utf8_json(_STORED.encode(value))
    # Dates and dataclasses as their str, like the standard encoder with default=str.
    options = (
        orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
    )
    dumps = functools.partial(orjson.dumps, default=str, option=options)
    return lambda value: dumps(value).decode()


_JSON_LEAVES = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    """A JSON-compatible copy of ``value`` (tuples to lists, enums to values, attrs to dicts)."""
    kind = type(value)
    if kind in _JSON_LEAVES:
        return value
    if kind is dict:  # the common case, arguments and data from JSON: leaves copied inline
        return {
            k if type(k) is str else str(k): v if type(v) in _JSON_LEAVES else _plain(v)
            for k, v in value.items()
        }
    if kind is list or kind is tuple:  # offered names, parts, sources: leaves copied inline
        return [v if type(v) in _JSON_LEAVES else _plain(v) for v in value]
    convert = _CONVERTERS.get(kind)
    if convert is not None:  # the project's own records, by their exact class
        return convert(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, TrustLevel):
        return value.label
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if isinstance(value, ToolResult):
        return result_to_json(value)
    if isinstance(value, ToolCall):
        return call_to_json(value)
    if isinstance(value, AssistantMessage):
        return message_to_json(value)
    if isinstance(value, Usage):
        return usage_to_json(value)
    if attrs.has(type(value)):
        return {f.name: _plain(getattr(value, f.name)) for f in attrs.fields(type(value))}
    return str(value)


# -- results -----------------------------------------------------------------------------------


def result_to_json(result: ToolResult) -> dict[str, Any]:
    """A result without its artifacts and exception (never sent to the model, not serialisable)."""
    out: dict[str, Any] = {
        "status": result.status.value,
        "content": result.content,
        "data": _plain(result.data),
        "sources": [{"url": s.url, "title": s.title} for s in result.sources],
        "retryable": result.retryable,
        "metadata": _plain(result.metadata),
        "required_trust": result.required_trust.label if result.required_trust else None,
    }
    if result.follow_up:
        out["follow_up"] = [_follow_up_to_json(p) for p in result.follow_up]
    if result.usage is not None:
        out["usage"] = usage_to_json(result.usage)
    if result.cost is not None:
        out["cost"] = result.cost
    return out


class ResultForms:
    """The JSON form of each result the ledger's writes store, worked out once for all the rows
    that show it: its ``settled`` row (written when its turn closes) and the run record's tool
    call and tool message (written with the next turn's first row, or when the run ends).

    One per write, each knowing the forms of the write before it (``last``), so a form lives
    from one write to the next and no longer: a long run or process keeps none, and the
    collector has none to trace. The forms are shared by the rows, which only encode them:
    they must not be changed.
    """

    __slots__ = ("_forms", "_last")

    def __init__(self, last: ResultForms | None = None) -> None:
        self._forms: dict[int, tuple[ToolResult, dict[str, Any]]] = {}
        self._last = last._forms if last is not None else None

    def __call__(self, result: ToolResult) -> dict[str, Any]:
        """:func:`result_to_json` of ``result`` (the same object for every row that shows it)."""
        key = id(result)
        found = self._forms.get(key)
        if found is None:  # each result is kept with its form, so its id is not reused
            last = self._last
            found = last.get(key) if last is not None else None
            if found is None:
                found = (result, result_to_json(result))
            self._forms[key] = found
        return found[1]


def _follow_up_to_json(part: Any) -> dict[str, Any]:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    return _part_to_json(part, None)


def _follow_up_from_json(data: Mapping[str, Any]) -> Any:
    if data.get("type") == "text":
        return str(data.get("text", ""))
    return _part_from_json(data)


def result_from_json(data: Mapping[str, Any]) -> ToolResult:
    """The inverse of :func:`result_to_json`."""
    trust = data.get("required_trust")
    return ToolResult(
        status=ToolStatus(data.get("status", "ok")),
        content=data.get("content"),
        data=data.get("data"),
        sources=tuple(Source(s["url"], s.get("title")) for s in data.get("sources") or ()),
        retryable=bool(data.get("retryable", False)),
        metadata=data.get("metadata") or {},
        required_trust=declared_level(trust) if trust is not None else None,
        follow_up=tuple(_follow_up_from_json(p) for p in data.get("follow_up") or ()),
        usage=usage_from_json(data.get("usage")),
        cost=data.get("cost"),
    )


# -- calls, usage ------------------------------------------------------------------------------


def source_to_json(source: Source) -> dict[str, Any]:
    """A result's source as JSON."""
    return {"url": source.url, "title": source.title}


def call_to_json(call: ToolCall, sensitive: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A tool call; the values of the ``sensitive`` arguments are replaced (raw text dropped)."""
    arguments = call.arguments
    raw = call.raw_arguments
    if sensitive:
        if arguments is not None:
            arguments = redact_arguments(arguments, sensitive)
        if raw is not None:
            raw = REDACTED
    return {
        "id": call.id,
        "name": call.name,
        "arguments": _plain(arguments) if arguments is not None else None,
        "raw_arguments": raw,
        "invalid_reason": call.invalid_reason,
        "provider_executed": call.provider_executed,
        "provider_data": _plain(call.provider_data) if call.provider_data is not None else None,
    }


def call_from_json(data: Mapping[str, Any]) -> ToolCall:
    """The inverse of :func:`call_to_json`."""
    return ToolCall(
        id=data["id"],
        name=data["name"],
        arguments=data.get("arguments"),
        raw_arguments=data.get("raw_arguments"),
        invalid_reason=data.get("invalid_reason"),
        provider_executed=bool(data.get("provider_executed", False)),
        provider_data=data.get("provider_data"),
    )


def usage_to_json(usage: Usage) -> dict[str, Any]:
    """Token counts."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "total_tokens": usage.total_tokens,
    }


def usage_from_json(data: Mapping[str, Any] | None) -> Usage | None:
    """The inverse of :func:`usage_to_json` (None stays None)."""
    if data is None:
        return None
    return Usage(
        input_tokens=data.get("input_tokens"),
        output_tokens=data.get("output_tokens"),
        cache_read_tokens=data.get("cache_read_tokens"),
        total_tokens=data.get("total_tokens"),
        cache_write_tokens=data.get("cache_write_tokens"),
        reasoning_tokens=data.get("reasoning_tokens"),
    )


# -- messages ----------------------------------------------------------------------------------


def _part_to_json(part: AssistantPart | UserPart, redact: CallRedactor | None) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ThinkingPart):
        return {
            "type": "thinking",
            "text": part.text,
            "signature": part.signature,
            "redacted": part.redacted,
            "provider_data": _plain(part.provider_data) if part.provider_data else None,
        }
    if isinstance(part, OpaquePart):
        return {"type": "opaque", "api": part.api, "data": _plain(part.data)}
    sensitive = redact(part) if redact is not None else frozenset()
    return {"type": "tool_call", **call_to_json(part, sensitive)}


def _part_from_json(data: Mapping[str, Any]) -> AssistantPart:
    kind = data.get("type")
    if kind == "text":
        return TextPart(data["text"])
    if kind == "thinking":
        return ThinkingPart(
            text=data.get("text", ""),
            signature=data.get("signature"),
            redacted=bool(data.get("redacted", False)),
            provider_data=data.get("provider_data"),
        )
    if kind == "opaque":
        return OpaquePart(api=data["api"], data=data.get("data"))
    if kind == "tool_call":
        return call_from_json(data)
    raise ValueError(
        f"unknown message part type {kind!r}; expected text, thinking, opaque, tool_call"
    )


def message_to_json(
    message: Message,
    redact: CallRedactor | None = None,
    *,
    result_json: Callable[[ToolResult], dict[str, Any]] = result_to_json,
) -> dict[str, Any]:
    """One canonical message as JSON, tagged by ``role`` (with ``redact``, the arguments it
    names in each call replaced; a tool message's result as ``result_json`` gives it)."""
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, UserMessage):
        content: Any = message.content
        if not isinstance(content, str):
            content = [_part_to_json(p, redact) for p in content]
        return {"role": "user", "content": content}
    if isinstance(message, AssistantMessage):
        out: dict[str, Any] = {
            "role": "assistant",
            "parts": [_part_to_json(p, redact) for p in message.parts],
            "api": message.api,
            "model": message.model,
            "finish_reason": message.finish_reason,
            "usage": usage_to_json(message.usage) if message.usage else None,
        }
        if message.response_id is not None:
            out["response_id"] = message.response_id
        if message.provider is not None:
            out["provider"] = message.provider
        return out
    data: dict[str, Any] = {
        "role": "tool",
        "call_id": message.call_id,
        "name": message.name,
        "result": result_json(message.result),
    }
    if message.by_host:
        data["by_host"] = True
    return data


def message_from_json(data: Mapping[str, Any]) -> Message:
    """The inverse of :func:`message_to_json`."""
    role = data.get("role")
    if role == "system":
        return SystemMessage(data["content"])
    if role == "user":
        content = data["content"]
        if isinstance(content, str):
            return UserMessage(content)
        parts: list[UserPart] = []
        for item in content:
            part = _part_from_json(item)
            if not isinstance(part, TextPart | OpaquePart):
                raise ValueError(f"a user message cannot hold a {item.get('type')!r} part")
            parts.append(part)
        return UserMessage(tuple(parts))
    if role == "assistant":
        return AssistantMessage(
            parts=tuple(_part_from_json(p) for p in data.get("parts", ())),
            api=data.get("api"),
            model=data.get("model"),
            finish_reason=data.get("finish_reason"),
            usage=usage_from_json(data.get("usage")),
            response_id=data.get("response_id"),
            provider=data.get("provider"),
        )
    if role == "tool":
        return ToolResultMessage(
            call_id=data["call_id"],
            name=data["name"],
            result=result_from_json(data["result"]),
            by_host=data.get("by_host") is True,
        )
    raise ValueError(f"unknown message role {role!r}; expected system, user, assistant or tool")


_CONVERTERS: dict[type, Callable[[Any], dict[str, Any]]] = {
    ToolResult: result_to_json,
    ToolCall: call_to_json,
    AssistantMessage: message_to_json,
    Usage: usage_to_json,
}
"""The JSON form of the records events carry, by exact class (what :func:`_plain` would reach
through its ``isinstance`` checks, without them; a subclass takes the checks)."""


# -- events ------------------------------------------------------------------------------------


def event_to_json(event: Event) -> dict[str, Any]:
    """An event as a flat JSON object with its ``kind`` first (events are redacted already)."""
    kind = type(event)
    form = _EVENT_FORMS.get(kind)
    if form is None:
        form = _EVENT_FORMS[kind] = _event_form(kind)
    names, read, fields = form
    held = event.__dict__ if fields else None
    if held is not None and len(held) == fields:
        # The instance's dict holds its fields alone, in declaration order: copied at C speed.
        out: dict[str, Any] = {"kind": event.kind, **held}
        if fields != len(names):
            del out[_PARTIAL]
        values: Iterable[Any] = out.values()
    else:
        values = read(event)
        out = {"kind": event.kind}
        out.update(zip(names, values, strict=True))
    if not _JSON_LEAVES.issuperset(map(type, values)):  # most events hold leaves only
        for key, value in out.items():
            if type(value) not in _JSON_LEAVES:
                out[key] = _plain(value)
    if "parent" in out and out["parent"] is None:
        del out["parent"]  # only the events of a run started as a tool have a parent
    return out


_PARTIAL = "partial_arguments"
_EventForm = tuple[tuple[str, ...], Callable[[Event], tuple[Any, ...]], int]
_EVENT_FORMS: dict[type, _EventForm] = {}
"""Per event class, worked out once (a run writes every event it emitted)."""


def _event_form(kind: type) -> _EventForm:
    """What :func:`event_to_json` writes of an event class: the fields in declaration order,
    what reads their values from an event, and how many fields an event's instance dict holds
    when it holds them all and nothing else (as the generated ``__init__`` of a class without
    slots sets them), else 0."""
    fields = tuple(f.name for f in attrs.fields(kind))
    # Writing the whole partial value with every delta would make a trace quadratic in the size
    # of the arguments; the delta texts rebuild it.
    names = tuple(name for name in fields if name != _PARTIAL)
    slotted = any("__slots__" in vars(cls) for cls in kind.__mro__ if attrs.has(cls))
    # attrgetter of every name gives a tuple: every event has a run id and a round.
    return names, operator.attrgetter(*names), 0 if slotted else len(fields)
