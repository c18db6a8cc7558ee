"""A tool's ``requires``: selecting it selects the tools it needs; a required tool that cannot be
had (not registered, denied, hidden) leaves the requiring tool out, with the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest
from loop_support import make_host, scripted_loop

import toolwire
from toolwire.config import ProfileConfig, ToolsConfig, config_from_dict
from toolwire.loop import Selection
from toolwire.tools import ToolDefinitionError


def _make(name: str, **options: Any) -> toolwire.Tool:
    def body(text: Annotated[str, "Any text."]) -> str:
        return text

    body.__doc__ = f"The {name} tool."
    return toolwire.tool(name=name, **options)(body)


READER = _make("reader")
FINDER = _make("finder", requires=["reader"])
INDEX = _make("index", requires=["finder"])
ORPHAN = _make("orphan", requires=["nowhere"])
OTHER = _make("other")
TOOLS = {t.name: t for t in (READER, FINDER, INDEX, ORPHAN, OTHER)}


def _offered(data: dict[str, Any], tools: tuple[str, ...] | None = None) -> list[str]:
    selection = Selection.from_config(config_from_dict(data), tools, None)
    return [t.name for t in selection.candidates(TOOLS)]


def _reasons(data: dict[str, Any]) -> dict[str, str | None]:
    selection = Selection.from_config(config_from_dict(data), None, None, TOOLS)
    return {name: selection.reason(tool) for name, tool in TOOLS.items()}


def test_selecting_a_tool_selects_the_tools_it_requires() -> None:
    assert _offered({"tools": {"enable": ["finder"]}}) == ["finder", "reader"]
    assert _offered({}, tools=("index",)) == ["finder", "index", "reader"]  # transitively
    assert _offered({"tools": {"enable": ["reader"]}}) == ["reader"]  # never the other way
    # past the allow lists of a profile and a surface too
    data = {"tools": {"profile": "p"}, "profiles": {"p": {"allow": ["finder"]}}}
    assert _offered(data) == ["finder", "reader"]
    assert _reasons(data)["reader"] is None
    assert _reasons(data)["other"] == "it is not in the profile's allow list"


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (
            {"tools": {"enable": ["finder"], "deny": ["reader"]}},
            "it requires the tool reader, which is denied ([tools] deny, or the profile's deny "
            "list, names it)",
        ),
        (
            {"tools": {"enable": ["finder"], "exposure": {"reader": "hidden"}}},
            "it requires the tool reader, which is hidden ([tools.exposure])",
        ),
    ],
)
def test_a_required_tool_that_is_denied_or_hidden_leaves_the_requiring_tool_out(
    data: dict[str, Any], why: str
) -> None:
    assert _offered(data) == []
    reasons = _reasons(data)
    assert reasons["finder"] == why
    assert reasons["reader"] is not None  # deny wins over the requirement


def test_a_required_tool_that_is_not_registered_leaves_the_requiring_tool_out() -> None:
    assert _offered({"tools": {"enable": ["orphan", "other"]}}) == ["other"]
    assert _reasons({"tools": {"enable": ["orphan"]}})["orphan"] == (
        "it requires the tool nowhere, which is not registered (no enabled plugin provides it)"
    )


def test_a_refusal_reaches_every_tool_that_requires_the_refused_one() -> None:
    data = {"tools": {"enable": ["index"], "deny": ["reader"]}}
    assert _offered(data) == []
    reasons = _reasons(data)
    assert reasons["finder"] is not None
    left_out = f"it requires the tool finder, which is left out: {reasons['finder']}"
    assert reasons["index"] == left_out


def test_requires_is_a_list_of_names() -> None:
    with pytest.raises(ToolDefinitionError, match="as a list of names"):
        _make("bad", requires="reader")
    with pytest.raises(ToolDefinitionError, match="is not a tool name"):
        _make("bad", requires=[""])
    assert _make("dup", requires=["a", "b", "a"]).requires == ("a", "b")


async def test_a_run_offers_the_required_tools_and_the_host_says_what_it_left_out(
    tmp_path: Path,
) -> None:
    host = make_host(tmp_path, TOOLS.values(), tools_config=ToolsConfig(enable=("finder",)))
    try:
        assert host.offer_notice is None
        loop, model = scripted_loop(host, ["done"])
        await loop.run("go")
        assert [f.name for f in model.requests[0].functions] == ["finder", "reader"]
        assert await host.why_not_offered("reader") is None
    finally:
        await host.aclose()

    host = make_host(
        tmp_path,
        TOOLS.values(),
        tools_config=ToolsConfig(enable=("finder", "orphan", "other"), deny=("reader",)),
        profiles={"p": ProfileConfig()},
    )
    try:
        assert host.offer_notice == (
            "toolwire: finder is not offered: it requires the tool reader, which is denied "
            "([tools] deny, or the profile's deny list, names it).\n"
            "toolwire: orphan is not offered: it requires the tool nowhere, which is not "
            "registered (no enabled plugin provides it)."
        )
        why = await host.why_not_offered("finder")
        assert why is not None
        assert "requires the tool reader" in why
        loop, model = scripted_loop(host, ["done"])
        await loop.run("go")
        assert [f.name for f in model.requests[0].functions] == ["other"]
    finally:
        await host.aclose()
