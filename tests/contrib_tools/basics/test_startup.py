"""Building the basics tools (what ``toolwire tools list`` does) compiles no pattern of the
package and imports nothing a call needs: the patterns, tables and modules come on first use."""

from __future__ import annotations

from startup_probe import build_tools


def test_building_the_tools_compiles_no_pattern_and_imports_no_call_machinery() -> None:
    found = build_tools(
        "toolwire_basics",
        (
            "difflib",
            "zoneinfo",
            "uuid",
            "toolwire.messages",
            "toolwire_basics._calculator",
            "toolwire_basics._clock",
            "toolwire_basics._units",
            "toolwire_basics._words",
        ),
    )
    assert found["tools"] == ["calculator", "current_time", "convert_time", "convert_units"]
    assert found["compiled"] == []
    assert found["modules"] == []
