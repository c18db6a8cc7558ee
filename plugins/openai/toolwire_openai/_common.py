"""What both OpenAI adapters share: host defaults, strict projection, usage, and sending."""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol
from urllib.parse import urlsplit

import attrs

from toolwire import FunctionSpec
from toolwire.adapters import (
    AdapterCapabilities,
    EmitEvent,
    HTTPProviderAdapter,
    ModelRequest,
    ProviderError,
    RenderedTools,
    canonical_message,
    wire_request,
)
from toolwire.events import Event, ProviderRetry, ToolCallRecovered
from toolwire.messages import AssistantMessage, ToolCall
from toolwire.usage import Usage

if TYPE_CHECKING:
    from toolwire.output import OutputSpec

OPENAI_BASE_URL: Final = "https://api.openai.com/v1"
OPENAI_KEY_ENV: Final = "OPENAI_API_KEY"

# Hosts known to accept `parallel_tool_calls`. Elsewhere the flag is left out unless the config
# says the host accepts it: a host that rejects unknown fields would fail every request, while a
# host that ignores the flag costs nothing, because the loop runs the calls of a turn one by one.
PARALLEL_FLAG_HOSTS: Final = frozenset({"api.openai.com", "openrouter.ai", "api.groq.com"})

# Hosts that constrain output to strict schemas (`"strict": true`).
STRICT_HOSTS: Final = frozenset({"api.openai.com"})


_ALL_CHOICES: Final = frozenset({"auto", "none", "required", "named"})


@attrs.frozen(kw_only=True)
class ServerProfile:
    """What one kind of OpenAI-compatible server takes, by name (``[providers.openai] profile``).

    - ``sends_tool_choice``: ``tool_choice`` goes in every request with tools (a server that does
      not document the field gets none, and ``none`` is then honoured by sending no tools);
    - ``tool_choices``: the choices the server honours (``auto``, ``none``, ``required``,
      ``named``); another one is refused before anything is sent;
    - ``accepts_parallel``: the server takes ``parallel_tool_calls``;
    - ``binds_strict``: the server constrains output to strict schemas;
    - ``max_tokens_field``: the body field of ``[provider] max_tokens``;
    - ``key_env``: the variable the key is read from when ``api_key_env`` is unset;
    - ``system_turn``: the server's template shows the tools only inside a system turn, so a
      request with tools always has one;
    - ``results_as_user``: the template has no turn for ``role: "tool"``, so a round's results
      go in one user turn under ``<tool_result>`` envelopes;
    - ``anchored_patterns``: the server builds its grammar only from ``pattern``s written
      ``^…$`` in a small regex subset: anchored patterns are sent in that subset, the others
      left out (the host's validation still holds arguments to them);
    - ``streams_auto_choice``: the server streams answers under tool choice ``auto`` (else such
      a request is sent unstreamed);
    - ``answers_under_auto``: under tool choice ``auto`` the server can write a text answer
      (else, after results that all succeeded, the answer is asked for with ``none``);
    - ``recover_text_calls``: the default of ``[provider] recover_text_calls``;
    - ``empty_hint``: the likely cause of an empty answer from this server, for the run's
      detail.
    """

    name: str
    sends_tool_choice: bool = True
    tool_choices: frozenset[str] = _ALL_CHOICES
    accepts_parallel: bool = False
    binds_strict: bool = False
    max_tokens_field: str = "max_tokens"
    key_env: str | None = None
    system_turn: bool = False
    results_as_user: bool = False
    anchored_patterns: bool = False
    streams_auto_choice: bool = True
    answers_under_auto: bool = True
    recover_text_calls: bool = False
    empty_hint: str | None = None


