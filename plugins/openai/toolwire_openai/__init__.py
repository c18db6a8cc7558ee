"""toolwire-openai: the OpenAI Chat Completions and Responses adapters for toolwire.

``openai-chat`` serves api.openai.com and every OpenAI-compatible host (Ollama, vLLM, llama.cpp
server, LM Studio, OpenRouter, Groq …) through ``[provider] base_url``; ``openai-responses``
speaks the Responses API. Both talk HTTP through the host's transport (no vendor SDK).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# Names are imported on first use: enabling the plugin (`toolwire plugins`, `toolwire tools
# list`) imports only `_plugin`, and the adapters load when a provider asks for them.
_LAZY = {
    "ChatStream": "._chat",
    "HostProfile": "._common",
    "OpenAIChatAdapter": "._chat",
    "OpenAIResponsesAdapter": "._responses",
    "ResponsesStream": "._responses",
    "SERVER_PROFILES": "._common",
    "ServerProfile": "._common",
    "host_profile": "._common",
    "parse_chat_completion": "._chat",
    "parse_response": "._responses",
    "render_chat_messages": "._chat",
    "render_chat_request": "._chat",
    "render_chat_tools": "._chat",
    "render_responses_input": "._responses",
    "render_responses_request": "._responses",
    "render_responses_tools": "._responses",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'toolwire_openai' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name, __name__), name)
    globals()[name] = value
    return value


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
