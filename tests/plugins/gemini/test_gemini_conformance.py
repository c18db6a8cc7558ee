"""The conformance suite for ``gemini``, against the plugin's own fake server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import toolwire_gemini._plugin
from toolwire.testing.conformance import AdapterConformance
from toolwire_gemini import GEMINI_NAME, gemini_spelling
from toolwire_gemini.testing import FakeGeminiServer

pytest_plugins = ["toolwire.testing.conformance"]


class TestGeminiConformance(AdapterConformance):
    adapter = "gemini"
    plugin = toolwire_gemini._plugin
    server = FakeGeminiServer
    tool_name_pattern = GEMINI_NAME
    tool_name_spell = gemini_spelling
    tool_choice_wire: ClassVar[dict[str, Any]] = {
        "auto": {"mode": "AUTO"},
        "none": {"mode": "NONE"},
        "required": {"mode": "ANY"},
        "named": {"mode": "ANY", "allowedFunctionNames": ["add"]},
    }

    def tool_choice_of(self, body: Mapping[str, Any]) -> Any:
        """Gemini's choice is ``toolConfig.functionCallingConfig``."""
        return body["toolConfig"]["functionCallingConfig"]

    def check_error_result(self, body: Any, call_id: str) -> None:
        """A failed call's ``functionResponse`` says so under ``error``."""
        responses = [
            part["functionResponse"]
            for content in body["contents"]
            for part in content["parts"]
            if "functionResponse" in part
        ]
        assert [(r["id"], sorted(r["response"])) for r in responses] == [(call_id, ["error"])]
