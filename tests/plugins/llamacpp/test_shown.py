"""What the model reads of a tool under the copy grammar: without the patterns the grammar holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolwire.adapters import ModelRequest
from toolwire.config import ProviderConfig
from toolwire.messages import UserMessage
from toolwire.tools import FunctionSpec
from toolwire_llamacpp import LlamaCppAdapter, LlamaCppSettings
from toolwire_llamacpp._shown import without_held_patterns

TIME = r"[0-9]\S*\s+[^\s0-9]|[^\s0-9]\s+[0-9]"


def _spec(properties: dict[str, Any], **extra: Any) -> FunctionSpec:
    return FunctionSpec(
        name="convert_time",
        description="Convert a time.",
        parameters={"type": "object", "properties": properties, **extra},
    )


def test_a_strings_pattern_is_left_out_and_the_rest_kept() -> None:
    spec = _spec(
        {
            "time": {"type": "string", "pattern": TIME, "description": "The time and its place."},
            "places": {"type": "array", "items": {"type": "string", "pattern": "^[^0-9]*$"}},
            "when": {"anyOf": [{"type": "string", "pattern": TIME}, {"type": "null"}]},
            "pattern": {"type": "string"},
        },
        required=["time"],
    )
    shown = without_held_patterns(spec).parameters
    assert shown == {
        "type": "object",
        "properties": {
            "time": {"type": "string", "description": "The time and its place."},
            "places": {"type": "array", "items": {"type": "string"}},
            "when": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            # A parameter named "pattern" is a parameter, not the keyword.
            "pattern": {"type": "string"},
        },
        "required": ["time"],
    }
    assert spec.parameters["properties"]["time"]["pattern"] == TIME  # the spec is not changed


def test_patterns_the_grammar_does_not_hold_stay() -> None:
    spec = _spec(
        {
            # A string with a format is never copied.
            "day": {"type": "string", "format": "date", "pattern": "^2"},
            # Without a type, the grammar holds the value to any JSON value.
            "free": {"pattern": "^x"},
            "keys": {"type": "object", "patternProperties": {"^x": {"type": "integer"}}},
        }
    )
    assert without_held_patterns(spec) is spec


def test_the_embedded_model_reads_no_held_pattern(runtime: None, tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    spec = _spec({"time": {"type": "string", "pattern": TIME}}, required=["time"])
    request_functions = (spec,)
    shown: dict[bool, str] = {}
    for copying in (True, False):
        cls = LlamaCppAdapter.configured(LlamaCppSettings(copy_arguments=copying))
        adapter = cls(ProviderConfig(adapter="llamacpp", model=str(model)))
        request = ModelRequest(run_id="r", round=1, messages=(UserMessage("8 am Berlin in Tokyo"),))
        shown[copying] = adapter.conversation(request, request_functions)[0].content
        assert adapter.render_tools(request_functions) in shown[copying]
    assert "pattern" not in shown[True]
    assert TIME in shown[False]
