"""Strict tool use on the Messages API: opted in per tool, only for schemas in the subset."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire import FunctionSpec
from toolwire.adapters import ModelRequest
from toolwire.config import ProviderConfig
from toolwire.messages import UserMessage
from toolwire_anthropic import AnthropicMessagesAdapter, render_messages_request
from toolwire_anthropic._strict import strict_problems

FITS = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
    "additionalProperties": False,
}


def spec(name: str, strict: bool | None, parameters: dict[str, Any] = FITS) -> FunctionSpec:
    return FunctionSpec(name=name, description="d", parameters=parameters, strict=strict)


def tools_sent(config: ProviderConfig, *functions: FunctionSpec) -> dict[str, bool]:
    request = ModelRequest(run_id="r", round=1, messages=(UserMessage("hi"),), functions=functions)
    body = render_messages_request(request, config)
    return {tool["name"]: tool.get("strict", False) for tool in body["tools"]}


def test_on_anthropics_api_only_tools_declared_strict_go_out_strict() -> None:
    config = ProviderConfig(model="claude-sonnet-4-5")
    sent = tools_sent(config, spec("declared", True), spec("unset", None), spec("off", False))
    assert sent == {"declared": True, "unset": False, "off": False}


def test_a_compatible_host_gets_no_strict_field_unless_asked() -> None:
    proxy = ProviderConfig(model="m", base_url="http://127.0.0.1:9/")
    assert tools_sent(proxy, spec("declared", True)) == {"declared": False}
    everything = ProviderConfig(
        model="m", base_url="http://127.0.0.1:9/", enforces_strict_tool_schemas=True
    )
    sent = tools_sent(everything, spec("declared", True), spec("unset", None), spec("off", False))
    assert sent == {"declared": True, "unset": True, "off": False}
    never = ProviderConfig(model="claude-sonnet-4-5", enforces_strict_tool_schemas=False)
    assert tools_sent(never, spec("declared", True)) == {"declared": False}


def test_a_schema_outside_the_subset_is_sent_as_written_without_strict() -> None:
    bounded = {**FITS, "properties": {"days": {"type": "integer", "minimum": 1}}, "required": []}
    config = ProviderConfig(model="claude-sonnet-4-5")
    assert tools_sent(config, spec("bounded", True, bounded)) == {"bounded": False}


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object", "properties": {}}, "additionalProperties: false"),
        (
            {**FITS, "properties": {"n": {"type": "string", "maxLength": 5}}},
            "'maxLength' is not supported",
        ),
        (
            {**FITS, "properties": {"xs": {"type": "array", "minItems": 2}}},
            "minItems other than 0 or 1",
        ),
        (
            {
                **FITS,
                "properties": {"node": {"$ref": "#/$defs/Node"}},
                "$defs": {
                    "Node": {
                        "type": "object",
                        "properties": {"next": {"$ref": "#/$defs/Node"}},
                        "additionalProperties": False,
                    }
                },
            },
            "recursive $ref",
        ),
        (
            {**FITS, "properties": {"x": {"$ref": "https://example.invalid/s.json"}}},
            "not a local definition",
        ),
        ({**FITS, "properties": {"c": {"enum": [{"a": 1}]}}}, "enum of objects"),
    ],
)
def test_strict_problems_name_what_falls_outside(schema: dict[str, Any], problem: str) -> None:
    problems = strict_problems(schema)
    assert any(problem in p for p in problems), problems


def test_the_subset_accepts_what_tools_usually_declare() -> None:
    schema = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time"},
            "unit": {"enum": ["c", "f"]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "where": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "point": {"$ref": "#/$defs/Point"},
        },
        "required": ["when"],
        "additionalProperties": False,
        "$defs": {
            "Point": {
                "type": "object",
                "properties": {"x": {"type": "number"}},
                "additionalProperties": False,
            }
        },
    }
    assert strict_problems(schema) == []


def test_tools_show_wire_renders_what_is_sent() -> None:
    adapter = AnthropicMessagesAdapter(ProviderConfig(model="claude-sonnet-4-5"))
    [tool] = adapter.render_tools((spec("declared", True),))
    assert tool["strict"] is True
