"""The conformance suite for ``anthropic-messages``."""

from __future__ import annotations

from typing import Any, ClassVar

import toolwire_anthropic._plugin
from toolwire.testing import FakeAnthropicServer
from toolwire.testing.conformance import AdapterConformance

pytest_plugins = ["toolwire.testing.conformance"]


class TestAnthropicConformance(AdapterConformance):
    adapter = "anthropic-messages"
    plugin = toolwire_anthropic._plugin
    server = FakeAnthropicServer
    reports_cache_writes = True
    # The loop runs calls one by one by default, so every choice that allows calls says so.
    tool_choice_wire: ClassVar[dict[str, Any]] = {
        "auto": {"type": "auto", "disable_parallel_tool_use": True},
        "none": {"type": "none"},
        "required": {"type": "any", "disable_parallel_tool_use": True},
        "named": {"type": "tool", "name": "add", "disable_parallel_tool_use": True},
    }

    def check_error_result(self, body: Any, call_id: str) -> None:
        """Failed calls carry ``is_error: true`` in their ``tool_result`` block."""
        blocks = [
            block
            for message in body["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
        assert [(b["tool_use_id"], b.get("is_error")) for b in blocks] == [(call_id, True)]
