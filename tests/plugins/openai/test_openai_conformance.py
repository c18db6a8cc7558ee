"""The conformance suite for ``openai-chat`` and ``openai-responses``."""

from __future__ import annotations

from typing import Any, ClassVar

import toolwire_openai._plugin
from toolwire.testing import FakeOpenAIChatServer, FakeOpenAIResponsesServer
from toolwire.testing.conformance import ABSENT, AdapterConformance

pytest_plugins = ["toolwire.testing.conformance"]


class TestOpenAIChatConformance(AdapterConformance):
    adapter = "openai-chat"
    plugin = toolwire_openai._plugin
    server = FakeOpenAIChatServer
    tool_choice_wire: ClassVar[dict[str, Any]] = {
        "auto": "auto",
        "none": "none",
        "required": "required",
        "named": {"type": "function", "function": {"name": "add"}},
    }


class TestOpenAIResponsesConformance(AdapterConformance):
    adapter = "openai-responses"
    plugin = toolwire_openai._plugin
    server = FakeOpenAIResponsesServer
    calls_need_ids = True  # a function_call_output names its call by call_id
    tool_choice_wire: ClassVar[dict[str, Any]] = {
        "auto": ABSENT,
        "none": "none",
        "required": "required",
        "named": {"type": "function", "name": "add"},
    }
