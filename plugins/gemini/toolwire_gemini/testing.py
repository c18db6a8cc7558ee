"""A loopback Gemini API for tests: :class:`FakeGeminiServer`.

It is a :class:`toolwire.testing.FakeProviderServer` (the conformance suite drives it), listening
on 127.0.0.1 only, and speaks the Gemini API as its reference documents it:

- ``POST /{version}/models/{model}:generateContent`` answers a ``GenerateContentResponse``;
  ``:streamGenerateContent?alt=sse`` answers the same as server-sent events (``data:`` lines
  ending in ``\\r\\n\\r\\n``), text in pieces, each ``functionCall`` part whole, the finish reason
  and usage in the last event;
- the key is read from ``x-goog-api-key``; errors are ``google.rpc`` statuses (``{"error":
  {"code", "message", "status", "details"}}``), a 429's wait in a ``RetryInfo`` detail and
  never in a header, and a wrong key is HTTP 400 ``INVALID_ARGUMENT`` as Gemini answers it;
- thought signatures: the first ``functionCall`` part of every answer carries one (the last
  part of an answer without calls), and a later request whose model turn with calls comes back
  without its signature, or with one the server never gave, is refused with HTTP 400, as
  Gemini 3 refuses it;
- it refuses, as Gemini does, a turn without parts, an empty text, a results turn whose number
  of ``functionResponse`` parts differs from the calls it answers, a function name Gemini does
  not accept, ``parameters`` beside ``parametersJsonSchema``, a JSON Schema type word in
  ``parameters``, and a ``toolConfig`` that names an undeclared function.

Calls are sent with an ``id`` unless ``omit_call_ids`` (older models send none).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Final
from urllib.parse import parse_qs

from toolwire.testing import ErrorReply, FakeProviderServer, RecordedRequest, ServerTurn

from ._schema import GEMINI_TYPES
from ._wire import GEMINI_NAME, SKIP_SIGNATURE

__all__ = ["FakeGeminiServer", "STATUS_NAMES"]

STATUS_NAMES: Final[Mapping[int, str]] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
"""The ``google.rpc.Code`` name Gemini's error bodies give for each HTTP status."""