SERVER_PROFILES: Final[Mapping[str, ServerProfile]] = {
    # llama.cpp `llama-server --jinja`: auto, none and required; the parallel flag is read. The
    # model's own template renders system, tool and result turns (llama.cpp fills in what a
    # template lacks).
    "llama.cpp": ServerProfile(
        name="llama.cpp",
        tool_choices=frozenset({"auto", "none", "required"}),
        accepts_parallel=True,
        recover_text_calls=True,
        empty_hint=(
            "llama-server reads tools only with --jinja, through the model's own chat "
            "template; a template without tool support may make the model answer nothing "
            "(give one with --chat-template-file)"
        ),
    ),
    # vLLM: named and (0.8.3+) required through guided decoding; `auto` needs the server's
    # --enable-auto-tool-choice; the request model has `parallel_tool_calls`.
    "vllm": ServerProfile(
        name="vllm",
        accepts_parallel=True,
        recover_text_calls=True,
        empty_hint=(
            "vLLM reads calls under tool choice auto with the parser named by "
            "--tool-call-parser: a parser that does not fit the model turns its calls into "
            "nothing or into text"
        ),
    ),
    # Ollama's OpenAI compatibility documents `tools` but not `tool_choice`: the model decides.
    "ollama": ServerProfile(
        name="ollama",
        sends_tool_choice=False,
        tool_choices=frozenset({"auto", "none"}),
        recover_text_calls=True,
        empty_hint=(
            "Ollama sends tools only to models whose template supports them (`ollama show "
            "MODEL` lists the capability 'tools'); others may answer nothing"
        ),
    ),
    # LM Studio: auto, none and required.
    "lmstudio": ServerProfile(
        name="lmstudio",
        tool_choices=frozenset({"auto", "none", "required"}),
        recover_text_calls=True,
        empty_hint=(
            "LM Studio reads calls with the model's own template: a model without tool "
            "support in its template may answer nothing"
        ),
    ),
    # llama-cpp-python `python -m llama_cpp.server --chat_format chatml-function-calling`: its
    # template lists the tools only inside a system turn and has no turn for tool results;
    # `required` fails the request (HTTP 500); a streamed answer under `auto` dies after the
    # headers; under `auto` the answer can only be routing text (`functions.NAME:`) or nothing,
    # so an answer to results is asked for with `none`; its grammar takes only `^…$` patterns.
    "llama-cpp-python": ServerProfile(
        name="llama-cpp-python",
        tool_choices=frozenset({"auto", "none", "named"}),
        system_turn=True,
        results_as_user=True,
        anchored_patterns=True,
        streams_auto_choice=False,
        answers_under_auto=False,
        recover_text_calls=True,
        empty_hint=(
            "llama-cpp-python's chatml-function-calling template answers tool choice auto "
            "with a call or with nothing: a model that chose no call wrote nothing"
        ),
    ),
    # OpenAI itself: strict schemas, the parallel flag, the newer token field.
    "openai": ServerProfile(
        name="openai",
        accepts_parallel=True,
        binds_strict=True,
        max_tokens_field="max_completion_tokens",
        key_env=OPENAI_KEY_ENV,
    ),
}
"""The named server profiles of ``openai-chat`` (see docs/servers.md for their sources)."""


