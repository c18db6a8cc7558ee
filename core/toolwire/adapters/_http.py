"""``HTTPProviderAdapter``: the base of adapters that speak a JSON-over-HTTP API.

It sends through the host's transport (one session, retries, key from the environment) and turns
"this host cannot take tools" answers into :class:`ToolsNotSupportedError`. The transport (and
so aiohttp) is imported only when a request is made.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ..http._keys import ANTHROPIC_KEY_HEADER, BEARER_KEY_HEADER, ApiKeyHeader
from ..http._request import ProviderRequest
from ._base import EmitEvent, ModelRequest, ProviderAdapter, ProviderError
from ._errors import is_tools_unsupported_message, tools_not_supported

if TYPE_CHECKING:
    from ..config import ProviderConfig
    from ..http._sse import SSEEvent
    from ..http._transport import Transport

__all__ = [
    "ANTHROPIC_KEY_HEADER",
    "ApiKeyHeader",
    "BEARER_KEY_HEADER",
    "HTTPProviderAdapter",
]

T = TypeVar("T")


def _tools_refusal(error: ProviderError) -> bool:
    return is_tools_unsupported_message(error.provider_message)


class HTTPProviderAdapter(ProviderAdapter):
    """A :class:`ProviderAdapter` that sends JSON requests through the host's transport.

    Subclasses set ``api`` and ``key_header``, build the request body and parse the answer;
    :meth:`post` and :meth:`stream` do the sending. An adapter created without a transport (in a
    test, say) makes its own and closes it in :meth:`aclose`.
    """

    key_header: ClassVar[ApiKeyHeader] = BEARER_KEY_HEADER

    def __init__(self, config: ProviderConfig, transport: Transport | None = None) -> None:
        super().__init__(config, transport)
        self._own_transport: Transport | None = None

    def get_transport(self) -> Transport:
        """The host's transport, or one of the adapter's own."""
        if self.transport is not None:
            return self.transport
        if self._own_transport is None:
            from ..http._transport import Transport

            self._own_transport = Transport(self.config)
        return self._own_transport

    async def aclose(self) -> None:
        """Close the adapter's own transport, if it made one (the host's is shared)."""
        own, self._own_transport = self._own_transport, None
        if own is not None:
            await own.aclose()

    async def post(
        self,
        url: str,
        body: Mapping[str, Any],
        request: ModelRequest,
        emit: EmitEvent,
        *,
        key_env: str | None,
        headers: Mapping[str, str] | None = None,
        tools_offered: bool = False,
    ) -> Any:
        """POST ``body`` and return the JSON answer (see :meth:`Transport.post_json`).

        :raises ToolsNotSupportedError: when ``tools_offered`` and the host says it cannot take
            tools.
        :raises ProviderError: for every other failure.
        """
        sent = self._provider_request(url, body, request, emit, key_env, headers, tools_offered)
        try:
            return await (self.transport or self.get_transport()).post_json(sent)
        except ProviderError as exc:
            raise _refine(exc, tools_offered) from None

    async def stream(
        self,
        url: str,
        body: Mapping[str, Any],
        request: ModelRequest,
        emit: EmitEvent,
        consume: Callable[[AsyncIterator[SSEEvent], EmitEvent], Awaitable[T]],
        *,
        key_env: str | None,
        headers: Mapping[str, str] | None = None,
        tools_offered: bool = False,
    ) -> T:
        """POST ``body`` and let ``consume`` read the event stream (see
        :meth:`Transport.consume_sse`); errors as for :meth:`post`."""
        sent = self._provider_request(url, body, request, emit, key_env, headers, tools_offered)
        try:
            return await (self.transport or self.get_transport()).consume_sse(sent, consume)
        except ProviderError as exc:
            raise _refine(exc, tools_offered) from None

    def _provider_request(
        self,
        url: str,
        body: Mapping[str, Any],
        request: ModelRequest,
        emit: EmitEvent,
        key_env: str | None,
        headers: Mapping[str, str] | None,
        tools_offered: bool,
    ) -> ProviderRequest:
        """The transport's record of one request of this adapter for ``request``."""
        return ProviderRequest(
            url,
            body,
            self.api,
            config=self.config,
            key_env=key_env,
            key_header=self.key_header,
            headers=headers,
            give_up=_tools_refusal if tools_offered else None,
            secrets=request.secrets,
            emit=emit,
            run_id=request.run_id,
            round=request.round,
        )


def _refine(error: ProviderError, tools_offered: bool) -> ProviderError:
    if tools_offered:
        unsupported = tools_not_supported(error)
        if unsupported is not None:
            return unsupported
    return error
