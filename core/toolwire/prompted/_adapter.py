"""Adapters that give any chat adapter tool calling through the prompt."""

from __future__ import annotations

import keyword
import re
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Final

import attrs

from ..adapters._base import (
    AdapterCapabilities,
    EmitEvent,
    ModelRequest,
    ProviderAdapter,
    ToolsNotSupportedError,
)
from ..adapters._names import canonical_message, wire_request
from ..events import (
    Event,
    ProviderRetry,
    TextDelta,
    ThinkingDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from ..messages import AssistantMessage, AssistantPart, SystemMessage, TextPart, ToolResultMessage
from ..tools._spec import FunctionSpec
from ._catalogue import render_prompted_tools, with_tool_instructions
from ._dialect import CALL_DIALECTS, DialectChoice, ToolDialects, tool_dialects
from ._history import coalesce_tool_results, ensure_resolvable_user_turn
from ._scanner import (
    CallPiece,
    CallStartedPiece,
    ParsedTurn,
    Piece,
    TextPiece,
    TurnScanner,
    parse_tool_calls,
)

if TYPE_CHECKING:
    from ..config import ProviderConfig

_ALL_CHOICES = frozenset({"auto", "none", "required", "named"})


def _call_ids(request: ModelRequest) -> Callable[[int], str]:
    """``call_<round>_<index>``, made unique against the ids already in the conversation."""
    taken: set[str] = set()
    for message in request.messages:
        if isinstance(message, AssistantMessage):
            taken.update(call.id for call in message.tool_calls)
        elif isinstance(message, ToolResultMessage):
            taken.add(message.call_id)
    made: dict[int, str] = {}

    def new_id(index: int) -> str:
        if index not in made:
            candidate = f"call_{request.round}_{index}"
            while candidate in taken:
                candidate = f"call_{request.round}_{index}_{secrets.token_hex(2)}"
            taken.add(candidate)
            made[index] = candidate
        return made[index]

    return new_id


class PromptedAdapter(ProviderAdapter):
    """Tool calling through the prompt, around any chat adapter.

    For each request: the offered functions move into the system prompt (protocol and catalogue
    of the dialect), earlier calls become text and results one ``[Tool results]`` user turn, a
    user turn the chat template can resolve is guaranteed, and the request goes to ``inner``
    with no native tools. The answer's text is read back into calls. When streaming, text
    deltas of the non-call text are passed on (call text is held back as far as it can be told
    apart while it arrives), with ``ToolCallStarted`` and ``ToolCallCompleted`` for each call.

    ``dialect`` is one dialect for every tool, or a :class:`ToolDialects` giving tools their
    own: the catalogue then groups the tools by dialect, the protocol explains each dialect in
    use once, and each tool's calls are read in its dialect.

    The instance reports the wrapped adapter's ``api``, so events and opaque parts stay tied to
    the real wire API.
    """

    api: ClassVar[str] = "prompted"

    def __init__(self, inner: ProviderAdapter, dialect: DialectChoice = "json") -> None:
        super().__init__(inner.config, inner.transport)
        self.inner = inner
        self.dialects = tool_dialects(dialect)
        self.dialect = self.dialects.default
        # Instances answer to the wrapped API's name (events, opaque parts).
        vars(self)["api"] = inner.api

    @property
    def capabilities(self) -> AdapterCapabilities:
        """The inner adapter's, without a native tool channel; every tool choice is expressed
        as an instruction, and so is a typed output (a JSON-only answer field would keep the
        model from writing its calls)."""
        return attrs.evolve(
            self.inner.capabilities,
            native_tools=False,
            tool_choice=_ALL_CHOICES,
            binds_strict_schemas=False,
            accepts_parallel_tool_calls=False,
            native_output=False,
        )

    def render_tools(self, functions: tuple[FunctionSpec, ...]) -> str:
        """The exact text appended to the system prompt for these functions."""
        return render_prompted_tools(functions, self.dialects)

    def text_request(self, request: ModelRequest) -> ModelRequest:
        """``request`` as the inner adapter receives it: tools in the prompt, history as text."""
        dialects = self._request_dialects(request)
        functions = request.functions if request.tool_choice != "none" else ()
        messages = list(request.messages)
        several = request.parallel_tool_calls is not False
        if functions:
            if messages and isinstance(messages[0], SystemMessage):
                prompt = with_tool_instructions(
                    messages[0].content,
                    functions,
                    dialects,
                    tool_choice=request.tool_choice,
                    several_calls=several,
                )
                messages[0] = SystemMessage(prompt)
            else:
                block = render_prompted_tools(
                    functions, dialects, tool_choice=request.tool_choice, several_calls=several
                )
                messages.insert(0, SystemMessage(block))
        converted = coalesce_tool_results(messages, dialects, request.functions)
        return attrs.evolve(
            request,
            messages=ensure_resolvable_user_turn(converted),
            functions=(),
            tool_choice="auto",
            parallel_tool_calls=None,
        )

    async def complete(self, request: ModelRequest, emit: EmitEvent) -> AssistantMessage:
        """Send the request as text to the inner adapter and read calls from its answer.

        A tool name the dialect cannot write (``get-weather`` in ptype) is offered under an
        alias, and its calls are read back under the canonical name.
        """
        request = dialect_request(request, self.dialects)
        functions = request.functions if request.tool_choice != "none" else ()
        if not functions:
            return await self.inner.complete(self.text_request(request), emit)
        new_id = _call_ids(request)
        dialects = self._request_dialects(request)
        scanner = TurnScanner(functions, dialects, new_id=new_id)
        streamed: list[str] = []

        def forward(event: Event) -> None:
            if isinstance(event, TextDelta):
                streamed.append(event.text)
                for piece in scanner.feed(event.text):
                    emit(_event_of(piece, request))
            else:
                emit(event)

        message = await self.inner.complete(self.text_request(request), forward)
        text = message.text
        if streamed:
            for piece in scanner.finish():
                emit(_event_of(piece, request))
        if streamed and "".join(streamed) == text:
            parsed = scanner.result()
        else:
            parsed = parse_tool_calls(text, functions, dialects, new_id=new_id)
        return canonical_message(_with_parsed(message, parsed), request)

    @property
    def empty_answer_hint(self) -> str | None:
        """The inner adapter's: the host is the same."""
        return self.inner.empty_answer_hint

    def _request_dialects(self, request: ModelRequest) -> ToolDialects:
        """The dialects under the names this request offers its tools by (aliases included)."""
        names = request.tool_names
        return self.dialects.aliased(names.aliases) if names is not None else self.dialects

    async def aclose(self) -> None:
        """Close the inner adapter."""
        await self.inner.aclose()


def _event_of(piece: Piece, request: ModelRequest) -> Event:
    run_id, round_ = request.run_id, request.round
    if isinstance(piece, TextPiece):
        return TextDelta(run_id=run_id, round=round_, text=piece.text)
    names = request.tool_names
    if isinstance(piece, CallStartedPiece):
        name = names.canonical(piece.name) if names is not None else piece.name
        return ToolCallStarted(
            run_id=run_id, round=round_, call_id=piece.call_id, name=name, index=piece.index
        )
    if isinstance(piece, CallPiece):
        call = piece.call
        if names is not None and names.canonical(call.name) != call.name:
            call = attrs.evolve(call, name=names.canonical(call.name))
        return ToolCallCompleted(run_id=run_id, round=round_, call=call)
    return ThinkingDelta(run_id=run_id, round=round_, text=piece.text)


_NOT_A_KEYWORD: Final = rf"(?!(?:{'|'.join(keyword.kwlist)})(?![A-Za-z0-9_]))"
_SEGMENT: Final = rf"{_NOT_A_KEYWORD}[A-Za-z_][A-Za-z0-9_]*"
PTYPE_NAME: Final = re.compile(rf"{_SEGMENT}(?:\.{_SEGMENT})*")
"""The tool names the call dialects (ptype, python, typescript) write as they are: identifiers,
dotted or not, no part of them a Python keyword (``import(…)`` is no Python call)."""


def _ptype_spelling(name: str) -> str:
    spelt = re.sub(r"\W", "_", name)
    spelt = f"_{spelt}" if spelt[:1].isdigit() else spelt
    return f"{spelt}_" if keyword.iskeyword(spelt) else spelt


def dialect_request(request: ModelRequest, dialect: DialectChoice) -> ModelRequest:
    """``request`` with the names its dialects cannot write aliased (only the call dialects,
    ptype, python and typescript, have such names: json quotes any name, and xml writes a name
    that is no tag as a JSON call)."""
    choice = tool_dialects(dialect)
    calls = choice.default in CALL_DIALECTS or any(
        choice.of(f.name) in CALL_DIALECTS for f in request.functions
    )
    if not calls:
        return request
    return wire_request(request, pattern=PTYPE_NAME, max_length=64, spell=_ptype_spelling)


def _with_parsed(message: AssistantMessage, parsed: ParsedTurn) -> AssistantMessage:
    """The inner answer with its text replaced by the parsed text, thinking and calls."""
    kept: list[AssistantPart] = [p for p in message.parts if not isinstance(p, TextPart)]
    finish = message.finish_reason
    if parsed.calls and finish in (None, "stop", "end_turn"):
        finish = "tool_calls"
    return attrs.evolve(message, parts=(*kept, *parsed.parts), finish_reason=finish)


class FallbackMemory:
    """The providers that answered a request with tools by saying they do not support tools.

    A provider is keyed by adapter API, base URL and model (hosts such as Ollama support tools
    for some models and not for others). One memory is shared by the whole process
    (:data:`PROCESS_FALLBACKS`) unless an adapter is given its own.
    """

    def __init__(self) -> None:
        self._keys: set[tuple[str, str | None, str | None]] = set()

    def remember(self, key: tuple[str, str | None, str | None]) -> None:
        """Record that the provider ``key`` needs prompted tool calling."""
        self._keys.add(key)

    def forget(self) -> None:
        """Forget every provider."""
        self._keys.clear()

    def __contains__(self, key: object) -> bool:
        return key in self._keys


PROCESS_FALLBACKS = FallbackMemory()
"""The process-wide fallback memory: a provider that refused tools is prompted from then on."""


class AutoPromptedAdapter(ProviderAdapter):
    """Native tool calling first; prompted tool calling once the provider says it has none.

    When the inner adapter raises :class:`~toolwire.adapters.ToolsNotSupportedError` (an
    OpenAI-compatible host answering 400 to a request with tools), the request is sent again
    through a :class:`PromptedAdapter` in ``dialect`` (``json`` unless configured), a
    ``ProviderRetry`` event says so, and the provider is remembered in ``memory`` so later
    requests go prompted directly.
    """

    api: ClassVar[str] = "auto-prompted"

    def __init__(
        self,
        inner: ProviderAdapter,
        dialect: DialectChoice = "json",
        *,
        memory: FallbackMemory | None = None,
    ) -> None:
        super().__init__(inner.config, inner.transport)
        self.inner = inner
        self.prompted = PromptedAdapter(inner, dialect)
        self.memory = memory if memory is not None else PROCESS_FALLBACKS
        vars(self)["api"] = inner.api
        self.key: tuple[str, str | None, str | None] = (
            inner.api,
            inner.config.base_url,
            inner.config.model,
        )
        """The provider's key in the fallback memory: adapter API, base URL, model (made once,
        not at each of the loop's reads of :attr:`capabilities`: the config does not change)."""

    @property
    def uses_prompted(self) -> bool:
        """Whether requests go through the prompt (the provider refused native tools)."""
        return self.key in self.memory

    @property
    def capabilities(self) -> AdapterCapabilities:
        """The inner adapter's, or the prompted adapter's once the provider refused tools."""
        return self.prompted.capabilities if self.uses_prompted else self.inner.capabilities

    def render_tools(self, functions: tuple[FunctionSpec, ...]) -> Any:
        """What the provider currently receives for these functions (JSON, or prompt text)."""
        if self.uses_prompted:
            return self.prompted.render_tools(functions)
        return self.inner.render_tools(functions)

    @property
    def empty_answer_hint(self) -> str | None:
        """The inner adapter's (prompted or not, the host is the same)."""
        return self.inner.empty_answer_hint

    async def complete(self, request: ModelRequest, emit: EmitEvent) -> AssistantMessage:
        """Send natively; on a refusal of tools, remember the provider and send prompted."""
        if self.uses_prompted:
            return await self.prompted.complete(request, emit)
        try:
            return await self.inner.complete(request, emit)
        except ToolsNotSupportedError as exc:
            self.memory.remember(self.key)
            emit(
                ProviderRetry(
                    run_id=request.run_id,
                    round=request.round,
                    api=self.inner.api,
                    status=exc.status,
                    delay=0.0,
                    attempt=2,
                    reason=(
                        "the provider does not support native tools; sending the tools in the "
                        f"prompt instead ({self.prompted.dialect} dialect) from now on"
                    ),
                )
            )
            return await self.prompted.complete(request, emit)

    async def aclose(self) -> None:
        """Close the inner adapter."""
        await self.inner.aclose()


def wrap_adapter(adapter: ProviderAdapter, config: ProviderConfig) -> ProviderAdapter:
    """The adapter the loop should use for a provider, by the config's tool settings.

    ``native_tools = false`` in the config, or an adapter without a native tool channel: a
    :class:`PromptedAdapter` in ``tool_dialect``, with the tools named in ``tool_dialects`` in
    their own. ``native_tools`` unset: an
    :class:`AutoPromptedAdapter` (native first, prompted after a refusal). ``native_tools =
    true``: the adapter as it is. An adapter already wrapped is returned unchanged.
    """
    if isinstance(adapter, PromptedAdapter | AutoPromptedAdapter):
        return adapter
    dialects = ToolDialects(config.tool_dialect, config.tool_dialects)
    if config.native_tools is False or not adapter.capabilities.native_tools:
        return PromptedAdapter(adapter, dialects)
    if config.native_tools is None:
        return AutoPromptedAdapter(adapter, dialects)
    return adapter
