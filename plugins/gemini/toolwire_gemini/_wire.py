"""The Gemini API's wire format: tools, request bodies, answers and streamed answers.

Rendering and parsing are plain functions of JSON values, testable without a server; the adapter
class only adds the sending.

A model turn is a list of parts. Each part maps to one canonical part, in order, and goes back
as it came: text, thought summaries (``thought: true``) as :class:`ThinkingPart`, ``functionCall``
parts as :class:`ToolCall` (the wire part kept in ``provider_data["part"]``, thought signature
included), and every other part (code execution, inline data, a signature on an empty text) as
an :class:`OpaquePart` holding it whole. A thought signature on a visible text part rides in an
:class:`OpaquePart` right after its :class:`TextPart` (``{"extra": {...}}``) and is put back on
that text when the turn is sent again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple

from toolwire import FunctionSpec
from toolwire.adapters import (
    ApiKeyHeader,
    CallAssembler,
    EmitEvent,
    ModelRequest,
    NamedToolChoice,
    ProviderError,
    check_tool_choice,
    event_object,
    extra_fields,
    new_call_id,
    provider_tools,
    wire_objects,
)
from toolwire.messages import (
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
)
from toolwire.usage import Usage

from ._schema import project_schema

if TYPE_CHECKING:
    from toolwire.output import OutputSpec

__all__ = [
    "API",
    "GEMINI_NAME",
    "GOOGLE_KEY_HEADER",
    "SKIP_SIGNATURE",
    "GenerateStream",
    "ResultRole",
    "SchemaMode",
    "declaration",
    "gemini_spelling",
    "parse_response",
    "render_contents",
    "render_request",
    "render_tools",
]

API: Final = "gemini"

GOOGLE_KEY_HEADER: Final = ApiKeyHeader("x-goog-api-key", "")
"""``x-goog-api-key: <key>``: the key goes in this header, never in the URL."""

GEMINI_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*")
"""The function names Gemini accepts: a letter or ``_`` first, then letters, digits, ``_ . : -``
(at most :data:`MAX_NAME_LENGTH`)."""
MAX_NAME_LENGTH: Final = 64

SKIP_SIGNATURE: Final = "skip_thought_signature_validator"
"""The thought signature Google documents for calls the model did not write itself (history
from another provider, a call the host wrote for a malformed one): Gemini 3 refuses the first
call of a step without a signature."""

SchemaMode = Literal["auto", "openapi", "json-schema"]
"""How parameter schemas are sent: ``openapi`` projects each into ``parameters`` (Gemini's
OpenAPI subset) and refuses a tool that cannot be projected; ``json-schema`` sends each as
written in ``parametersJsonSchema`` (Gemini 2.5 and later); ``auto`` projects where the
projection is lossless and sends the rest as written."""

ResultRole = Literal["user", "function"]
"""The role of the turn carrying tool results: ``user`` (current models) or ``function``
(older ones)."""

_NOT_NAME: Final = re.compile(r"[^A-Za-z0-9_.:-]")
_TEXT_KEYS: Final = frozenset({"text", "thought", "thoughtSignature"})
_RETRYABLE_STATUSES: Final = frozenset({"RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL"})
_FILTERED: Final = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    }
)
_MALFORMED: Final = "MALFORMED_FUNCTION_CALL"
_CALLED: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_.:-]*)\s*\(")


def gemini_spelling(name: str) -> str:
    """The readable alias of a name Gemini refuses: each other character written ``_``, and a
    ``_`` in front of a first character that is no letter (``3d.render`` → ``_3d.render``)."""
    spelled = _NOT_NAME.sub("_", name)
    first = spelled[:1]
    return spelled if first == "_" or "a" <= first.lower() <= "z" else "_" + spelled


# -- tools -------------------------------------------------------------------------------------


def declaration(
    spec: FunctionSpec, *, schemas: SchemaMode = "auto", open_objects: bool = False
) -> dict[str, Any]:
    """One function as Gemini receives it (``name``, ``description``, and ``parameters`` or
    ``parametersJsonSchema``; neither for a function without parameters).

    :raises ProviderError: in ``openapi`` mode, for a schema the subset cannot express, naming
        the tool and each problem.
    """
    body: dict[str, Any] = {"name": spec.name, "description": spec.description}
    if schemas == "json-schema":
        if _takes_arguments(spec.parameters):
            body["parametersJsonSchema"] = dict(spec.parameters)
        return body
    projection = project_schema(spec.parameters, open_objects=open_objects)
    if projection.verdict == "lossless" or (schemas == "openapi" and projection.schema is not None):
        if projection.schema:
            body["parameters"] = dict(projection.schema)
        return body
    if schemas == "openapi":
        raise ProviderError(
            f"{API}: the tool {spec.name!r} cannot be sent in Gemini's schema subset: "
            f"{'; '.join(projection.problems)}. Send it as JSON Schema with [providers.gemini] "
            'schemas = "auto" or "json-schema" (Gemini 2.5 and later), or leave it out of the '
            "offer ([tools] deny)",
            api=API,
        )
    body["parametersJsonSchema"] = dict(spec.parameters)
    return body


def output_config(
    spec: OutputSpec, *, schemas: SchemaMode = "auto", open_objects: bool = False
) -> dict[str, Any]:
    """The ``generationConfig`` fields of a run's typed output: JSON answers
    (``responseMimeType``) bound to the schema, in ``responseSchema`` (Gemini's subset) where
    the projection is lossless (or in ``openapi`` mode), else as written in
    ``responseJsonSchema``, as for tool parameters.

    :raises ProviderError: in ``openapi`` mode, for a schema the subset cannot express.
    """
    fields: dict[str, Any] = {"responseMimeType": "application/json"}
    if schemas == "json-schema":
        fields["responseJsonSchema"] = dict(spec.schema)
        return fields
    projection = project_schema(spec.schema, open_objects=open_objects)
    if projection.verdict == "lossless" or (schemas == "openapi" and projection.schema is not None):
        fields["responseSchema"] = dict(projection.schema or {})
        return fields
    if schemas == "openapi":
        raise ProviderError(
            f"{API}: the output schema {spec.name!r} cannot be sent in Gemini's schema subset: "
            f"{'; '.join(projection.problems)}. Send it as JSON Schema with [providers.gemini] "
            'schemas = "auto" or "json-schema"',
            api=API,
        )
    fields["responseJsonSchema"] = dict(spec.schema)
    return fields


def _takes_arguments(schema: Mapping[str, Any]) -> bool:
    return bool(schema.get("properties")) or schema.get("additionalProperties") not in (None, False)


def render_tools(
    functions: Sequence[FunctionSpec], *, schemas: SchemaMode = "auto", open_objects: bool = False
) -> list[dict[str, Any]]:
    """The ``tools`` array: one ``Tool`` holding every function's declaration.

    :raises ProviderError: in ``openapi`` mode, for a tool whose schema cannot be projected.
    """
    if not functions:
        return []
    declarations = [declaration(f, schemas=schemas, open_objects=open_objects) for f in functions]
    return [{"functionDeclarations": declarations}]


def schema_notes(
    functions: Sequence[FunctionSpec], *, schemas: SchemaMode = "auto", open_objects: bool = False
) -> list[str]:
    """What Gemini receives differently from each function's canonical schema."""
    notes: list[str] = []
    for spec in functions:
        if schemas == "json-schema":
            continue
        projection = project_schema(spec.parameters, open_objects=open_objects)
        if projection.verdict == "lossless":
            continue
        if schemas == "auto":
            why = projection.problems or projection.notes
            notes.append(
                f"{spec.name}: sent as written in parametersJsonSchema (Gemini 2.5 and later), "
                f"because Gemini's schema subset would change it: {'; '.join(why)}"
            )
        else:
            notes.extend(f"{spec.name}: {note}" for note in projection.notes)
    return notes


# -- contents ----------------------------------------------------------------------------------


def _wire_part(part: ToolCall | ThinkingPart) -> dict[str, Any] | None:
    """A copy of the wire part Gemini sent for ``part``, kept in its provider data, if any."""
    kept = (part.provider_data or {}).get("part")
    # Kept parts are parsed JSON, dicts: the exact type check spares the ABC's (run in Python).
    return dict(kept) if type(kept) is dict or isinstance(kept, Mapping) else None


def _function_call(call: ToolCall) -> dict[str, Any]:
    """A call's wire part: the part Gemini sent (its signature, the call's id), if it wrote the
    call, with the call's name and arguments."""
    part = _wire_part(call) or {}
    function = part.get("functionCall")
    function = dict(function) if type(function) is dict or isinstance(function, Mapping) else {}
    function["name"] = call.name
    function["args"] = dict(call.arguments) if call.arguments is not None else {}
    part["functionCall"] = function
    return part


class _ModelTurn(NamedTuple):
    """The parts of an assistant message, the id Gemini gave each of its calls, and their
    order (the order its results go back in)."""

    parts: list[dict[str, Any]]
    call_ids: dict[str, str | None]
    order: dict[str, int]


def _model_turn(message: AssistantMessage) -> _ModelTurn:
    own = message.api == API
    parts: list[dict[str, Any]] = []
    call_ids: dict[str, str | None] = {}
    order: dict[str, int] = {}
    sent = 0  # the calls sent so far
    for part in message.parts:
        if isinstance(part, ToolCall):
            if not part.provider_executed:
                wire = _function_call(part)
                wire_id = wire["functionCall"].get("id")  # the id Gemini gave, if it wrote it
                call_ids[part.id] = wire_id if isinstance(wire_id, str) and wire_id else None
                order[part.id] = sent
                sent += 1
                parts.append(wire)
        elif isinstance(part, TextPart):
            if part.text:
                parts.append({"text": part.text})
        elif isinstance(part, ThinkingPart):
            kept = _wire_part(part)
            if own and kept is not None:  # thought summaries go back only to Gemini
                parts.append(kept)
        elif isinstance(part, OpaquePart) and part.api == API and isinstance(part.data, Mapping):
            extra = part.data.get("extra")
            kept = part.data.get("part")
            if isinstance(extra, Mapping):
                if parts and set(parts[-1]) == {"text"}:
                    parts[-1].update(extra)
                else:
                    parts.append({"text": "", **extra})
            elif isinstance(kept, Mapping):
                parts.append(dict(kept))
    calls: list[dict[str, Any]] = []
    signed = False  # whether a call carries a signature
    for item in parts:
        if "functionCall" in item:
            calls.append(item)
            signed = signed or "thoughtSignature" in item
    if calls and not signed:
        written = all(_wire_part(c) is not None for c in message.tool_calls)
        if not (own and written):
            # Calls Gemini did not write itself: the documented signature that says so.
            calls[0]["thoughtSignature"] = SKIP_SIGNATURE
    return _ModelTurn(parts, call_ids, order)


def _function_response(message: ToolResultMessage, wire_id: str | None) -> dict[str, Any]:
    text = message.result.model_text()
    response = {"error": text} if message.result.is_failure else {"output": text}
    body: dict[str, Any] = {"name": message.name, "response": response}
    if wire_id is not None:
        body = {"id": wire_id, **body}
    return {"functionResponse": body}


def _wire(message: Message, wire_id: Any) -> Any:
    """One message on the wire: the parts of a user message, the :class:`_ModelTurn` of an
    assistant message, the ``functionResponse`` part of a result (``wire_id``: the id Gemini
    gave its call); None for a system message (it goes to ``systemInstruction``)."""
    if isinstance(message, ToolResultMessage):
        return _function_response(message, wire_id)
    if isinstance(message, UserMessage):
        return _user_parts(message)
    if isinstance(message, AssistantMessage):
        return _model_turn(message)
    return None


def render_contents(
    messages: Sequence[Message], *, result_role: ResultRole = "user"
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """``(systemInstruction, contents)``: system messages joined into the instruction; each
    round's results in ONE turn of ``functionResponse`` parts (role ``result_role``), in the
    order of the calls they answer and with the call's id where Gemini gave one (else matched
    by name and order)."""
    return _contents(messages, _wire, result_role=result_role)


def _contents(
    messages: Sequence[Message], render: Callable[[Message, Any], Any], *, result_role: ResultRole
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """``(systemInstruction, contents)``, each message rendered by ``render`` (:func:`_wire`,
    or a :class:`RenderedMessages` of it)."""
    fold = _Contents(render, result_role=result_role)
    for message in messages:
        fold.feed(message)
    return fold.result()


class _Contents:
    """``(systemInstruction, contents)`` built one message at a time, so a run's next request
    adds only its new messages (a fold of :class:`RenderedHistory`). The rendered parts and the
    turns already built are never changed: a turn that gathers the parts of several messages is
    a new turn with a list of its own."""

    __slots__ = (
        "_contents",
        "_order",
        "_render",
        "_result_role",
        "_results",
        "_system",
        "_wire_ids",
    )

    def __init__(self, render: Callable[[Message, Any], Any], *, result_role: ResultRole) -> None:
        self._render = render
        self._result_role = result_role
        self._system: list[str] = []
        self._contents: list[dict[str, Any]] = []
        self._wire_ids: dict[str, str | None] = {}
        self._order: dict[str, int] = {}
        self._results: list[ToolResultMessage] = []

    def feed(self, message: Message) -> None:
        if isinstance(message, ToolResultMessage):
            self._results.append(message)
            return
        self._flush(self._contents)
        if isinstance(message, SystemMessage):
            if message.content:
                self._system.append(message.content)
        elif isinstance(message, UserMessage):
            _add(self._contents, "user", self._render(message, None))
        elif isinstance(message, AssistantMessage):
            turn: _ModelTurn = self._render(message, None)
            self._order = turn.order
            self._wire_ids.update(turn.call_ids)
            _add(self._contents, "model", turn.parts)

    def _flush(self, contents: list[dict[str, Any]]) -> None:
        """Add the pending results to ``contents`` as one turn, in the order of their calls."""
        results = self._results
        if not results:
            return
        if len(results) > 1:
            order = self._order
            results = sorted(results, key=lambda m: order.get(m.call_id, len(order)))
        parts = []
        for message in results:
            parts.append(self._render(message, self._wire_ids.get(message.call_id)))
        _add(contents, self._result_role, parts)
        if contents is self._contents:
            self._results = []

    def copy(self) -> _Contents:
        # Made without __init__: a fold is copied every request.
        other = _Contents.__new__(_Contents)
        other._render, other._result_role = self._render, self._result_role
        other._system = list(self._system)
        other._contents = list(self._contents)
        other._wire_ids = dict(self._wire_ids)
        other._order = self._order
        other._results = list(self._results)
        return other

    def result(self) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """A new list (a request may add to it), of the kept turns."""
        contents = list(self._contents)
        self._flush(contents)
        system = self._system
        instruction = {"parts": [{"text": "\n\n".join(system)}]} if system else None
        return instruction, contents


def _add(contents: list[dict[str, Any]], role: str, parts: list[dict[str, Any]]) -> None:
    """Append a turn of ``parts``, or a new turn in place of the last one when it has the same
    role (the kept turn is left as it is)."""
    if not parts:
        return  # Gemini refuses a turn without parts
    if contents and contents[-1]["role"] == role:
        contents[-1] = {"role": role, "parts": [*contents[-1]["parts"], *parts]}
    else:
        contents.append({"role": role, "parts": parts})


def _user_parts(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"text": message.content}] if message.content else []
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            if part.text:
                parts.append({"text": part.text})
        elif isinstance(part, OpaquePart) and part.api == API and isinstance(part.data, Mapping):
            kept = part.data.get("part")
            if isinstance(kept, Mapping):
                parts.append(dict(kept))
    return parts


# -- the request -------------------------------------------------------------------------------


def tool_config(request: ModelRequest, *, validated: bool = False) -> dict[str, Any]:
    """``toolConfig.functionCallingConfig``: ``auto`` → ``AUTO`` (``VALIDATED`` when
    ``validated``), ``none`` → ``NONE``, ``required`` → ``ANY``, a named tool → ``ANY`` with
    ``allowedFunctionNames``."""
    choice = request.tool_choice
    if isinstance(choice, NamedToolChoice):
        config: dict[str, Any] = {"mode": "ANY", "allowedFunctionNames": [choice.name]}
    elif choice == "required":
        config = {"mode": "ANY"}
    elif choice == "none":
        config = {"mode": "NONE"}
    else:
        config = {"mode": "VALIDATED" if validated else "AUTO"}
    return {"functionCallingConfig": config}


_LOOP_OWNED: Final = ("toolConfig", "tool_config")
_OUTPUT_FIELDS: Final = frozenset({"responseMimeType", "responseSchema", "responseJsonSchema"})


def render_request(
    request: ModelRequest,
    config: Any,
    *,
    tools: list[dict[str, Any]] | None = None,
    contents: tuple[dict[str, Any] | None, list[dict[str, Any]]] | None = None,
    result_role: ResultRole = "user",
    validated: bool = False,
    schemas: SchemaMode = "auto",
    open_objects: bool = False,
) -> dict[str, Any]:
    """The whole ``generateContent`` body for ``request`` under the ``[provider]`` config.

    ``tools`` is the rendered ``tools`` array when the caller has it already, and ``contents``
    the ``(systemInstruction, contents)`` of :func:`render_contents`. Tools Gemini runs
    itself (``[provider] provider_tools``, such as ``{ googleSearch = {} }``) follow the
    functions; ``max_tokens`` and ``temperature`` go into ``generationConfig``; ``[provider]
    options`` and the request's options are merged in last (a ``generationConfig`` table key by
    key), never the tool fields the loop decides. A run's typed output (``request.output``)
    goes into ``generationConfig`` (:func:`output_config`).
    """
    check_tool_choice(request, API)
    if contents is None:
        contents = render_contents(request.messages, result_role=result_role)
    instruction, turns = contents
    body: dict[str, Any] = {"contents": turns}
    if instruction is not None:
        body["systemInstruction"] = instruction
    declared = (
        tools
        if tools is not None
        else render_tools(request.functions, schemas=schemas, open_objects=open_objects)
    )
    hosted = provider_tools(config)
    if declared or hosted:
        body["tools"] = [*declared, *hosted]
    if request.functions:
        body["toolConfig"] = tool_config(request, validated=validated)
    generation: dict[str, Any] = {}
    if config.max_tokens is not None:
        generation["maxOutputTokens"] = config.max_tokens
    if config.temperature is not None:
        generation["temperature"] = config.temperature
    extra = extra_fields(config, request, API)
    if extra:  # options are set (most configs set none)
        owned = [key for key in _LOOP_OWNED if key in extra]
        if owned:
            raise ProviderError(
                f"{API}: [provider] options set {', '.join(owned)}, which the loop decides for "
                "every request (from the run's tool choice); set [providers.gemini] validated "
                "for VALIDATED calls",
                api=API,
            )
        options_generation = extra.pop("generationConfig", None)
        if isinstance(options_generation, Mapping):
            generation.update(options_generation)
        elif options_generation is not None:
            extra["generationConfig"] = options_generation
    if request.output is not None:
        taken = sorted(set(generation) & _OUTPUT_FIELDS)
        if taken:
            raise ProviderError(
                f"{API}: [provider] options set {', '.join(taken)} in generationConfig, which "
                "the run's output type decides; leave them out of the options",
                api=API,
            )
        generation.update(output_config(request.output, schemas=schemas, open_objects=open_objects))
    if generation:
        body["generationConfig"] = generation
    body.update(extra)
    return body


# -- answers -----------------------------------------------------------------------------------


def error_in_body(payload: Mapping[str, Any]) -> ProviderError | None:
    """A :class:`ProviderError` for an answer (or a streamed event) that carries an error."""
    error = payload.get("error")
    return None if error is None else _reported(error)


def _reported(error: Any) -> ProviderError:
    """The :class:`ProviderError` of an answer's ``error`` field."""
    if isinstance(error, Mapping):
        message = str(error.get("message") or error.get("status") or error)
        code = error.get("code")
        status = str(error.get("status") or "")
    else:
        message, code, status = str(error), None, ""
    retryable = status in _RETRYABLE_STATUSES or code in (429, 500, 503, 504)
    return ProviderError(
        f"{API}: the provider reported an error{f' ({status})' if status else ''}: {message}",
        api=API,
        status=code if isinstance(code, int) and not isinstance(code, bool) else None,
        retryable=retryable,
        provider_message=message,
    )


# The text of a call's arguments, as json.dumps(..., ensure_ascii=False) writes it (one encoder,
# made once: json.dumps with an option makes one every call).
_arguments_text: Final = json.JSONEncoder(ensure_ascii=False).encode


def _usage(meta: Any) -> Usage | None:
    """``usageMetadata``: the prompt (with tool-use prompts, cached content included) in,
    candidates and thoughts out (thoughts are the reasoning)."""
    if type(meta) is not dict and not isinstance(meta, Mapping):
        return None
    # The counts given as integers (booleans are not counts), picked out in one pass.
    counts = {k: v for k, v in meta.items() if isinstance(v, int) and not isinstance(v, bool)}
    prompt = counts.get("promptTokenCount")
    tool_prompt = counts.get("toolUsePromptTokenCount")
    candidates = counts.get("candidatesTokenCount")
    thoughts = counts.get("thoughtsTokenCount")
    inputs = None if prompt is None else prompt + (tool_prompt or 0)
    outputs = (
        None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    )
    return Usage(
        input_tokens=inputs,
        output_tokens=outputs,
        cache_read_tokens=counts.get("cachedContentTokenCount"),
        total_tokens=counts.get("totalTokenCount"),
        reasoning_tokens=thoughts,
    )


def finish_reason(raw: str | None, *, called: bool) -> str | None:
    """The canonical finish reason: ``STOP`` is ``tool_calls`` when the turn has calls, else
    ``stop``; ``MAX_TOKENS`` is ``length``; the safety family is ``content_filter``; anything
    else is Gemini's own word in lower case (``malformed_function_call`` …)."""
    if raw is None:
        return None
    if raw == "STOP":
        return "tool_calls" if called else "stop"
    if raw == "MAX_TOKENS":
        return "length"
    if raw in _FILTERED:
        return "content_filter"
    return raw.lower()


def _mergeable(last: Mapping[str, Any], part: Mapping[str, Any]) -> bool:
    """Whether a streamed text piece continues the text part before it."""
    return (
        isinstance(last.get("text"), str)
        and isinstance(part.get("text"), str)
        and last.keys() <= _TEXT_KEYS
        and part.keys() <= _TEXT_KEYS
        and bool(last.get("thought")) == bool(part.get("thought"))
        and "thoughtSignature" not in last
    )


_BARE: Final = ModelRequest(run_id="", round=0, messages=())


class GenerateStream:
    """Reads a Gemini answer, streamed chunk by chunk or whole, emitting events as it comes.

    Feed each server-sent event's data to :meth:`feed` (or a whole answer to
    :meth:`feed_payload`), then take the turn from :meth:`result`. Text pieces are joined into
    the parts they continue; each ``functionCall`` part arrives whole and is one call: started,
    its arguments as one delta, completed. A call without an ``id`` gets one of the host's.
    ``emit`` None reads a whole answer without making any events (nobody hears of it in
    pieces).
    """

    def __init__(
        self,
        request: ModelRequest,
        emit: EmitEvent | None,
        *,
        id_factory: Callable[[], str] = new_call_id,
    ) -> None:
        self._calls = CallAssembler(request, emit, id_factory=id_factory)
        self._id_factory = id_factory
        self._parts: list[dict[str, Any] | int] = []  # wire parts; an int is a call's key
        # The pieces that continue a text part, by its position in _parts: joined once, at the
        # end, rather than copying the growing text with every piece.
        self._more_text: dict[int, list[str]] = {}
        self._finish: str | None = None
        self._finish_message: str | None = None
        self._usage: Any = None
        self._model: str | None = None
        self._id: str | None = None
        self._keys = 0

    def feed(self, data: str) -> bool:
        """Read one event's data; Gemini's streams end with the connection, so this is always
        False."""
        self.feed_payload(event_object(data, API))
        return False

    def feed_payload(self, payload: Mapping[str, Any]) -> None:
        """Read one ``GenerateContentResponse`` (a whole answer, or one chunk of a stream).

        :raises ProviderError: when it carries an error, or says the prompt was blocked.
        """
        error = payload.get("error")
        if error is not None:
            raise _reported(error)
        if self._model is None and isinstance(payload.get("modelVersion"), str):
            self._model = payload["modelVersion"]
        if self._id is None and isinstance(payload.get("responseId"), str):
            self._id = payload["responseId"] or None
        if payload.get("usageMetadata") is not None:
            self._usage = payload["usageMetadata"]
        candidates = wire_objects(payload.get("candidates"), "candidates", API)
        if not candidates:
            _check_blocked(payload)
            return
        candidate = candidates[0]
        content = candidate.get("content")
        # Parsed JSON holds dicts: the exact type check spares the ABC's, which runs in Python.
        if content is not None and type(content) is not dict and not isinstance(content, Mapping):
            raise ProviderError(f"{API}: candidates[0].content is not an object", api=API)
        for part in wire_objects((content or {}).get("parts"), "candidates[0].content.parts", API):
            self._part(part)
        if candidate.get("finishReason"):
            self._finish = str(candidate["finishReason"])
            message = candidate.get("finishMessage")
            self._finish_message = message if isinstance(message, str) else None

    def _part(self, part: Mapping[str, Any]) -> None:
        function = part.get("functionCall")
        if function is not None:
            self._call(part, function)
            return
        text = part.get("text")
        if isinstance(text, str):
            if part.get("thought"):
                self._calls.thinking(text)
            else:
                self._calls.text(text)
            if not text and part.keys() <= {"text", "thought"}:
                return  # an empty piece (streams end with one): nothing to keep or send back
            last = self._parts[-1] if self._parts else None
            if isinstance(last, dict) and _mergeable(last, part):
                self._more_text.setdefault(len(self._parts) - 1, []).append(text)
                if "thoughtSignature" in part:
                    last["thoughtSignature"] = part["thoughtSignature"]
                return
        self._parts.append(dict(part))

    def _call(self, part: Mapping[str, Any], function: Any) -> None:
        key = self._keys
        self._keys += 1
        self._parts.append(key)
        if type(function) is not dict and not isinstance(function, Mapping):
            function = {}
        call_id = function.get("id")
        name = function.get("name")
        # The part is kept for the way back without its name and arguments: the call holds
        # those (canonical, redacted where sensitive), and the part is rebuilt from it.
        kept = dict(function)
        kept.pop("name", None)
        kept.pop("args", None)
        self._calls.begin(
            key,
            call_id=call_id if isinstance(call_id, str) and call_id else None,
            name=name if isinstance(name, str) and name else "",
            provider_data={"part": {**part, "functionCall": kept}},
        )
        arguments = function.get("args")
        if arguments and (type(arguments) is dict or isinstance(arguments, Mapping)):
            self._calls.arguments(key, _arguments_text(arguments))
        self._calls.complete(
            key, final_arguments=arguments if arguments is not None else {}, use_final=True
        )

    def result(self) -> AssistantMessage:
        """The assistant turn read so far."""
        self._calls.finish("the stream ended")
        for index, more in self._more_text.items():
            part = self._parts[index]
            if isinstance(part, dict):
                part["text"] += "".join(more)
        self._more_text.clear()
        calls = self._calls.calls
        parts = self._canonical(iter(calls))
        called = bool(calls)
        if self._finish == _MALFORMED and not called:
            made = self._malformed_call()
            if made is not None:
                parts.append(made)
                called = True
        return AssistantMessage(
            parts=parts,
            api=API,
            model=self._model,
            finish_reason=finish_reason(self._finish, called=called),
            usage=_usage(self._usage),
            response_id=self._id,
        )

    def _canonical(self, calls: Iterator[ToolCall]) -> list[AssistantPart]:
        """The canonical parts of the wire parts, the completed ``calls`` in their places."""
        parts: list[AssistantPart] = []
        for part in self._parts:
            if isinstance(part, int):
                parts.append(next(calls))
                continue
            text = part.get("text")
            if isinstance(text, str) and part.keys() <= _TEXT_KEYS:
                if part.get("thought"):
                    signature = part.get("thoughtSignature")
                    parts.append(
                        ThinkingPart(
                            text=text,
                            signature=signature if isinstance(signature, str) else None,
                            provider_data={"part": part},
                        )
                    )
                    continue
                if text:
                    parts.append(TextPart(text))
                    extra = {k: v for k, v in part.items() if k != "text"}
                    if extra:
                        parts.append(OpaquePart(api=API, data={"extra": extra}))
                    continue
            parts.append(OpaquePart(api=API, data={"part": part}))
        return parts

    def _malformed_call(self) -> ToolCall | None:
        """The call Gemini tried and could not write (``MALFORMED_FUNCTION_CALL``), as an
        invalid call, so the model is told and may try again. None when the message names no
        function."""
        said = self._finish_message or ""
        names = [n for n in _CALLED.findall(said) if n != "print"]
        if not names:
            return None
        name = names[-1].removeprefix("default_api.")
        return ToolCall(
            id=self._id_factory(),
            name=name,
            arguments=None,
            raw_arguments=said,
            invalid_reason=(
                "Gemini could not write this call as arguments (finish reason "
                f"MALFORMED_FUNCTION_CALL): {said}"
            ),
        )


def _check_blocked(payload: Mapping[str, Any]) -> None:
    feedback = payload.get("promptFeedback")
    reason = feedback.get("blockReason") if isinstance(feedback, Mapping) else None
    if reason:
        raise ProviderError(
            f"{API}: the prompt was blocked ({reason}) and the model did not answer; see "
            "Gemini's safety settings ([provider] options safetySettings)",
            api=API,
            status=200,
        )


def parse_response(
    payload: Mapping[str, Any],
    request: ModelRequest | None = None,
    *,
    id_factory: Callable[[], str] = new_call_id,
) -> AssistantMessage:
    """The assistant turn of a whole (non-streamed) ``GenerateContentResponse``.

    :raises ProviderError: when the answer holds an error or a blocked prompt.
    """
    reader = GenerateStream(request or _BARE, None, id_factory=id_factory)
    reader.feed_payload(payload)
    return reader.result()
