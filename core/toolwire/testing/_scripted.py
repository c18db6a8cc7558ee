"""``ScriptedModel``: an in-process adapter that plays a script, for tests and tool authors."""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from .._json.partial import PartialJSONParser
from ..adapters._base import (
    AdapterCapabilities,
    EmitEvent,
    ModelRequest,
    ProviderAdapter,
    ProviderError,
)
from ..config import ProviderConfig
from ..events import (
    TextDelta,
    ThinkingDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from ..messages import (
    AssistantMessage,
    AssistantPart,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
)
from ..tools._spec import FunctionSpec

if TYPE_CHECKING:
    from ..http._transport import Transport

__all__ = [
    "ScriptTurn",
    "ScriptedModel",
    "example_arguments",
    "tool_call",
]

ScriptTurn: TypeAlias = str | ToolCall | Sequence[ToolCall] | AssistantMessage | Mapping[str, Any]
"""One scripted turn: a text answer, one call, several calls, a whole assistant message, or the
config form ``{"text": …, "thinking": …, "tool_calls": [{"name": …, "arguments": {…}}]}``."""

Responder: TypeAlias = Callable[[ModelRequest], "ScriptTurn | Awaitable[ScriptTurn]"]
"""A function of the request (conversation and offered functions) returning the next turn."""

_TURN_KEYS = ("text", "thinking", "tool_calls")
_CALL_KEYS = ("id", "name", "arguments", "raw_arguments")
_OPTION_KEYS = ("script", "mode", "answer_prefix", "latency")


def tool_call(
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    id: str | None = None,
    raw_arguments: str | None = None,
) -> ToolCall:
    """A tool call for a script: parsed ``arguments``, or ``raw_arguments`` text exactly as a
    model might send it (then the arguments count as unparsed and the loop repairs or refuses them).
    The id defaults to ``call_<round>_<index>``.
    """
    if raw_arguments is not None:
        if arguments is not None:
            raise ValueError("tool_call() takes arguments or raw_arguments, not both")
        return ToolCall(
            id=id or "",
            name=name,
            raw_arguments=raw_arguments,
            invalid_reason="scripted raw arguments",
        )
    args = dict(arguments or {})
    return ToolCall(id=id or "", name=name, arguments=args, raw_arguments=_dumps(args))


class ScriptedModel(ProviderAdapter):
    """A provider adapter that answers from a script instead of a server (``api = "scripted"``).

    Three ways to drive it:

    - a **script**, a sequence of turns: turn *i* answers the request whose conversation already
      holds *i* assistant turns (so a resumed run, even in a new process, continues where it was);
      a turn is a text, a :class:`~toolwire.messages.ToolCall` (see :func:`tool_call`), a list of
      calls, an :class:`~toolwire.messages.AssistantMessage`, or the config form
      ``{"text": "…", "tool_calls": [{"name": "…", "arguments": {…}}]}``;
    - a **function** of the :class:`~toolwire.adapters.ModelRequest` returning such a turn (it may
      be async);
    - **schema-driven** (no script): the first turn calls every offered function once with
      arguments made from its JSON Schema (:func:`example_arguments`), later turns call the
      functions offered since, and then the model answers with the text of every result.

    With ``[provider] adapter = "scripted"`` the script comes from ``[provider] options``:
    ``script = [...]`` (config form turns); no script means schema-driven; ``latency`` is the
    seconds each answer takes (a simulated model, for benchmarks and deadline tests). When the
    request asks for streaming, the turn is also emitted as text deltas and tool-call started /
    argument delta / completed events, so renderers can be tested without a server.
    """

    api: ClassVar[str] = "scripted"

    def __init__(
        self,
        config: ProviderConfig | None = None,
        transport: Transport | None = None,
        *,
        script: Sequence[ScriptTurn] | Responder | None = None,
        chunk_size: int = 8,
    ) -> None:
        config = config or ProviderConfig(adapter=self.api)
        super().__init__(config, transport)
        options = dict(config.options)
        unknown = sorted(set(options) - set(_OPTION_KEYS))
        if unknown:
            raise ValueError(
                f"[provider] options for the scripted model: unknown key(s) {', '.join(unknown)}; "
                f"valid keys: {', '.join(_OPTION_KEYS)}"
            )
        if script is None and "script" in options:
            configured = options["script"]
            if not isinstance(configured, list):
                raise ValueError(
                    f"[provider] options.script = {configured!r}: expected a list of turns"
                )
            script = [
                _turn_from_config(turn, f"options.script[{i}]") for i, turn in enumerate(configured)
            ]
        mode = options.get("mode", "script" if script is not None else "schema")
        if mode not in ("script", "schema"):
            raise ValueError(f"[provider] options.mode = {mode!r}: expected 'script' or 'schema'")
        if mode == "script" and script is None:
            raise ValueError("[provider] options.mode = 'script' needs options.script")
        self._script = script if mode == "script" else None
        self._answer_prefix = str(options.get("answer_prefix", "Tool results:"))
        latency = options.get("latency", 0)
        if (
            isinstance(latency, bool)
            or not isinstance(latency, int | float)
            or not (0 <= latency <= 3600)
        ):
            raise ValueError(
                f"[provider] options.latency = {latency!r}: expected seconds from 0 to 3600"
            )
        self._latency = float(latency)
        self._chunk_size = max(1, chunk_size)
        self.requests: list[ModelRequest] = []

    @property
    def capabilities(self) -> AdapterCapabilities:
        """Everything a native API offers: tools, every tool choice, streaming, parallel flag."""
        return _CAPABILITIES

    def render_tools(self, functions: tuple[FunctionSpec, ...]) -> list[dict[str, Any]]:
        """The functions as plain JSON: name, description, parameters."""
        return [
            {"name": f.name, "description": f.description, "parameters": dict(f.parameters)}
            for f in functions
        ]

    async def complete(self, request: ModelRequest, emit: EmitEvent) -> AssistantMessage:
        """Answer with the next scripted turn (emitting stream events when asked to stream)."""
        self.requests.append(request)
        if self._latency:
            await asyncio.sleep(self._latency)
        if self._script is None:
            turn: ScriptTurn = self._schema_turn(request)
        elif callable(self._script):
            produced = self._script(request)
            turn = await produced if inspect.isawaitable(produced) else produced
        else:
            index = sum(1 for m in request.messages if isinstance(m, AssistantMessage))
            if index >= len(self._script):
                raise ProviderError(
                    f"scripted model: the script has {len(self._script)} turn(s) and the "
                    f"conversation asks for turn {index + 1}",
                    api=self.api,
                )
            turn = self._script[index]
        message = self._message(turn, request)
        if request.stream:
            self._stream(message, request, emit)
        return message

    # -- turns -----------------------------------------------------------------------------

    def _message(self, turn: ScriptTurn, request: ModelRequest) -> AssistantMessage:
        if isinstance(turn, AssistantMessage):
            message = turn
        elif isinstance(turn, str):
            message = AssistantMessage(parts=(TextPart(turn),))
        elif isinstance(turn, ToolCall):
            message = AssistantMessage(parts=(turn,))
        elif isinstance(turn, Mapping):
            message = _turn_from_config(turn, "turn")
        elif isinstance(turn, Sequence) and all(isinstance(c, ToolCall) for c in turn):
            message = AssistantMessage(parts=tuple(turn))
        else:
            raise ProviderError(
                f"scripted model: turn {turn!r} is not a text, a ToolCall, a list of ToolCalls, "
                "an AssistantMessage or a mapping",
                api=self.api,
            )
        parts: list[AssistantPart] = []
        index = 0
        for part in message.parts:
            if isinstance(part, ToolCall):
                if not part.id:
                    part = _with_id(part, f"call_{request.round}_{index}")
                index += 1
            parts.append(part)
        finish = message.finish_reason or ("tool_calls" if index else "stop")
        return AssistantMessage(
            parts=tuple(parts),
            api=message.api or self.api,
            model=message.model or self.config.model or "scripted",
            finish_reason=finish,
            usage=message.usage,
            response_id=message.response_id,
        )

    def _schema_turn(self, request: ModelRequest) -> ScriptTurn:
        called: set[str] = set()
        for message in request.messages:
            if isinstance(message, AssistantMessage):
                called.update(call.name for call in message.tool_calls)
        todo = [f for f in request.functions if f.name not in called]
        if todo and request.tool_choice != "none":
            return [
                tool_call(f.name, example_arguments(f.parameters), id=f"call_{request.round}_{i}")
                for i, f in enumerate(todo)
            ]
        lines = [self._answer_prefix] if self._answer_prefix else []
        for message in request.messages:
            if isinstance(message, ToolResultMessage):
                text = message.result.model_text().replace("\n", " ")
                lines.append(f"- {message.name} ({message.result.status.value}): {text}")
        if len(lines) <= 1:
            return "No tools were offered." if not request.functions else "Nothing to report."
        return "\n".join(lines)

    # -- streaming -------------------------------------------------------------------------

    def _stream(self, message: AssistantMessage, request: ModelRequest, emit: EmitEvent) -> None:
        run_id, round_ = request.run_id, request.round
        size = self._chunk_size
        index = 0
        for part in message.parts:
            if isinstance(part, TextPart):
                for start in range(0, len(part.text), size):
                    emit(
                        TextDelta(run_id=run_id, round=round_, text=part.text[start : start + size])
                    )
            elif isinstance(part, ThinkingPart) and part.text:
                for start in range(0, len(part.text), size):
                    emit(
                        ThinkingDelta(
                            run_id=run_id, round=round_, text=part.text[start : start + size]
                        )
                    )
            elif isinstance(part, ToolCall):
                emit(
                    ToolCallStarted(
                        run_id=run_id,
                        round=round_,
                        call_id=part.id,
                        name=part.name,
                        index=index,
                        provider_executed=part.provider_executed,
                    )
                )
                raw = part.raw_arguments
                if raw is None and part.arguments is not None:
                    raw = _dumps(part.arguments)
                parser = PartialJSONParser()
                for start in range(0, len(raw or ""), size):
                    delta = (raw or "")[start : start + size]
                    parser.feed(delta)
                    emit(
                        ToolCallArgumentsDelta(
                            run_id=run_id,
                            round=round_,
                            call_id=part.id,
                            delta=delta,
                            partial_arguments=copy.deepcopy(parser.value),
                        )
                    )
                emit(ToolCallCompleted(run_id=run_id, round=round_, call=part))
                index += 1


_CAPABILITIES = AdapterCapabilities(
    native_tools=True,
    streaming=True,
    binds_strict_schemas=False,
    accepts_parallel_tool_calls=True,
    max_tool_name_length=64,
)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _with_id(call: ToolCall, call_id: str) -> ToolCall:
    return ToolCall(
        id=call_id,
        name=call.name,
        arguments=call.arguments,
        raw_arguments=call.raw_arguments,
        invalid_reason=call.invalid_reason,
        provider_executed=call.provider_executed,
        provider_data=call.provider_data,
    )


def _turn_from_config(turn: Any, where: str) -> AssistantMessage:
    """A config-form turn (a string or a table) as an assistant message; errors name the key."""
    if isinstance(turn, str):
        return AssistantMessage(parts=(TextPart(turn),))
    if not isinstance(turn, Mapping):
        raise ValueError(f"{where} = {turn!r}: expected a string or a table with {_TURN_KEYS}")
    unknown = sorted(set(turn) - set(_TURN_KEYS))
    if unknown:
        raise ValueError(
            f"{where}: unknown key(s) {', '.join(unknown)}; valid keys: {', '.join(_TURN_KEYS)}"
        )
    parts: list[AssistantPart] = []
    thinking = turn.get("thinking")
    if thinking is not None:
        if not isinstance(thinking, str):
            raise ValueError(f"{where}.thinking = {thinking!r}: expected a string")
        parts.append(ThinkingPart(text=thinking))
    text = turn.get("text")
    if text is not None:
        if not isinstance(text, str):
            raise ValueError(f"{where}.text = {text!r}: expected a string")
        parts.append(TextPart(text))
    calls = turn.get("tool_calls", [])
    if not isinstance(calls, list):
        raise ValueError(f"{where}.tool_calls = {calls!r}: expected a list of tables")
    for i, call in enumerate(calls):
        at = f"{where}.tool_calls[{i}]"
        if not isinstance(call, Mapping):
            raise ValueError(f"{at} = {call!r}: expected a table with {_CALL_KEYS}")
        unknown = sorted(set(call) - set(_CALL_KEYS))
        if unknown:
            raise ValueError(
                f"{at}: unknown key(s) {', '.join(unknown)}; valid keys: {', '.join(_CALL_KEYS)}"
            )
        name = call.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{at}.name = {name!r}: expected the name of a tool")
        arguments = call.get("arguments")
        raw = call.get("raw_arguments")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise ValueError(f"{at}.arguments = {arguments!r}: expected a table")
        if raw is not None and not isinstance(raw, str):
            raise ValueError(f"{at}.raw_arguments = {raw!r}: expected a string")
        call_id = call.get("id")
        if call_id is not None and not isinstance(call_id, str):
            raise ValueError(f"{at}.id = {call_id!r}: expected a string")
        try:
            parts.append(tool_call(name, arguments, id=call_id, raw_arguments=raw))
        except ValueError as exc:
            raise ValueError(f"{at}: {exc}") from None
    return AssistantMessage(parts=tuple(parts))


# -- arguments from a schema ---------------------------------------------------------------------

_FORMAT_EXAMPLES = {
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "email": "user@example.com",
    "date": "2024-01-01",
    "date-time": "2024-01-01T00:00:00Z",
    "time": "00:00:00Z",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
}


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments for a function made from its JSON Schema: every required property, with a
    ``default``, ``const``, the first ``enum`` value, a value of the right ``format``, or a
    plain value of the declared type within its bounds. ``$ref`` to ``#/$defs`` is followed.
    """
    value = _example(schema, schema, depth=0)
    return value if isinstance(value, dict) else {}


def _example(schema: Any, root: Mapping[str, Any], *, depth: int) -> Any:
    if not isinstance(schema, Mapping) or depth > 32:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for key in ref[2:].split("/"):
            target = (
                target.get(key.replace("~1", "/").replace("~0", "~"), {})
                if isinstance(target, Mapping)
                else {}
            )
        return _example(target, root, depth=depth + 1)
    if "default" in schema:
        return copy.deepcopy(schema["default"])
    if "const" in schema:
        return copy.deepcopy(schema["const"])
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        non_null = [v for v in enum if v is not None]
        return copy.deepcopy(non_null[0] if non_null else enum[0])
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            chosen = next(
                (o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")),
                options[0],
            )
            return _example(chosen, root, depth=depth + 1)
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and all_of:
        merged: dict[str, Any] = {}
        for part in all_of:
            if isinstance(part, Mapping):
                merged.update(part)
        return _example(merged, root, depth=depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), kind[0] if kind else None)
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        properties = schema.get("properties") or {}
        required = schema.get("required") or []
        return {
            name: _example(properties.get(name, {}), root, depth=depth + 1)
            for name in required
            if isinstance(name, str)
        }
    if kind == "array":
        items = schema.get("items", {})
        count = max(1, int(schema.get("minItems", 1) or 0))
        if "maxItems" in schema:
            count = min(count, int(schema["maxItems"]))
        item = _example(items, root, depth=depth + 1)
        values = [copy.deepcopy(item) for _ in range(count)]
        if schema.get("uniqueItems") and count > 1:
            values = [f"{item}{i}" if isinstance(item, str) else i for i in range(count)]
        return values
    if kind == "integer":
        return _number(schema, 1, integer=True)
    if kind == "number":
        return _number(schema, 1.0, integer=False)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema)


def _number(schema: Mapping[str, Any], fallback: float, *, integer: bool) -> float | int:
    low = schema.get("minimum")
    exclusive_low = schema.get("exclusiveMinimum")
    high = schema.get("maximum")
    exclusive_high = schema.get("exclusiveMaximum")
    value: float = fallback
    if isinstance(low, int | float):
        value = max(value, low)
    if isinstance(exclusive_low, int | float) and not isinstance(exclusive_low, bool):
        value = max(value, exclusive_low + 1)
    if isinstance(high, int | float):
        value = min(value, high)
    if isinstance(exclusive_high, int | float) and not isinstance(exclusive_high, bool):
        value = min(value, exclusive_high - 1)
    multiple = schema.get("multipleOf")
    if isinstance(multiple, int | float) and multiple > 0:
        value = multiple * max(1, round(value / multiple))
    return int(value) if integer else float(value)


def _string(schema: Mapping[str, Any]) -> str:
    fmt = schema.get("format")
    text = _FORMAT_EXAMPLES.get(fmt, "example") if isinstance(fmt, str) else "example"
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            if not re.search(pattern, text):
                text = _pattern_example(pattern) or text
        except re.error:
            pass
    low = schema.get("minLength")
    if isinstance(low, int) and len(text) < low:
        text = text + "x" * (low - len(text))
    high = schema.get("maxLength")
    if isinstance(high, int) and len(text) > high:
        text = text[:high]
    return text


def _pattern_example(pattern: str) -> str | None:
    """A string matching a simple anchored pattern of literal characters and classes, or None."""
    candidates = ("a", "1", "a1", "abc", "123", "A", "x-1", "example")
    for candidate in candidates:
        if re.search(pattern, candidate):
            return candidate
    return None