@attrs.frozen(kw_only=True)
class HostProfile:
    """What the configured host is and accepts, from the config and its defaults.

    The defaults come from the server profile when one is named (``[providers.openai]
    profile``), else from the host of ``base_url``; ``[provider]`` flags override either.

    - ``base_url``: the configured one, else OpenAI's (``https://api.openai.com/v1``).
    - ``key_env``: ``provider.api_key_env``, else ``OPENAI_API_KEY`` for api.openai.com (or the
      ``openai`` profile) and no key for other hosts (local servers need none).
    - ``binds_strict``: ``provider.enforces_strict_tool_schemas``, else true for api.openai.com.
    - ``accepts_parallel``: ``provider.accepts_parallel_tool_calls``, else true for
      api.openai.com, openrouter.ai and api.groq.com.
    - ``native_tools``: ``provider.native_tools``, else true.
    - ``is_openai``: the host is api.openai.com (it takes ``max_completion_tokens``).
    - ``server``: the server profile's name, None when none is named.
    - ``sends_tool_choice``, ``tool_choices``, ``max_tokens_field`` and the server's template
      needs (``system_turn`` … ``empty_hint``): as in :class:`ServerProfile`.
    - ``recover_text_calls``: ``provider.recover_text_calls``, else the profile's.
    """

    base_url: str
    key_env: str | None
    binds_strict: bool
    accepts_parallel: bool
    native_tools: bool
    is_openai: bool
    server: str | None = None
    sends_tool_choice: bool = True
    tool_choices: frozenset[str] = _ALL_CHOICES
    max_tokens_field: str = "max_tokens"
    system_turn: bool = False
    results_as_user: bool = False
    anchored_patterns: bool = False
    streams_auto_choice: bool = True
    answers_under_auto: bool = True
    recover_text_calls: bool = False
    empty_hint: str | None = None


def server_profile(name: str) -> ServerProfile:
    """The :class:`ServerProfile` called ``name``.

    :raises ValueError: for a name that is not a profile, naming the valid ones.
    """
    found = SERVER_PROFILES.get(name)
    if found is None:
        valid = ", ".join(repr(n) for n in SERVER_PROFILES)
        raise ValueError(f"{name!r} is not a server profile of openai-chat; valid: {valid}")
    return found


def host_profile(config: Any, server: str | None = None) -> HostProfile:
    """The :class:`HostProfile` of a :class:`toolwire.Config` ``[provider]`` section, with the
    defaults of the server profile ``server`` when one is named."""
    base_url = (config.base_url or OPENAI_BASE_URL).rstrip("/")
    host = (urlsplit(base_url).hostname or "").lower()
    is_openai = host == "api.openai.com"
    if server is not None:
        named = server_profile(server)
    else:
        named = ServerProfile(
            name="",
            accepts_parallel=host in PARALLEL_FLAG_HOSTS,
            binds_strict=host in STRICT_HOSTS,
            max_tokens_field="max_completion_tokens" if is_openai else "max_tokens",
            key_env=OPENAI_KEY_ENV if is_openai else None,
        )
    key_env = config.api_key_env or named.key_env
    binds = config.enforces_strict_tool_schemas
    accepts = config.accepts_parallel_tool_calls
    recover = config.recover_text_calls
    return HostProfile(
        base_url=base_url,
        key_env=key_env,
        binds_strict=named.binds_strict if binds is None else bool(binds),
        accepts_parallel=named.accepts_parallel if accepts is None else bool(accepts),
        native_tools=config.native_tools is not False,
        is_openai=is_openai,
        server=server,
        sends_tool_choice=named.sends_tool_choice,
        tool_choices=named.tool_choices,
        max_tokens_field=named.max_tokens_field,
        system_turn=named.system_turn,
        results_as_user=named.results_as_user,
        anchored_patterns=named.anchored_patterns,
        streams_auto_choice=named.streams_auto_choice,
        answers_under_auto=named.answers_under_auto,
        recover_text_calls=named.recover_text_calls if recover is None else bool(recover),
        empty_hint=named.empty_hint,
    )


