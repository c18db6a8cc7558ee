"""Toolsets: combined, filtered, prefixed, renamed, approval-required and external."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

import pytest

import toolwire
from toolwire import Config, Host, Tool
from toolwire.tools import ToolDefinitionError
from toolwire.toolsets import Toolset, combined, external, toolset


@toolwire.tool
def search_notes(query: Annotated[str, "What to look for."]) -> str:
    """Search the notes."""
    return f"found {query}"


@toolwire.tool
def delete_note(title: Annotated[str, "The note to delete."]) -> str:
    """Delete one note."""
    return f"deleted {title}"


@toolwire.tool
def calculator(expression: Annotated[str, "An arithmetic expression."]) -> str:
    """Work out arithmetic."""
    return expression


class Growing(Toolset):
    """A source whose tools change between calls, as an MCP server's do."""

    def __init__(self) -> None:
        self.current: dict[str, Tool] = {"search_notes": search_notes}

    def tools(self) -> Mapping[str, Tool]:
        return self.current


def test_filtered_include_exclude_and_predicate():
    notes = toolset([search_notes, delete_note, calculator])
    assert list(notes.filtered(include=["search_notes", "delete_note"]).tools()) == [
        "delete_note",
        "search_notes",
    ]
    assert list(notes.filtered(include=["delete_note"], exclude=["delete_note"]).tools()) == []
    assert list(notes.filtered(lambda t: "note" in t.name).tools()) == [
        "delete_note",
        "search_notes",
    ]


def test_prefixed_and_renamed_tools_keep_their_function():
    notes = toolset([search_notes]).prefixed("notes_")
    tool = notes.tools()["notes_search_notes"]
    assert tool.name == "notes_search_notes"
    assert tool.function_spec().name == "notes_search_notes"
    assert tool("x") == "found x"
    renamed = notes.renamed({"find": "notes_search_notes"})
    assert list(renamed.tools()) == ["find"]
    assert renamed.tools()["find"].parameters == search_notes.parameters


def test_empty_prefix_is_no_prefix():
    assert list(toolset([search_notes]).prefixed("").tools()) == ["search_notes"]


def test_prefix_that_makes_a_bad_name_is_refused():
    with pytest.raises(ToolDefinitionError, match="notes/search_notes"):
        toolset([search_notes]).prefixed("notes/").tools()


def test_renaming_onto_a_kept_name_is_refused():
    both = toolset([search_notes, delete_note]).renamed({"delete_note": "search_notes"})
    with pytest.raises(ToolDefinitionError, match="two tools the name 'delete_note'"):
        both.tools()


def test_approval_required_by_name_or_all():
    notes = toolset([search_notes, delete_note])
    some = notes.approval_required(["delete_note"]).tools()
    assert some["delete_note"].policy.requires_approval
    assert not some["search_notes"].policy.requires_approval
    every = notes.approval_required().tools()
    assert all(t.policy.requires_approval for t in every.values())


def test_combined_refuses_a_name_offered_twice_naming_both():
    first = toolset([search_notes])
    second = toolset([search_notes])
    with pytest.raises(ToolDefinitionError, match="offered by two toolsets"):
        combined(first, second).tools()
    assert list(combined(first, second.prefixed("more_")).tools()) == [
        "more_search_notes",
        "search_notes",
    ]


def test_a_static_toolset_refuses_what_is_not_a_tool():
    with pytest.raises(ToolDefinitionError, match=r"toolwire\.Tool objects; got .calculator."):
        toolset(["calculator"])  # type: ignore[list-item]


def test_wrappers_see_a_changed_source():
    source = Growing()
    view = source.prefixed("n_").filtered(exclude=["n_delete_note"])
    assert list(view.tools()) == ["n_search_notes"]
    source.current = {"delete_note": delete_note, "calculator": calculator}
    assert list(view.tools()) == ["n_calculator"]


def test_external_tools_defer_to_the_caller():
    ext = external(
        [
            {
                "name": "pick_file",
                "description": "Ask the user for a file.",
                "parameters": {"type": "object", "properties": {"kind": {"type": "string"}}},
            }
        ]
    )
    tool = ext.tools()["pick_file"]
    assert tool.external
    with pytest.raises(ToolDefinitionError, match="keys are name"):
        external([{"title": "x"}])


async def test_external_toolset_in_a_run_ends_deferred():
    from toolwire import ToolCallingLoop
    from toolwire.testing import ScriptedModel, tool_call

    ext = external([{"name": "pick_file", "description": "Ask the user for a file."}])
    host = Host.load(Config())
    for tool in ext.prefixed("ui_").tools().values():
        host.add_tool(tool)
    model = ScriptedModel(script=[tool_call("ui_pick_file", {}), "done"])
    async with host:
        run = await ToolCallingLoop(host, adapter=model).run("choose a file")
    assert [d.tool for d in run.deferred] == ["ui_pick_file"]
