"""The ``gemini`` adapter: Google's Gemini API, ``generateContent`` and
``streamGenerateContent`` (server-sent events with ``?alt=sse``)."""

from __future__ import annotations

import functools
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar, Final
from urllib.parse import quote, urlsplit

from toolwire import FunctionSpec
from toolwire.adapters import (
    AdapterCapabilities,
    EmitEvent,
    HTTPProviderAdapter,
    ModelRequest,
    ProviderError,
    RenderedHistory,
    RenderedMessages,
    RenderedTools,
    canonical_message,
    wire_notes,
    wire_request,
)
from toolwire.messages import AssistantMessage

from ._plugin import GeminiSettings
from ._wire import (
    API,
    GEMINI_NAME,
    GOOGLE_KEY_HEADER,
    MAX_NAME_LENGTH,
    GenerateStream,
    _Contents,
    _wire,
    gemini_spelling,
    parse_response,
    render_request,
    render_tools,
    schema_notes,
)

GEMINI_BASE_URL: Final = "https://generativelanguage.googleapis.com"
GEMINI_KEY_ENV: Final = "GEMINI_API_KEY"
_VERSION: Final = re.compile(r"v\d+(?:alpha|beta)?\d*")


class GeminiAdapter(HTTPProviderAdapter):
    """``gemini``: ``POST {base_url}/{api_version}/models/{model}:generateContent`` (and
    ``:streamGenerateContent?alt=sse`` when streaming).

    ``base_url`` is the host root, as in Google's SDK (default
    ``https://generativelanguage.googleapis.com``; one ending in a version such as ``/v1beta``
    is used as it is). The key comes from ``provider.api_key_env`` (default ``GEMINI_API_KEY``
    for Google's host) and is sent in ``x-goog-api-key``, never in the URL.
    """

    api: ClassVar[str] = API
    key_header = GOOGLE_KEY_HEADER
    settings: ClassVar[GeminiSettings] = GeminiSettings()

    @classmethod
    def configured(cls, settings: GeminiSettings) -> type[GeminiAdapter]:
        """This adapter class with ``[providers.gemini]`` settings (itself for the defaults)."""
        if settings == cls.settings:
            return cls
        return type(cls.__name__, (cls,), {"settings": settings, "__module__": cls.__module__})

    @functools.cached_property
    def capabilities(self) -> AdapterCapabilities:
        """Native tools (unless configured off), every tool choice, streaming; no parallel
        flag (Gemini has none), names of at most 64 characters; structured output
        (``responseSchema``) unless ``[provider] native_output = false`` (for models before
        Gemini 3, which refuse it beside function declarations). Made once: the config does not
        change."""
        return AdapterCapabilities(
            native_tools=self.config.native_tools is not False,
            tool_choice=frozenset({"auto", "none", "required", "named"}),
            streaming=True,
            binds_strict_schemas=False,
            accepts_parallel_tool_calls=False,
            max_tool_name_length=MAX_NAME_LENGTH,
            native_output=self.config.native_output is not False,
        )

    def _render(self, functions: Sequence[FunctionSpec]) -> list[dict[str, Any]]:
        settings = self.settings
        return render_tools(
            functions, schemas=settings.schemas, open_objects=settings.additional_properties
        )

    @functools.cached_property
    def _messages(self) -> RenderedMessages[Any]:
        """Each message's rendering, kept while the message lives."""
        return RenderedMessages(_wire)

    @functools.cached_property
    def _history(self) -> RenderedHistory[tuple[dict[str, Any] | None, list[dict[str, Any]]]]:
        """Each run's ``(systemInstruction, contents)`` up to its last request."""
        render, role = self._messages.get, self.settings.result_role
        return RenderedHistory(lambda: _Contents(render, result_role=role))

    @functools.cached_property
    def _tools(self) -> RenderedTools:
        return RenderedTools(
            self._render, pattern=GEMINI_NAME, max_length=MAX_NAME_LENGTH, spell=gemini_spelling
        )

    def render_tools(self, functions: tuple[FunctionSpec, ...]) -> list[dict[str, Any]]:
        """Exactly the ``tools`` array Gemini receives (names it refuses under their aliases).

        :raises ProviderError: in ``schemas = "openapi"`` mode, for a tool Gemini's schema
            subset cannot express, naming it and why.
        """
        return self._tools.get(functions).tools

    def render_notes(self, functions: tuple[FunctionSpec, ...]) -> list[str]:
        """The aliases of names Gemini refuses, and how each schema differs from what Gemini
        receives (sent as JSON Schema, or constraints written into descriptions)."""
        rendered = self.render_tools(functions)
        aliases = [
            note
            for f in functions
            for note in wire_notes(
                f.name,
                rendered,
                pattern=GEMINI_NAME,
                max_length=MAX_NAME_LENGTH,
                spell=gemini_spelling,
            )
        ]
        settings = self.settings
        return [
            *aliases,
            *schema_notes(
                functions, schemas=settings.schemas, open_objects=settings.additional_properties
            ),
        ]

    @functools.cached_property
    def key_env(self) -> str | None:
        """The variable holding the key: ``provider.api_key_env``, else ``GEMINI_API_KEY`` for
        Google's host (other hosts, such as local proxies, may need none). Made once: the config
        does not change."""
        if self.config.api_key_env:
            return self.config.api_key_env
        host = urlsplit(self.config.base_url or GEMINI_BASE_URL).hostname or ""
        return GEMINI_KEY_ENV if host == urlsplit(GEMINI_BASE_URL).hostname else None

    def url(self, *, stream: bool) -> str:
        """The endpoint of a request, streamed or not (each made once: the config does not
        change).

        :raises ProviderError: when no model is configured.
        """
        return self._urls[stream]

    @functools.cached_property
    def _urls(self) -> tuple[str, str]:
        return self._url(stream=False), self._url(stream=True)

    def _url(self, *, stream: bool) -> str:
        model = self.config.model
        if not model:
            raise ProviderError(
                f"{API}: no model is configured; set provider.model (for example "
                "'gemini-2.5-flash')",
                api=API,
            )
        base = (self.config.base_url or GEMINI_BASE_URL).rstrip("/")
        last = urlsplit(base).path.rsplit("/", 1)[-1]
        if not _VERSION.fullmatch(last):
            base = f"{base}/{self.settings.api_version}"
        target = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return f"{base}/{quote(target, safe='/')}:{method}"

    async def complete(self, request: ModelRequest, emit: EmitEvent) -> AssistantMessage:
        """Send the request (streamed when ``request.stream``) and return the assistant turn.

        Names Gemini refuses (a digit first, say) go out under their aliases, and the calls of
        the answer come back under the canonical names.
        """
        wire = self._tools.get(request.functions) if request.functions else None
        request = wire_request(
            request,
            pattern=GEMINI_NAME,
            max_length=MAX_NAME_LENGTH,
            spell=gemini_spelling,
            names=wire.names if wire is not None else None,
        )
        settings = self.settings
        body = render_request(
            request,
            self.config,
            tools=wire.tools if wire is not None else None,
            contents=self._history.get(request.run_id, request.messages),
            result_role=settings.result_role,
            validated=settings.validated,
            schemas=settings.schemas,
            open_objects=settings.additional_properties,
        )
        url = self.url(stream=request.stream)
        tools_offered = bool(request.functions)
        if request.stream:

            async def consume(events: AsyncIterator[Any], sink: EmitEvent) -> AssistantMessage:
                reader = GenerateStream(request, sink)
                async for event in events:
                    reader.feed(event.data)
                return canonical_message(reader.result(), request)

            return await self.stream(
                url,
                body,
                request,
                emit,
                consume,
                key_env=self.key_env,
                tools_offered=tools_offered,
            )
        payload = await self.post(
            url, body, request, emit, key_env=self.key_env, tools_offered=tools_offered
        )
        if not isinstance(payload, dict):
            raise ProviderError(
                f"{API}: the answer is not a JSON object: {str(payload)[:200]}", api=API
            )
        return canonical_message(parse_response(payload, request), request)