@attrs.frozen(kw_only=True)
class WireFunction:
    """One function as an OpenAI API receives it: the schema sent, and whether it is strict.

    ``problems`` says why a function that could have been strict was sent non-strict.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    strict: bool
    problems: tuple[str, ...] = ()


def wire_function(spec: FunctionSpec, *, binds_strict: bool) -> WireFunction:
    """Project ``spec`` to strict form when the host binds output and the tool allows it.

    A schema strict mode cannot express is sent as written, non-strict, for that tool alone.
    The model then sends ``null`` for optional properties it leaves out; the tool's validation
    reads such a ``null`` as "left out", so the arguments are passed on as they came.
    """
    if binds_strict and spec.strict is not False:
        tool = spec.tool
        if tool is not None and spec.parameters is tool.parameters:
            projection = tool.strict_projection()  # computed once per tool
        else:
            from toolwire.tools import strict_projection

            projection = strict_projection(spec.parameters)
        if projection.schema is not None:
            return WireFunction(
                name=spec.name,
                description=spec.description,
                parameters=projection.schema,
                strict=True,
            )
        return WireFunction(
            name=spec.name,
            description=spec.description,
            parameters=dict(spec.parameters),
            strict=False,
            problems=tuple(projection.problems),
        )
    return WireFunction(
        name=spec.name, description=spec.description, parameters=dict(spec.parameters), strict=False
    )


def output_schema(spec: OutputSpec, *, binds_strict: bool) -> tuple[dict[str, Any], bool]:
    """The answer schema as an OpenAI API receives it, and whether it is strict: projected to
    strict form like a tool's when the host binds output and the spec allows it, else as
    written (non-strict)."""
    if binds_strict and spec.strict is not False:
        from toolwire.tools import strict_projection

        projection = strict_projection(spec.schema)
        if projection.schema is not None:
            return dict(projection.schema), True
    return dict(spec.schema), False


def check_output_options(request: ModelRequest, fields: Mapping[str, Any], api: str) -> None:
    """Refuse ``[provider] options`` that set the answer's format of a run with a typed output
    (the run's output decides it)."""
    if request.output is None:
        return
    text = fields.get("text")
    if "response_format" in fields or (isinstance(text, Mapping) and "format" in text):
        raise ProviderError(
            f"{api}: [provider] options set the answer's format, which the run's output type "
            "decides; leave response_format (and text.format) out of the options",
            api=api,
        )


def arguments_text(call: ToolCall) -> str:
    """The argument text of a call sent back in the history.

    The text the model sent when it still says the same, so the history stays byte-identical
    (prompt caches hold); the arguments as compact JSON when they were repaired or edited; ``{}``
    for arguments that never parsed (some hosts parse this text and refuse invalid JSON).
    """
    if call.arguments is None:
        return "{}"
    raw = call.raw_arguments
    if raw:
        try:
            if json.loads(raw) == call.arguments:
                return raw
        except ValueError:
            pass
    return json.dumps(call.arguments, ensure_ascii=False, separators=(",", ":"))


FINISH_REASONS: Final = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}


def finish_reason(raw: Any) -> str | None:
    """The canonical finish reason: ``stop``, ``tool_calls``, ``length``, ``content_filter``, or
    the provider's own word for anything else."""
    if raw is None:
        return None
    text = str(raw)
    return FINISH_REASONS.get(text, text)


def response_id(payload: Any) -> str | None:
    """The provider's id of an answer (its ``id`` field), when it is a non-empty string."""
    value = payload.get("id") if type(payload) is dict else None
    return value if type(value) is str and value else None


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def _detail(details: Any, field: str) -> int | None:
    return _int(details.get(field)) if type(details) is dict else None


def _usage(payload: Any, inputs: str, outputs: str) -> Usage | None:
    # Answers are decoded JSON: plain dicts and ints, checked by exact type (fast, and bools out).
    # Both APIs count cached input inside the input and reasoning inside the output, and name
    # the details of each after it (`prompt_tokens_details`, `output_tokens_details` …).
    if type(payload) is not dict:
        return None
    return Usage(
        input_tokens=_int(payload.get(inputs)),
        output_tokens=_int(payload.get(outputs)),
        cache_read_tokens=_detail(payload.get(f"{inputs}_details"), "cached_tokens"),
        total_tokens=_int(payload.get("total_tokens")),
        reasoning_tokens=_detail(payload.get(f"{outputs}_details"), "reasoning_tokens"),
    )


