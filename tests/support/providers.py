"""The fake provider servers of ``toolwire.testing`` with the API and plugin each one speaks for,
for tests that run the same case through every adapter."""

from __future__ import annotations

from typing import Any

import toolwire_anthropic._plugin
import toolwire_gemini._plugin
import toolwire_openai._plugin
from toolwire.testing import FakeAnthropicServer, FakeOpenAIChatServer, FakeOpenAIResponsesServer
from toolwire_gemini.testing import FakeGeminiServer

FAKE_PROVIDERS: list[tuple[Any, str, Any]] = [
    (FakeOpenAIChatServer, "openai-chat", toolwire_openai._plugin),
    (FakeOpenAIResponsesServer, "openai-responses", toolwire_openai._plugin),
    (FakeAnthropicServer, "anthropic-messages", toolwire_anthropic._plugin),
    (FakeGeminiServer, "gemini", toolwire_gemini._plugin),
]
"""(server class, adapter API, the plugin module that registers the adapter), one per API."""
