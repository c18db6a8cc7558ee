"""ToolOptions: one record for the options of @tool, Tool.from_function and Tool.from_schema."""

from __future__ import annotations

import re
from typing import Any

import attrs
import pytest

from toolwire import TrustLevel
from toolwire.tools import (
    SideEffect,
    Tool,
    ToolDefinitionError,
    ToolOptions,
    ToolPolicy,
    tool,
)

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def read(path: str) -> str:
    """Read a file."""
    return path


def _fields(made: Tool) -> dict[str, Any]:
    return {a.name: getattr(made, a.name) for a in attrs.fields(Tool) if a.name[0] != "_"}


OPTIONS: dict[str, Any] = {
    "title": "Read",
    "icon": "📄",
    "description_for_model": "Reads.",
    "strict": False,
    "instructions": "Read before writing.",
    "activation": "selected",
    "policy": ToolPolicy(timeout=5),
    "side_effects": ["reads_files"],
    "requires_approval": True,
    "max_retries": 2,
    "allow_duplicates": True,
    "sensitive_arguments": ["path"],
    "returns_untrusted_content": True,
    "min_provider_trust": "high",
    "requires": ["write"],
    "path_arguments": ["path"],
    "background_safe": False,
    "plugin": "files",
}


def test_every_option_is_documented_on_the_record() -> None:
    doc = ToolOptions.__doc__ or ""
    missing = [a.name for a in attrs.fields(ToolOptions) if f"``{a.name}``" not in doc]
    assert missing == []


def test_options_given_whole_or_as_keywords_make_the_same_tool() -> None:
    by_keywords = _fields(Tool.from_function(read, **OPTIONS))
    assert by_keywords == _fields(Tool.from_function(read, ToolOptions(**OPTIONS)))
    assert by_keywords == _fields(tool(options=ToolOptions(**OPTIONS))(read))
    assert by_keywords == _fields(tool(**OPTIONS)(read))
    assert by_keywords["policy"] == ToolPolicy(
        timeout=5,
        side_effects=frozenset({SideEffect.READS_FILES}),
        requires_approval=True,
        max_retries=2,
    )
    assert by_keywords["min_provider_trust"] == TrustLevel.parse("high")
    assert by_keywords["sensitive_arguments"] == frozenset({"path"})
    assert by_keywords["requires"] == ("write",)
    schema = _fields(Tool.from_schema("read", "Read a file.", SCHEMA, read, **OPTIONS))
    assert schema == _fields(
        Tool.from_schema("read", "Read a file.", SCHEMA, read, ToolOptions(**OPTIONS))
    )
    different = {"_runner", "parameters", "schema_notes"}
    assert {k: v for k, v in schema.items() if k not in different} == {
        k: v for k, v in by_keywords.items() if k not in different
    }


def test_keywords_beside_the_record_change_its_fields() -> None:
    options = ToolOptions(title="Read", requires_approval=True)
    made = Tool.from_function(read, options, title="Open", timeout=3)
    assert (made.title, made.policy.requires_approval, made.policy.timeout) == ("Open", True, 3)
    assert options.title == "Read"  # the record is not changed


def test_a_keyword_that_is_no_option_is_refused_with_the_options() -> None:
    with pytest.raises(TypeError, match=re.escape("'requires_aproval' is not a tool option")):
        Tool.from_function(read, requires_aproval=True)
    with pytest.raises(TypeError, match="the options: activation, allow_duplicates"):
        Tool.from_schema("read", "Read a file.", SCHEMA, read, colour="red")
    with pytest.raises(TypeError, match="is not a tool option"):
        tool(requires_aproval=True)(read)


def test_the_record_checks_its_values_when_made() -> None:
    with pytest.raises(ToolDefinitionError, match="unknown activation 'sometimes'"):
        ToolOptions(activation="sometimes")
    with pytest.raises(ToolDefinitionError, match="not the string 'path'"):
        ToolOptions(sensitive_arguments="path")
    with pytest.raises(ToolDefinitionError, match="sensitive_arguments names secret"):
        Tool.from_function(read, ToolOptions(sensitive_arguments=["secret"]))