def chat_usage(payload: Any) -> Usage | None:
    """Usage of a Chat Completions answer (``prompt_tokens``, ``completion_tokens``, cached
    tokens in ``prompt_tokens_details``, reasoning in ``completion_tokens_details``)."""
    return _usage(payload, "prompt_tokens", "completion_tokens")


def responses_usage(payload: Any) -> Usage | None:
    """Usage of a Responses answer (``input_tokens``, ``output_tokens``, cached tokens in
    ``input_tokens_details``, reasoning in ``output_tokens_details``)."""
    return _usage(payload, "input_tokens", "output_tokens")


def error_in_body(payload: Any, api: str) -> ProviderError | None:
    """A :class:`ProviderError` for a 200 answer that carries an error object instead."""
    if "error" not in payload or payload["error"] is None:
        return None
    error = payload["error"]
    if isinstance(error, Mapping):
        message = str(error.get("message") or error.get("code") or error)
        code = str(error.get("code") or error.get("type") or "")
    else:
        message, code = str(error), ""
    retryable = code in ("server_error", "rate_limit_exceeded", "overloaded", "internal_error")
    return ProviderError(
        f"{api}: the provider reported an error: {message}",
        api=api,
        retryable=retryable,
        provider_message=message,
    )


def recovered(
    message: AssistantMessage, request: ModelRequest, emit: EmitEvent
) -> AssistantMessage:
    """``message`` with the calls written into its text read back as calls of the offered
    functions (each announced with a ``ToolCallRecovered`` event); unchanged when it has none."""
    if message.tool_calls or not message.text:
        return message
    from toolwire.prompted import recover_text_calls

    found = recover_text_calls(message, request.functions)
    if found is None:
        return message
    for call, form in zip(found.message.tool_calls, found.forms, strict=True):
        emit(
            ToolCallRecovered(
                run_id=request.run_id,
                round=request.round,
                call_id=call.id,
                name=call.name,
                form=form,
            )
        )
    return found.message


# -- the adapters' shared sending --------------------------------------------------------------


class StreamReader(Protocol):
    """A reader of one streamed answer: feed each server-sent event's data, then take the turn."""

    def feed(self, data: str) -> bool:
        """Read one event's data; True once the stream is finished."""
        ...

    def result(self) -> AssistantMessage:
        """The assistant turn read so far."""
        ...


