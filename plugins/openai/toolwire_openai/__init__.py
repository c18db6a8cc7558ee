"""toolwire-openai: the OpenAI Chat Completions and Responses adapters for toolwire.

``openai-chat`` serves api.openai.com and every OpenAI-compatible host (Ollama, vLLM, llama.cpp
server, LM Studio, OpenRouter, Groq …) through ``[provider] base_url``; ``openai-responses``
speaks the Responses API. Both talk HTTP through the host's transport (no vendor SDK).
"""

from ._chat import (
    ChatStream,
    OpenAIChatAdapter,
    parse_chat_completion,
    render_chat_messages,
    render_chat_request,
    render_chat_tools,
)
from ._common import SERVER_PROFILES, HostProfile, ServerProfile, host_profile
from ._responses import (
    OpenAIResponsesAdapter,
    ResponsesStream,
    parse_response,
    render_responses_input,
    render_responses_request,
    render_responses_tools,
)

__all__ = [
    "SERVER_PROFILES",
    "ChatStream",
    "HostProfile",
    "OpenAIChatAdapter",
    "OpenAIResponsesAdapter",
    "ResponsesStream",
    "ServerProfile",
    "host_profile",
    "parse_chat_completion",
    "parse_response",
    "render_chat_messages",
    "render_chat_request",
    "render_chat_tools",
    "render_responses_input",
    "render_responses_request",
    "render_responses_tools",
]
