"""Errors of provider requests, raised by the transport and by adapters."""

from __future__ import annotations


class ProviderError(Exception):
    """A provider request failed; the message names the provider, the status and its message.

    ``retryable`` is True for failures worth sending again (429, 5xx, dropped connections before
    anything was delivered). Never carries an API key.
    """

    def __init__(
        self,
        message: str,
        *,
        api: str,
        status: int | None = None,
        retryable: bool = False,
        provider_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.api = api
        self.status = status
        self.retryable = retryable
        self.provider_message = provider_message


class ToolsNotSupportedError(ProviderError):
    """The host answered a request with tools by saying it does not support tools (HTTP 400).

    The host then falls back to prompted tool calling for that provider.
    """
