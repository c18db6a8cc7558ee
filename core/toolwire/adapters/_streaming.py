"""Assembling tool calls from streamed deltas, and parsing tool-call arguments.

Shared by every adapter: calls are keyed by whatever the wire uses (an index, an item id, a
content-block index), arguments are parsed incrementally in linear total time, and each call
ends valid, or invalid with its raw text kept.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from .._json.fast import json_value
from .._json.partial import PartialJSONParser
from ..events import (
    Event,
    TextDelta,
    ThinkingDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolCompleted,
    ToolFailed,
    ToolProgress,
)
from ..messages import AssistantMessage, Message, ToolCall
from ..tools._result import ToolResult
from ..tools._validation import json_type_of
from ._base import EmitEvent, ModelRequest, ProviderError

__all__ = [
    "CallAssembler",
    "event_object",
    "new_call_id",
    "parse_arguments",
    "unique_call_ids",
    "wire_call_id",
    "wire_call_ids",
    "wire_objects",
]

_Part = TypeVar("_Part")


def new_call_id() -> str:
    """A fresh tool-call id, for hosts that send calls without one (``call_`` + 24 hex digits)."""
    return "call_" + uuid.uuid4().hex[:24]


# Where a call keeps the id the provider gave it, when the host had to give it another one.
_WIRE_ID = "wire_id"


def _fresh_id(used: set[str], id_factory: Callable[[], str]) -> str:
    made = id_factory()
    attempt = 0
    while made in used:
        attempt += 1
        made = id_factory() if attempt < 8 else f"{made}_{attempt}"
    return made


def _renamed(call_id: str | None, used: set[str], id_factory: Callable[[], str]) -> str:
    """``call_id`` when it is new in the turn, else a fresh id; the id is then taken."""
    chosen = call_id if call_id and call_id not in used else _fresh_id(used, id_factory)
    used.add(chosen)
    return chosen


def _with_wire_id(
    provider_data: Mapping[str, Any] | None, wire: str | None, chosen: str
) -> dict[str, Any] | None:
    data = None if provider_data is None else dict(provider_data)
    if not wire or wire == chosen:
        return data
    return {**(data or {}), _WIRE_ID: wire}


def unique_call_ids(
    parts: Sequence[_Part], id_factory: Callable[[], str] = new_call_id
) -> list[_Part]:
    """The parts of one turn, each tool call with an id no other call of the turn has.

    A provider may repeat an id or send an empty one; such a call gets a fresh id for the host,
    and keeps the provider's own in its ``provider_data`` for the wire (see
    :func:`wire_call_id`). Parts that are not calls pass unchanged.
    """
    used: set[str] = set()
    out: list[_Part] = []
    for part in parts:
        if isinstance(part, ToolCall):
            chosen = _renamed(part.id, used, id_factory)
            if chosen != part.id:
                part = attrs.evolve(
                    part,
                    id=chosen,
                    provider_data=_with_wire_id(part.provider_data, part.id, chosen),
                )
        out.append(part)
    return out


def wire_call_id(call: ToolCall) -> str:
    """The id to send back to the provider for ``call``: its own, or the one it had on the wire."""
    wire = (call.provider_data or {}).get(_WIRE_ID)
    return wire if isinstance(wire, str) and wire else call.id


def wire_call_ids(messages: Sequence[Message]) -> dict[str, str]:
    """For the calls of ``messages`` whose host id differs from the wire's: host id → wire id.

    Results name calls by host id; an adapter renders ``mapping.get(call_id, call_id)``.
    """
    mapping: dict[str, str] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            for part in message.parts:
                # Only a call with provider data can keep another id for the wire.
                if isinstance(part, ToolCall) and part.provider_data:
                    wire = wire_call_id(part)
                    if wire != part.id:
                        mapping[part.id] = wire
    return mapping


def event_object(data: str, api: str) -> dict[str, Any]:
    """The JSON object in the data of one streamed event.

    :raises ProviderError: naming the API and showing the start of the data, when the data is
        not JSON or not an object (a garbage line from a proxy, a truncated chunk).
    """
    try:
        value = json_value(data)
    except (ValueError, RecursionError):
        kind = "is not JSON"
    else:
        if isinstance(value, dict):
            return value
        kind = f"is a JSON {json_type_of(value)}, not an object"
    raise ProviderError(
        f"{api}: a streamed event {kind}: {data[:200]!r}; the stream cannot be read", api=api
    )


def wire_objects(value: Any, what: str, api: str) -> list[Mapping[str, Any]]:
    """``value`` as a list of JSON objects (None and an absent field are an empty list).

    :param what: the field, for the error (``message.tool_calls``).
    :raises ProviderError: when ``value`` is not a list, or holds something else than objects.
    """
    if value is None:
        return []
    if not isinstance(value, list):
        raise ProviderError(
            f"{api}: {what} is a JSON {json_type_of(value)}, not a list: {str(value)[:200]!r}",
            api=api,
        )
    for index, item in enumerate(value):
        # Parsed JSON holds dicts: the exact type check spares the ABC's on every delta.
        if type(item) is not dict and not isinstance(item, Mapping):
            raise ProviderError(
                f"{api}: {what}[{index}] is a JSON {json_type_of(item)}, not an object: "
                f"{str(item)[:200]!r}",
                api=api,
            )
    return value


def _is_blank(text: str) -> bool:
    return not text or text.isspace() or text.strip() == "null"


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Parse the arguments of a complete (not streamed) call.

    :param raw: the arguments as the wire gave them: a JSON text, an already parsed object
        (some hosts send one), or None.
    :returns: ``(arguments, None)`` for a JSON object; ``({}, None)`` for a call without
        arguments (None, an empty text or ``null``); ``(None, reason)`` when the text is not a
        JSON object.
    """
    if isinstance(raw, str):
        if _is_blank(raw):
            return {}, None
    elif raw is None:
        return {}, None
    # Parsed JSON holds dicts: the exact type check spares the ABC's (run in Python).
    elif type(raw) is dict or isinstance(raw, Mapping):
        return dict(raw), None
    else:
        return None, f"the arguments are a JSON {type(raw).__name__}, not an object"
    try:
        value = json_value(raw)
    except ValueError as exc:
        return None, f"the arguments are not valid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"the arguments are a JSON {json_type_of(value)}, not an object"
    return value, None


