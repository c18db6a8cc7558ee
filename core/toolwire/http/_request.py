"""``ProviderRequest``: one request to a provider, handed whole down the transport's send stack.

It holds what is sent (method, URL, headers, body), how (the provider config's timeouts and
retries, and when a retryable failure is not worth another attempt), what may never be shown
(the API key's variable and the sensitive values redacted from captured bodies), and where the
request's events go. It imports no aiohttp: adapters build it before the transport is loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from ..config import ProviderConfig
    from ..events import EmitEvent
    from ._errors import ProviderError
    from ._keys import ApiKeyHeader

__all__ = ["ProviderRequest"]


@attrs.frozen
class ProviderRequest:
    """One request to a provider.

    :param url: the full endpoint URL.
    :param body: the request body as JSON values (serialised once, before the first attempt).
    :param api: the adapter's API name, used in errors and events.
    :param method: the HTTP method.
    :param config: timeouts, retries and answer limits (default: the transport's config).
    :param key_env: the environment variable holding the API key (None: no key is sent).
    :param key_header: how the key is sent (default ``Authorization: Bearer``).
    :param headers: extra headers (never logged).
    :param give_up: says of a retryable error that sending again is pointless (a host that
        answers 500 to a feature it lacks).
    :param secrets: values (sensitive arguments) redacted from the captured body, besides the key.
    :param emit: where the request's events go (default: the transport's).
    :param run_id: the run the request belongs to, for events.
    :param round: the round the request belongs to, for events.
    """

    url: str
    body: Mapping[str, Any]
    api: str
    method: str = "POST"
    config: ProviderConfig | None = None
    key_env: str | None = None
    key_header: ApiKeyHeader | None = None
    headers: Mapping[str, str] | None = None
    give_up: Callable[[ProviderError], bool] | None = None
    secrets: Collection[str] = ()
    emit: EmitEvent | None = None
    run_id: str = ""
    round: int | None = None