_RPC: Final = "type.googleapis.com/google.rpc."
_MODES: Final = frozenset({"AUTO", "ANY", "NONE", "VALIDATED"})
_WIRE_TYPES: Final = frozenset(GEMINI_TYPES.values())


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _chunks(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def signature(number: int) -> str:
    """The thought signature of answer ``number`` (base64, as Gemini's are)."""
    return base64.b64encode(f"fake-thought-{number}".encode()).decode("ascii")


class FakeGeminiServer(FakeProviderServer):
    """The Gemini API at ``/{version}/models/{model}:generateContent`` (``base_url`` is the
    host root); see the module documentation."""

    api = "gemini"
    path = "/{version}/models/{target}"
    base_path = ""
    retry_after_header: ClassVar[bool] = False
    streams_call_arguments: ClassVar[bool] = False
    bad_key_status: ClassVar[int] = 400

    def sent_key(self, request: RecordedRequest) -> str:
        return request.headers.get("x-goog-api-key", "")

    def new_call_id(self) -> str:
        return f"fc-{next(self._call_ids):04d}"

    def turn_tokens(self, turn: ServerTurn, number: int) -> list[str]:
        """The answer's thought signature."""
        return [signature(number)]

    # -- requests -----------------------------------------------------------------------------

    def _method(self, request: RecordedRequest) -> str:
        return request.path.rsplit(":", 1)[-1] if ":" in request.path else ""

    def wants_stream(self, request: RecordedRequest) -> bool:
        return self._method(request) == "streamGenerateContent"

    def check_request(self, request: RecordedRequest) -> ErrorReply | None:
        method = self._method(request)
        if method not in ("generateContent", "streamGenerateContent"):
            return ErrorReply(status=404, message=f"method {method!r} is not found")
        if method == "streamGenerateContent" and parse_qs(request.query).get("alt") != ["sse"]:
            return ErrorReply(
                status=400,
                message="this server streams server-sent events only: add ?alt=sse",
            )
        body = request.body
        problems = [
            *self._contents_problems(body.get("contents")),
            *self._tools_problems(body),
            *self._output_problems(body.get("generationConfig")),
        ]
        if problems:
            return ErrorReply(status=400, message="; ".join(problems))
        return None

    def _contents_problems(self, contents: Any) -> list[str]:
        if not isinstance(contents, list) or not contents:
            return ["contents is not specified"]
        issued = {signature(n) for n in self.answered} | {SKIP_SIGNATURE}
        problems: list[str] = []
        for index, content in enumerate(contents):
            where = f"contents[{index}]"
            if not isinstance(content, Mapping) or content.get("role") not in (
                "user",
                "model",
                "function",
            ):
                problems.append(f"{where}: role must be user, model or function")
                continue
            parts = content.get("parts")
            if not isinstance(parts, list) or not parts:
                problems.append(f"{where}.parts: must not be empty")
                continue
            for p, part in enumerate(parts):
                if isinstance(part, Mapping) and part.keys() == {"text"} and not part["text"]:
                    problems.append(
                        f"{where}.parts[{p}]: Unable to submit request because it has an empty "
                        "text parameter"
                    )
            calls = [p for p in parts if isinstance(p, Mapping) and "functionCall" in p]
            if not calls:
                continue
            sent = calls[0].get("thoughtSignature")
            if sent not in issued:
                problems.append(
                    f"{where}: Function call is missing a thought_signature in functionCall "
                    "parts (or carries one this server never gave)"
                )
            following = contents[index + 1] if index + 1 < len(contents) else None
            if isinstance(following, Mapping):
                answers = [
                    p
                    for p in following.get("parts") or []
                    if isinstance(p, Mapping) and "functionResponse" in p
                ]
                if len(answers) != len(calls):
                    problems.append(
                        "Please ensure that the number of function response parts is equal to "
                        f"the number of function call parts of the function call turn ({where}: "
                        f"{len(calls)} calls, {len(answers)} responses)"
                    )
                for answer in answers:
                    response = answer["functionResponse"]
                    if not isinstance(response, Mapping) or not isinstance(
                        response.get("response"), Mapping
                    ):
                        problems.append(f"{where}: a functionResponse.response is not an object")
        return problems

    def _output_problems(self, generation: Any) -> list[str]:
        """What Gemini refuses in a structured-output request: a schema without the JSON
        MIME type, both schema fields at once, a ``responseSchema`` outside the subset."""
        if not isinstance(generation, Mapping):
            return []
        schema = generation.get("responseSchema")
        json_schema = generation.get("responseJsonSchema")
        if schema is None and json_schema is None:
            return []
        problems: list[str] = []
        if generation.get("responseMimeType") != "application/json":
            problems.append(
                "generationConfig: response_mime_type must be application/json when a response "
                "schema is set"
            )
        if schema is not None and json_schema is not None:
            problems.append("generationConfig: responseSchema and responseJsonSchema both set")
        if schema is not None:
            problems.extend(_schema_problems(schema, "generationConfig.responseSchema"))
        return problems

    def _tools_problems(self, body: Mapping[str, Any]) -> list[str]:
        problems: list[str] = []
        declared: list[str] = []
        for tool in body.get("tools") or []:
            for function in (tool or {}).get("functionDeclarations") or []:
                name = function.get("name", "")
                declared.append(name)
                if not GEMINI_NAME.fullmatch(name) or len(name) > 64:
                    problems.append(f"function name {name!r} is invalid")
                if "parameters" in function and "parametersJsonSchema" in function:
                    problems.append(f"{name}: parameters and parametersJsonSchema both set")
                if "parameters" in function:
                    problems.extend(_schema_problems(function["parameters"], f"{name}.parameters"))
        config = (body.get("toolConfig") or {}).get("functionCallingConfig")
        if config is not None:
            mode = config.get("mode")
            if mode not in _MODES:
                problems.append(f"toolConfig mode {mode!r} is invalid")
            for name in config.get("allowedFunctionNames") or []:
                if name not in declared:
                    problems.append(f"allowedFunctionNames names {name!r}, which is not declared")
        return problems

    # -- answers ------------------------------------------------------------------------------

    def _parts(self, turn: ServerTurn, number: int) -> tuple[list[dict[str, Any]], str | None]:
        """The answer's parts, and the message of a call it could not write."""
        parts: list[dict[str, Any]] = []
        if turn.thinking:
            parts.append({"text": turn.thinking, "thought": True})
        if turn.text:
            parts.append({"text": turn.text})
        malformed = None
        for call in turn.calls:
            try:
                arguments = json.loads(call.arguments) if call.arguments.strip() else None
            except ValueError:
                arguments = ...
            if arguments is not None and not isinstance(arguments, dict):
                if turn.finish_reason != "length":
                    malformed = (
                        f"Malformed function call: print(default_api.{call.name}({call.arguments}"
                    )
                    continue
                arguments = {}  # cut off at the token limit: what Gemini had of the arguments
            function: dict[str, Any] = {"name": call.name}
            if call.id:
                function = {"id": call.id, **function}
            if arguments is not None:
                function["args"] = arguments
            parts.append({"functionCall": function})
        first_call = next((p for p in parts if "functionCall" in p), None)
        if first_call is not None:
            first_call["thoughtSignature"] = signature(number)
        return parts, malformed

    def _finish(self, turn: ServerTurn, malformed: str | None) -> str:
        if malformed is not None:
            return "MALFORMED_FUNCTION_CALL"
        if turn.finish_reason == "length":
            return "MAX_TOKENS"
        if turn.finish_reason:
            return turn.finish_reason.upper()
        return "STOP"

    def _usage(self, turn: ServerTurn, body: Mapping[str, Any], final: bool) -> dict[str, int]:
        usage = self.usage(turn, body)
        prompt = usage.input_tokens or 0
        if not final:
            return {"promptTokenCount": prompt, "totalTokenCount": prompt}
        thoughts = usage.reasoning_tokens or 0
        wire = {
            "promptTokenCount": prompt,
            # Gemini counts thoughts apart from the candidates.
            "candidatesTokenCount": (usage.output_tokens or 0) - thoughts,
            "totalTokenCount": usage.total_tokens or prompt + (usage.output_tokens or 0),
        }
        if usage.cache_read_tokens:
            wire["cachedContentTokenCount"] = usage.cache_read_tokens
        if thoughts:
            wire["thoughtsTokenCount"] = thoughts
        return wire

    def _candidate(
        self, parts: list[dict[str, Any]], finish: str | None, malformed: str | None
    ) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish is not None:
            candidate["finishReason"] = finish
            if malformed is not None:
                candidate["finishMessage"] = malformed
        return candidate

    def render(self, turn: ServerTurn, body: Mapping[str, Any], number: int) -> Any:
        parts, malformed = self._parts(turn, number)
        if parts and not any("thoughtSignature" in p for p in parts):
            parts[-1]["thoughtSignature"] = signature(number)
        return {
            "candidates": [self._candidate(parts, self._finish(turn, malformed), malformed)],
            "usageMetadata": self._usage(turn, body, final=True),
            "modelVersion": "gemini-fake",
            "responseId": f"fake-gemini-{number}",
        }

    def render_stream(self, turn: ServerTurn, body: Mapping[str, Any], number: int) -> list[str]:
        parts, malformed = self._parts(turn, number)
        head = {"modelVersion": "gemini-fake", "responseId": f"fake-gemini-{number}"}

        def event(chunk: list[dict[str, Any]], finish: str | None = None) -> str:
            payload = {
                "candidates": [self._candidate(chunk, finish, malformed)],
                "usageMetadata": self._usage(turn, body, final=finish is not None),
                **head,
            }
            return f"data: {_dumps(payload)}\r\n\r\n"

        size = self.chunk_size
        events: list[str] = []
        calls = [p for p in parts if "functionCall" in p]
        for part in parts:
            if "functionCall" in part:
                if not self.interleave:
                    events.append(event([part]))
                continue
            for piece in _chunks(part["text"], size):
                events.append(event([{**part, "text": piece}]))
        if calls and self.interleave:
            events.append(event(calls))  # parallel calls in one event
        # The last event: the finish reason and usage, and the signature of an answer without
        # calls on an empty text part, as Gemini streams it.
        last: list[dict[str, Any]] = (
            [] if calls else [{"text": "", "thoughtSignature": signature(number)}]
        )
        events.append(event(last, self._finish(turn, malformed)))
        return events

    def render_error(self, error: ErrorReply) -> Any:
        status = STATUS_NAMES.get(error.status, "UNKNOWN")
        details: list[dict[str, Any]] = []
        if error.status == 429:
            details.append({"@type": _RPC + "QuotaFailure", "violations": []})
        if isinstance(error.retry_after, int | float):
            details.append({"@type": _RPC + "RetryInfo", "retryDelay": f"{error.retry_after:g}s"})
        if error.status == self.bad_key_status and error.message.startswith("Incorrect API key"):
            details.append(
                {
                    "@type": _RPC + "ErrorInfo",
                    "reason": "API_KEY_INVALID",
                    "domain": "googleapis.com",
                }
            )
        body: dict[str, Any] = {"code": error.status, "message": error.message, "status": status}
        if details:
            body["details"] = details
        return {"error": body}


def _schema_problems(schema: Any, where: str) -> list[str]:
    """What Gemini's ``Schema`` object refuses in ``schema`` (JSON Schema spellings mostly)."""
    if not isinstance(schema, Mapping):
        return [f"{where}: not an object"]
    problems: list[str] = []
    kind = schema.get("type")
    if kind is not None and kind not in _WIRE_TYPES:
        problems.append(f"{where}.type: invalid value {kind!r}")
    for key in ("$ref", "$defs", "allOf", "oneOf", "const", "examples"):
        if key in schema:
            problems.append(f'{where}: Unknown name "{key}": Cannot find field')
    if kind == "ARRAY" and "items" not in schema:
        problems.append(f"{where}.items: missing field")
    enum = schema.get("enum")
    if enum is not None and not all(isinstance(v, str) for v in enum):
        problems.append(f"{where}.enum: only strings")
    for name, sub in (schema.get("properties") or {}).items():
        problems.extend(_schema_problems(sub, f"{where}.properties.{name}"))
    if "items" in schema:
        problems.extend(_schema_problems(schema["items"], f"{where}.items"))
    for i, sub in enumerate(schema.get("anyOf") or []):
        problems.extend(_schema_problems(sub, f"{where}.anyOf[{i}]"))
    return problems
