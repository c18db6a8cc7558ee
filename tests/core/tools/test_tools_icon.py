"""A tool's optional icon: carried for user interfaces, checked, never sent to a model."""

from __future__ import annotations

import json

import pytest

from toolwire import Tool, tool
from toolwire.tools import ToolDefinitionError


def test_an_icon_is_kept_on_function_and_schema_tools_and_left_out_of_the_spec():
    @tool(icon="🔍", title="Search")
    def search(query: str) -> str:
        """Search.

        Args:
            query: What to look for.
        """
        return query

    schema_tool = Tool.from_schema(
        "lookup", "Look up.", {"type": "object", "properties": {}}, lambda a: "x", icon="📖"
    )
    assert search.icon == "🔍"
    assert schema_tool.icon == "📖"
    assert "🔍" not in json.dumps(search.function_spec().parameters, ensure_ascii=False)
    assert "🔍" not in search.function_spec().description


@pytest.mark.parametrize("icon", ["", "   ", "x" * 17, "a\nb", 5])
def test_a_bad_icon_is_refused_naming_the_value(icon: object):
    with pytest.raises(ToolDefinitionError, match="tool icon") as info:
        Tool.from_schema(
            "lookup",
            "Look up.",
            {"type": "object"},
            lambda a: "x",
            icon=icon,  # type: ignore[arg-type]
        )
    assert repr(icon) in str(info.value)
