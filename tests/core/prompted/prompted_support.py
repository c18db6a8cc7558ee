"""Shared pieces of the prompted tests: a text-only chat adapter and sample functions."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

from toolwire.adapters import (
    AdapterCapabilities,
    EmitEvent,
    ModelRequest,
    ProviderAdapter,
    ProviderError,
    ToolsNotSupportedError,
)
from toolwire.config import ProviderConfig
from toolwire.events import TextDelta
from toolwire.messages import AssistantMessage, TextPart, ToolResultMessage
from toolwire.tools import FunctionSpec

Reply = str | Callable[[ModelRequest], "str | Awaitable[str]"]

SEARCH = FunctionSpec(
    name="search",
    description="Search the web for pages about a topic.",
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {
                "type": "integer",
                "description": "How many results to return.",
                "minimum": 1,
                "maximum": 20,
                "default": 5,
            },
            "fresh": {"type": "boolean", "description": "Only pages from the last week."},
            "site": {"type": ["string", "null"], "description": "Limit to one site."},
            "filters": {
                "type": "object",
                "properties": {
                    "lang": {"type": "string", "description": "ISO 639-1 language code."},
                    "year": {"type": "integer"},
                },
            },
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["query"],
    },
    parameter_order=("query", "limit", "fresh", "site", "filters", "tags"),
)

FETCH = FunctionSpec(
    name="fetch",
    description="Read a web page and return its text.",
    parameters={
        "type": "object",
        "properties": {"url": {"type": "string", "format": "uri", "description": "The page."}},
        "required": ["url"],
    },
    parameter_order=("url",),
)

FUNCTIONS = (FETCH, SEARCH)


def ids(index: int) -> str:
    """Deterministic call ids for parse tests."""
    return f"call_t_{index}"


class TextModel(ProviderAdapter):
    """A chat adapter with no tool channel: it answers each request with scripted text.

    ``script`` is a sequence of replies (reply *i* answers the request whose conversation holds
    *i* assistant turns) or one function of the request. A request carrying native tool parts
    (functions, tool calls, tool results) is refused as a real text-only server would, unless
    ``refuse_tools`` is False and ``native`` is True. With ``refuse_tools`` a request offering
    functions fails with :class:`ToolsNotSupportedError` (HTTP 400), like Ollama for a model
    without tool support.
    """

    api: ClassVar[str] = "text-model"

    def __init__(
        self,
        config: ProviderConfig | None = None,
        transport: Any = None,
        *,
        script: Sequence[str] | Reply = (),
        chunk_size: int = 7,
        native: bool = False,
        refuse_tools: bool = False,
    ) -> None:
        super().__init__(config or ProviderConfig(adapter=self.api, model="tiny"), transport)
        self.script = script
        self.chunk_size = chunk_size
        self.native = native
        self.refuse_tools = refuse_tools
        self.requests: list[ModelRequest] = []

    @property
    def capabilities(self) -> AdapterCapabilities:
        return AdapterCapabilities(native_tools=self.native)

    def render_tools(self, functions: tuple[FunctionSpec, ...]) -> list[str]:
        return [f.name for f in functions]

    async def complete(self, request: ModelRequest, emit: EmitEvent) -> AssistantMessage:
        self.requests.append(request)
        if request.functions and self.refuse_tools:
            raise ToolsNotSupportedError(
                "text-model: HTTP 400: model does not support tools",
                api=self.api,
                status=400,
                provider_message="registry.ollama.ai/library/tiny does not support tools",
            )
        if not self.native and (request.functions or any(map(_native_part, request.messages))):
            raise ProviderError("text-model: got native tool parts", api=self.api)
        text = await self._reply(request)
        if request.stream:
            for start in range(0, len(text), self.chunk_size):
                chunk = text[start : start + self.chunk_size]
                emit(TextDelta(run_id=request.run_id, round=request.round, text=chunk))
        return AssistantMessage(
            parts=(TextPart(text),), api=self.api, model="tiny", finish_reason="stop"
        )

    async def _reply(self, request: ModelRequest) -> str:
        if callable(self.script):
            produced = self.script(request)
            return await produced if inspect.isawaitable(produced) else produced
        index = sum(1 for m in request.messages if isinstance(m, AssistantMessage))
        if index >= len(self.script):
            raise ProviderError(f"text-model: no reply {index + 1} in the script", api=self.api)
        return self.script[index]


def _native_part(message: object) -> bool:
    if isinstance(message, ToolResultMessage):
        return True
    return isinstance(message, AssistantMessage) and bool(message.tool_calls)