def provider_result_event(
    run_id: str, round: int | None, call: ToolCall, result: ToolResult
) -> ToolCompleted | ToolFailed:
    """The event reporting what a call the provider ran (``provider_executed``) came to:
    ``ToolCompleted`` for an ``ok`` result, ``ToolFailed`` otherwise.

    The result is for people and observers (a card, a trace); the provider keeps its own copy in
    its turn, and the host sends nothing of it back.
    """
    kind = ToolCompleted if result.is_ok else ToolFailed
    return kind(run_id=run_id, round=round, call_id=call.id, name=call.name, result=result)


def provider_call_events(
    request: ModelRequest,
    message: AssistantMessage,
    results: Mapping[str, ToolResult],
) -> list[Event]:
    """The events a stream would have emitted for the provider-run calls of a whole answer:
    each call started and completed with its arguments, then what it came to (``results`` by
    call id; a call without one gets no result event). For the non-streamed path of an adapter
    whose API runs tools itself."""
    events: list[Event] = []
    for index, call in enumerate(message.tool_calls):
        if not call.provider_executed:
            continue
        run_id, round = request.run_id, request.round
        events.append(
            ToolCallStarted(
                run_id=run_id,
                round=round,
                call_id=call.id,
                name=call.name,
                index=index,
                provider_executed=True,
            )
        )
        events.append(ToolCallCompleted(run_id=run_id, round=round, call=call))
        result = results.get(call.id)
        if result is not None:
            events.append(provider_result_event(run_id, round, call, result))
    return events


class _OpenCall:
    __slots__ = (
        "call_id",
        "closed",
        "index",
        "name",
        "parser",
        "pending",
        "provider_data",
        "provider_executed",
        "started",
    )

    def __init__(self, index: int) -> None:
        self.index = index
        self.call_id: str | None = None
        self.name: str | None = None
        self.parser = PartialJSONParser()
        self.pending: list[str] = []  # argument text received before the call could start
        self.provider_data: dict[str, Any] | None = None
        self.provider_executed = False
        self.started = False
        self.closed = False


