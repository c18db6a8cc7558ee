"""Names from the OpenTelemetry GenAI semantic conventions (see the README for the version)."""

from __future__ import annotations

from urllib.parse import urlsplit

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
REASONING_TOKENS = "gen_ai.usage.reasoning.output_tokens"
COST = "toolwire.usage.cost"  # no convention names a cost; in the currency of [prices]
OUTPUT_MESSAGES = "gen_ai.output.messages"
INPUT_MESSAGES = "gen_ai.input.messages"
RESPONSE_ID = "gen_ai.response.id"
TOKEN_TYPE = "gen_ai.token.type"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"

TOKEN_USAGE = "gen_ai.client.token.usage"
OPERATION_DURATION = "gen_ai.client.operation.duration"
TOOL_DURATION = "gen_ai.execute_tool.duration"

# The bucket boundaries the conventions ask for.
TOKEN_BUCKETS = tuple(float(4**n) for n in range(14))
DURATION_BUCKETS = tuple(0.01 * 2**n for n in range(14))

# API names of toolwire adapters → the conventions' well-known provider names. Other APIs are
# reported under their own name (the conventions' "custom friendly name").
_PROVIDERS = {"openai": "openai", "anthropic": "anthropic"}


def provider_name(api: str) -> str:
    """``gen_ai.provider.name`` for an adapter's API name (``openai-chat`` → ``openai``)."""
    return _PROVIDERS.get(api.split("-", 1)[0], api)


def server_attributes(base_url: str | None) -> dict[str, str | int]:
    """``server.address`` and ``server.port`` of the provider's base URL (none when unset)."""
    if not base_url:
        return {}
    try:
        parts = urlsplit(base_url)
        port = parts.port
    except ValueError:
        return {}
    if not parts.hostname:
        return {}
    out: dict[str, str | int] = {SERVER_ADDRESS: parts.hostname}
    if port is None:
        port = {"https": 443, "http": 80}.get(parts.scheme)
    if port is not None:
        out[SERVER_PORT] = port
    return out