class OpenAIAdapter(HTTPProviderAdapter):
    """What both OpenAI adapters do alike: the host profile, capabilities, cached tool rendering,
    and sending a request streamed or not. Subclasses give the endpoint ``path`` and the four
    wire-specific steps."""

    path: ClassVar[str]
    server: ClassVar[str | None] = None
    """The server profile named in ``[providers.openai] profile`` (None: judged by the host)."""

    @classmethod
    def for_server(cls, server: str | None) -> type[OpenAIAdapter]:
        """This adapter class with the server profile ``server`` (itself for None).

        :raises ValueError: for a name that is not a profile, naming the valid ones.
        """
        if server is None:
            return cls
        server_profile(server)
        return type(cls.__name__, (cls,), {"server": server, "__module__": cls.__module__})

    @functools.cached_property
    def profile(self) -> HostProfile:
        """What the configured host accepts (the config does not change)."""
        return host_profile(self.config, self.server)

    @functools.cached_property
    def capabilities(self) -> AdapterCapabilities:
        """Native tools (unless configured off), every tool choice, streaming, the host flags.
        Made once: the config does not change."""
        profile = self.profile
        return AdapterCapabilities(
            native_tools=profile.native_tools,
            tool_choice=profile.tool_choices,
            streaming=True,
            binds_strict_schemas=profile.binds_strict,
            accepts_parallel_tool_calls=profile.accepts_parallel,
            max_tool_name_length=64,
            native_output=self.config.native_output is not False,
        )

    @functools.cached_property
    def _tools(self) -> RenderedTools:
        binds = self.profile.binds_strict
        return RenderedTools(lambda functions: self.wire_tools(functions, binds_strict=binds))

    def render_tools(self, functions: tuple[FunctionSpec, ...]) -> list[dict[str, Any]]:
        """Exactly the ``tools`` array this host receives (strict where it binds output, names
        the API refuses under their aliases)."""
        return self._tools.get(functions).tools

    def wire_tools(
        self, functions: Sequence[FunctionSpec], *, binds_strict: bool
    ) -> list[dict[str, Any]]:
        """The API's ``tools`` array for ``functions``."""
        raise NotImplementedError

    def request_body(
        self, request: ModelRequest, tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        """The API's request body."""
        raise NotImplementedError

    def parse(self, payload: Any) -> AssistantMessage:
        """The assistant turn of a non-streamed answer."""
        raise NotImplementedError

    def stream_reader(self, request: ModelRequest, emit: EmitEvent) -> StreamReader:
        """A reader for a streamed answer."""
        raise NotImplementedError

    def streams(self, request: ModelRequest) -> bool:
        """Whether ``request`` is sent streamed (as the loop asks, by default)."""
        return request.stream

    @property
    def empty_answer_hint(self) -> str | None:
        """The server profile's likely cause of an empty answer."""
        return self.profile.empty_hint

    async def complete(self, request: ModelRequest, emit: EmitEvent) -> AssistantMessage:
        """Send the request (streamed when ``request.stream``) and return the assistant turn.

        Tool names the API refuses (``math.factorial``) go out under their aliases, and the calls
        of the answer come back under the canonical names. A stream that ends before its first
        event (a server that fails after sending its headers) is asked again, unstreamed. With
        ``recover_text_calls``, calls written into the answer's text are read back as calls.
        """
        # The offer's rendering (aliases included) is kept while the loop offers the same
        # functions; only the history is rendered every round.
        wire = self._tools.get(request.functions) if request.functions else None
        request = wire_request(request, names=wire.names if wire is not None else None)
        profile = self.profile
        tools = wire.tools if wire is not None else None
        url = profile.base_url + self.path
        tools_offered = bool(request.functions)
        message: AssistantMessage | None = None
        if self.streams(request):
            read = 0

            async def consume(events: AsyncIterator[Any], sink: EmitEvent) -> AssistantMessage:
                nonlocal read
                reader = self.stream_reader(request, sink)
                async for event in events:
                    read += 1
                    if reader.feed(event.data):
                        break
                return canonical_message(reader.result(), request)

            message = await self.stream(
                url,
                self.request_body(request, tools),
                request,
                emit,
                consume,
                key_env=profile.key_env,
                tools_offered=tools_offered,
            )
            if read == 0:
                emit(
                    ProviderRetry(
                        run_id=request.run_id,
                        round=request.round,
                        api=self.api,
                        status=None,
                        delay=0.0,
                        attempt=2,
                        reason="the stream ended before its first event; asked again unstreamed",
                    )
                )
                message = None
        if message is None:
            unstreamed = attrs.evolve(request, stream=False) if request.stream else request
            whole = self.request_body(unstreamed, tools)
            try:
                payload = await self.post(
                    url, whole, request, emit, key_env=profile.key_env, tools_offered=tools_offered
                )
            except ProviderError as exc:
                # After a stream that died, the connection it left in the pool may be closed
                # already: one more try goes out on a new one.
                if not (request.stream and exc.status is None and exc.retryable):
                    raise
                payload = await self.post(
                    url, whole, request, emit, key_env=profile.key_env, tools_offered=tools_offered
                )
            message = canonical_message(self.parse(payload), request)
            for event in self.reported(request, message):
                emit(event)
        if profile.recover_text_calls and request.functions and request.tool_choice != "none":
            message = recovered(message, request, emit)
        return message

    def reported(self, request: ModelRequest, message: AssistantMessage) -> list[Event]:
        """Events about a whole (non-streamed) answer that a stream would have emitted as it
        came: what the calls the provider ran came to. None by default."""
        return []