class CallAssembler:
    """Builds the tool calls of one streamed answer and emits their events.

    The adapter feeds what the wire says, keyed by any hashable ``key``:
    :meth:`begin` (id and name, possibly in pieces), :meth:`arguments` (text deltas) and
    :meth:`complete` (the call is over). A call is announced with ``ToolCallStarted`` as soon as
    its name is known (an id is generated when the wire has none by then); every argument delta
    is emitted with the arguments parsed leniently so far; ``ToolCallCompleted`` carries the final
    :class:`ToolCall`. :meth:`finish` closes calls the stream left open (cut off): they end
    invalid with their raw text kept.

    ``partial_arguments`` in the delta events is the parser's live value (no copy per delta, which
    would make the total time quadratic): copy it to keep a snapshot.

    :param request: the request being answered (its run id and round stamp every event).
    :param emit: where the events go; None for an answer read whole rather than streamed
        (nobody hears of it piece by piece), which makes no events at all.
    :param id_factory: makes ids for calls the wire sent without one.
    """

    def __init__(
        self,
        request: ModelRequest,
        emit: EmitEvent | None,
        *,
        id_factory: Callable[[], str] = new_call_id,
    ) -> None:
        self._run_id = request.run_id
        self._round = request.round
        # Calls are read back under their canonical names when the request aliased some.
        names = request.tool_names
        self._canonical = names.canonical if names is not None and names.aliases else None
        self._emit = emit
        self._id_factory = id_factory
        self._calls: dict[Hashable, _OpenCall] = {}
        self._order: list[_OpenCall] = []
        self._done: dict[int, ToolCall] = {}
        self._used_ids: set[str] = set()

    # -- text ---------------------------------------------------------------------------------

    def text(self, delta: str) -> None:
        """Emit a piece of visible text."""
        if delta and self._emit is not None:
            self._emit(TextDelta(run_id=self._run_id, round=self._round, text=delta))

    def thinking(self, delta: str) -> None:
        """Emit a piece of reasoning text."""
        if delta and self._emit is not None:
            self._emit(ThinkingDelta(run_id=self._run_id, round=self._round, text=delta))

    # -- calls --------------------------------------------------------------------------------

    def has(self, key: Hashable) -> bool:
        """True when a call with this key was begun."""
        return key in self._calls

    def begin(
        self,
        key: Hashable,
        *,
        call_id: str | None = None,
        name: str | None = None,
        provider_executed: bool = False,
        provider_data: Mapping[str, Any] | None = None,
    ) -> None:
        """Begin the call ``key``, or add what a later delta says about it (id, name pieces).

        A name that arrives in pieces is concatenated, as Chat Completions hosts may send it.
        """
        call = self._calls.get(key)
        if call is None:
            call = _OpenCall(len(self._order))
            self._calls[key] = call
            self._order.append(call)
        if call.closed:
            return
        if call_id and call.call_id is None:
            call.call_id = call_id
        if name:
            call.name = name if (call.name is None or call.started) else call.name + name
        if provider_executed:
            call.provider_executed = True
        if provider_data:
            call.provider_data = {**(call.provider_data or {}), **provider_data}
        if not call.started and call.name:
            self._start(call)

    def arguments(self, key: Hashable, delta: str) -> None:
        """Add argument text to the call ``key`` (begun implicitly if the wire skipped that)."""
        if not delta:
            return
        call = self._calls.get(key)
        if call is None:
            self.begin(key)
            call = self._calls[key]
        if call.closed:
            return
        call.parser.feed(delta)
        if not call.started:
            call.pending.append(delta)
            return
        if self._emit is None:
            return
        self._emit(
            ToolCallArgumentsDelta(
                run_id=self._run_id,
                round=self._round,
                call_id=call.call_id or "",
                delta=delta,
                partial_arguments=call.parser.value,
            )
        )

    def complete(
        self,
        key: Hashable,
        *,
        final_arguments: Any = None,
        use_final: bool = False,
        provider_data: Mapping[str, Any] | None = None,
    ) -> ToolCall | None:
        """End the call ``key`` and emit ``ToolCallCompleted``; returns the call (None if unknown).

        :param final_arguments: the complete arguments when the wire repeats them at the end
            (a text or an object); used instead of the streamed text when ``use_final`` is true
            and they differ from it.
        :param use_final: whether ``final_arguments`` is authoritative.
        :param provider_data: more opaque data to keep on the call.
        """
        call = self._calls.get(key)
        if call is None or call.closed:
            return self._done.get(call.index) if call is not None else None
        if provider_data:
            call.provider_data = {**(call.provider_data or {}), **provider_data}
        if not call.started:
            self._start(call)
        raw = call.parser.raw
        if use_final and final_arguments is not None:
            if isinstance(final_arguments, str):
                if final_arguments != raw:
                    raw = final_arguments
                    arguments, reason = parse_arguments(raw)
                    return self._close(call, arguments, raw, reason)
            else:
                arguments, reason = parse_arguments(final_arguments)
                return self._close(call, arguments, raw or None, reason)
        if _is_blank(raw):
            return self._close(call, {}, raw, None)
        try:
            value = call.parser.finish()
        except ValueError as exc:
            return self._close(call, None, raw, f"the arguments are not valid JSON: {exc}")
        if not isinstance(value, dict):
            reason = f"the arguments are a JSON {json_type_of(value)}, not an object"
            return self._close(call, None, raw, reason)
        return self._close(call, value, raw, None)

    def progress(self, key: Hashable, message: str, fraction: float | None = None) -> None:
        """Report how a provider-run call ``key`` is going (``ToolProgress``): searching,
        running code. Nothing for a key that was never begun."""
        call = self._calls.get(key)
        if call is None or not call.started or not call.call_id or self._emit is None:
            return
        self._emit(
            ToolProgress(
                run_id=self._run_id,
                round=self._round,
                call_id=call.call_id,
                name=self._name(call),
                message=message,
                fraction=fraction,
            )
        )

    def provider_result(self, call: ToolCall, result: ToolResult) -> None:
        """Report what a call the provider ran came to (see :func:`provider_result_event`)."""
        if self._emit is not None:
            self._emit(provider_result_event(self._run_id, self._round, call, result))

    def complete_open(self) -> list[ToolCall]:
        """Complete every call still open, in the order they began (the wire said the turn is
        over, as Chat Completions does with its finish reason)."""
        completed: list[ToolCall] = []
        for key, call in list(self._calls.items()):
            if not call.closed:
                made = self.complete(key)
                if made is not None:
                    completed.append(made)
        return completed

    def finish(self, reason: str, *, key: Hashable | None = None) -> list[ToolCall]:
        """Close every call still open (or only the call ``key``) because the stream ended; each
        ends invalid unless its arguments happen to be complete JSON. ``reason`` says why the
        stream ended."""
        closed: list[ToolCall] = []
        chosen = self._order if key is None else [self._calls[key]] if key in self._calls else []
        for call in chosen:
            if call.closed:
                continue
            raw = call.parser.raw
            if not call.started:
                self._start(call)
            if call.parser.complete or _is_blank(raw):
                made = self._finish_complete_text(call, raw)
            else:
                made = self._close(
                    call,
                    None,
                    raw,
                    f"the stream ended before the arguments were complete ({reason})",
                )
            closed.append(made)
        return closed

    def _finish_complete_text(self, call: _OpenCall, raw: str) -> ToolCall:
        arguments, why = parse_arguments(raw)
        return self._close(call, arguments, raw, why)

    @property
    def calls(self) -> list[ToolCall]:
        """The completed calls, in the order they began."""
        return [self._done[c.index] for c in self._order if c.index in self._done]

    @property
    def open_count(self) -> int:
        """How many begun calls are not complete yet."""
        return sum(1 for c in self._order if not c.closed)

    # -- internals ----------------------------------------------------------------------------

    def _assign_id(self, call: _OpenCall) -> str:
        """Give ``call`` an id unique in the turn, keeping a repeated wire id for the wire."""
        wire = call.call_id
        chosen = _renamed(wire, self._used_ids, self._id_factory)
        if wire and wire != chosen:  # (the call's provider data is its own: no copy otherwise)
            call.provider_data = _with_wire_id(call.provider_data, wire, chosen)
        call.call_id = chosen
        return chosen

    def _name(self, call: _OpenCall) -> str:
        name = call.name or ""
        return self._canonical(name) if self._canonical is not None else name

    def _start(self, call: _OpenCall) -> None:
        call_id = self._assign_id(call)
        call.started = True
        emit = self._emit
        if emit is None:
            call.pending.clear()
            return
        emit(
            ToolCallStarted(
                run_id=self._run_id,
                round=self._round,
                call_id=call_id,
                name=self._name(call),
                index=call.index,
                provider_executed=call.provider_executed,
            )
        )
        if call.pending:
            delta = "".join(call.pending)
            call.pending.clear()
            emit(
                ToolCallArgumentsDelta(
                    run_id=self._run_id,
                    round=self._round,
                    call_id=call_id,
                    delta=delta,
                    partial_arguments=call.parser.value,
                )
            )

    def _close(
        self,
        call: _OpenCall,
        arguments: dict[str, Any] | None,
        raw: str | None,
        reason: str | None,
    ) -> ToolCall:
        call.closed = True
        name = self._name(call)
        made = ToolCall(
            id=call.call_id if call.started and call.call_id else self._assign_id(call),
            name=name,
            arguments=arguments,
            raw_arguments=raw,
            invalid_reason=reason,
            provider_executed=call.provider_executed,
            provider_data=call.provider_data,
        )
        self._done[call.index] = made
        if self._emit is not None:
            self._emit(ToolCallCompleted(run_id=self._run_id, round=self._round, call=made))
        return made
