"""The public API for provider adapter authors.

An adapter subclasses :class:`ProviderAdapter` (or :class:`HTTPProviderAdapter` for HTTP APIs, which
brings the host's transport, retries and key handling), renders :class:`ModelRequest` into its wire
format and parses the answer into a canonical :class:`toolwire.messages.AssistantMessage`.
:class:`CallAssembler` assembles streamed tool calls (by index or item id) with linear-time partial
arguments; :func:`event_object` and :func:`wire_objects` refuse malformed wire data with a clear
:class:`ProviderError`. :func:`wire_request` gives each tool name an API refuses a stable alias, and
:func:`canonical_message` (and :class:`CallAssembler`) read the answer's calls back under the
canonical names; :class:`RenderedTools` keeps an adapter's rendered ``tools`` array (and the
aliases) while the loop offers the same functions, :class:`RenderedMessages` the wire form of
each message, so a round renders only the messages new to it, and :class:`RenderedHistory` each
run's history on the wire, so a round folds in only its new messages. Test an adapter with the
conformance suite in :mod:`toolwire.testing.conformance`.
"""

from ._base import (
    AdapterCapabilities,
    EmitEvent,
    ModelRequest,
    NamedToolChoice,
    ProviderAdapter,
    ProviderError,
    ToolChoice,
    ToolsNotSupportedError,
)
from ._choice import check_tool_choice
from ._errors import tools_not_supported
from ._history import RenderedHistory
from ._http import ANTHROPIC_KEY_HEADER, BEARER_KEY_HEADER, ApiKeyHeader, HTTPProviderAdapter
from ._names import (
    WIRE_NAME,
    ToolNames,
    canonical_message,
    wire_functions,
    wire_notes,
    wire_request,
)
from ._options import extra_fields, provider_tools
from ._rendered import RenderedMessages, RenderedTools, WireTools
from ._streaming import (
    CallAssembler,
    event_object,
    new_call_id,
    parse_arguments,
    provider_call_events,
    unique_call_ids,
    wire_call_id,
    wire_call_ids,
    wire_objects,
)

__all__ = [
    "ANTHROPIC_KEY_HEADER",
    "AdapterCapabilities",
    "ApiKeyHeader",
    "BEARER_KEY_HEADER",
    "CallAssembler",
    "EmitEvent",
    "HTTPProviderAdapter",
    "ModelRequest",
    "NamedToolChoice",
    "ProviderAdapter",
    "ProviderError",
    "RenderedHistory",
    "RenderedMessages",
    "RenderedTools",
    "ToolChoice",
    "ToolNames",
    "ToolsNotSupportedError",
    "WIRE_NAME",
    "WireTools",
    "canonical_message",
    "check_tool_choice",
    "event_object",
    "extra_fields",
    "new_call_id",
    "parse_arguments",
    "provider_call_events",
    "provider_tools",
    "tools_not_supported",
    "unique_call_ids",
    "wire_call_id",
    "wire_call_ids",
    "wire_functions",
    "wire_notes",
    "wire_objects",
    "wire_request",
]
