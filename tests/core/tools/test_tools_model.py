"""The Tool record, its policy and options, toolboxes, paging, truncation and lint."""

from __future__ import annotations

from typing import Annotated, Any

import attrs
import pytest

from toolwire import OfferRequest, TrustLevel, UserMessage
from toolwire.tools import (
    Activation,
    ArgumentsInvalid,
    FunctionSpec,
    Page,
    PageNumber,
    Paging,
    SideEffect,
    Tool,
    Toolbox,
    ToolContext,
    ToolDefinitionError,
    ToolPolicy,
    ToolResult,
    lint_tool,
    tool,
    truncate_result,
)


def test_importing_the_package_does_not_load_the_validator_or_converter():
    import subprocess
    import sys

    code = (
        "import sys, toolwire.tools as t\n"
        "@t.tool\n"
        "def f(x: int) -> int:\n"
        "    '''F.'''\n"
        "    return x\n"
        "print(sorted(m for m in ('cattrs', 'fastjsonschema', 'aiohttp', 'asyncio') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_every_field_of_a_tool():
    def resolver(t: Tool, request: OfferRequest) -> FunctionSpec | None:
        return None

    @tool(
        name="fetch_page",
        title="Fetch a page",
        description="Fetch one web page.",
        description_for_model="Fetch a web page and return its text.",
        strict=False,
        instructions="Cite the URL you fetched.",
        activation="context",
        resolver=resolver,
        side_effects=["network", SideEffect.READ_ONLY],
        idempotent=True,
        requires_approval=True,
        timeout=20,
        max_result_bytes=10_000,
        max_retries=2,
        sequential=True,
        allow_duplicates=True,
        sensitive_arguments=["cookie"],
        returns_untrusted_content=True,
        min_provider_trust="high",
    )
    def fetch(url: str, cookie: str = "") -> str:
        """Ignored docstring summary."""
        return url

    assert fetch.name == "fetch_page"
    assert fetch.title == "Fetch a page"
    assert fetch.description == "Fetch one web page."
    assert fetch.description_for_model == "Fetch a web page and return its text."
    assert fetch.strict is False
    assert fetch.instructions == "Cite the URL you fetched."
    assert fetch.activation is Activation.CONTEXT
    assert fetch.resolver is resolver
    assert fetch.policy == ToolPolicy(
        side_effects=frozenset({SideEffect.NETWORK, SideEffect.READ_ONLY}),
        idempotent=True,
        requires_approval=True,
        timeout=20,
        max_result_bytes=10_000,
        max_retries=2,
        sequential=True,
    )
    assert fetch.allow_duplicates is True
    assert fetch.sensitive_arguments == frozenset({"cookie"})
    assert fetch.returns_untrusted_content is True
    assert fetch.min_provider_trust == TrustLevel.HIGH
    assert fetch.external is False
    assert fetch.plugin is None


def test_defaults_of_a_tool():
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    assert ping.policy == ToolPolicy()
    assert ping.policy.side_effects is None
    assert ping.activation is Activation.SELECTED
    assert ping.strict is None
    assert ping.instructions is None
    assert ping.allow_duplicates is False
    assert ping.min_provider_trust is None


def test_policy_shortcuts_change_a_given_policy():
    base = ToolPolicy(side_effects=["destructive"], timeout=5)
    t = Tool.from_function(lambda: None, name="wipe", policy=base, requires_approval=True)
    assert t.policy.requires_approval is True
    assert t.policy.timeout == 5
    assert t.policy.side_effects == frozenset({SideEffect.DESTRUCTIVE})
    assert ToolPolicy(side_effects=["read_only"]).read_only


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"side_effects": ["teleports"]}, "unknown side effect 'teleports'; valid side effects"),
        ({"timeout": 0}, "timeout must be a positive number"),
        ({"max_result_bytes": -1}, "max_result_bytes must be a positive number"),
        ({"max_retries": -1}, "max_retries must be an integer >= 0"),
    ],
)
def test_policy_refusals(fields: dict[str, Any], fragment: str):
    with pytest.raises(ToolDefinitionError, match=fragment):
        ToolPolicy(**fields)


def test_option_refusals():
    def f(q: str) -> None:
        """F."""

    with pytest.raises(ToolDefinitionError, match="sensitive_arguments names qq, which the tool"):
        Tool.from_function(f, sensitive_arguments=["qq"])
    with pytest.raises(ToolDefinitionError, match="not the string 'q'"):
        Tool.from_function(f, sensitive_arguments="q")
    with pytest.raises(ToolDefinitionError, match="unknown activation 'sometimes'"):
        Tool.from_function(f, activation="sometimes")
    # A level name no scheme in use has is left to the host that registers the tool.
    with pytest.raises(ToolDefinitionError, match="min_provider_trust: unknown trust level"):
        Tool.from_function(f, min_provider_trust="very paranoid")
    with pytest.raises(ToolDefinitionError, match="parameter_descriptions names nope"):
        Tool.from_function(f, parameter_descriptions={"nope": "x"})
    with pytest.raises(ToolDefinitionError, match="already a tool"):
        Tool.from_function(tool(f))
    with pytest.raises(TypeError, match=r"write @tool\(name='x'\)"):
        tool("x")  # type: ignore[call-overload]


def test_function_spec_and_resolve():
    @tool(description_for_model="For the model.")
    def f(q: str) -> None:
        """For people."""

    spec = f.function_spec()
    assert spec == FunctionSpec(
        name="f",
        description="For the model.",
        parameters=f.parameters,
        parameter_order=("q",),
    )
    assert spec.tool is f
    request = OfferRequest(run_id="r", round=1, messages=(UserMessage("hi"),), api="x")
    assert f.resolve(request) is spec

    def only_with_urls(t: Tool, request: OfferRequest) -> FunctionSpec | None:
        text = " ".join(getattr(m, "text", "") for m in request.messages)
        return t.function_spec() if "http" in text else None

    @tool(activation=Activation.CONTEXT, resolver=only_with_urls)
    def read_page(url: str) -> str:
        """Read a page."""
        return url

    assert read_page.resolve(request) is None
    with_url = attrs.evolve(request, messages=(UserMessage("see https://example.org"),))
    resolved = read_page.resolve(with_url)
    assert resolved is not None
    assert resolved.name == "read_page"


async def test_evolve_keeps_the_implementation_and_identity_equality():
    @tool
    def f(q: str) -> str:
        """F."""
        return q.upper()

    g = attrs.evolve(f, plugin="demo")
    assert g.plugin == "demo"
    assert (await g.invoke({"q": "x"})).content == "X"
    assert g != f
    assert f == f
    assert len({f, g}) == 2


def test_tool_context_progress_and_validation():
    @tool
    def f() -> None:
        """F."""

    ctx = ToolContext(tool=f, call_id="c", run_id="r", round=1)
    ctx.report_progress("nothing listens")
    assert not ctx.is_cancelled
    with pytest.raises(ValueError, match="between 0 and 1"):
        ctx.report_progress("x", 1.5)


# -- toolboxes ---------------------------------------------------------------------------------


class Notes(Toolbox):
    """Notes kept in memory."""

    def __init__(self, notes: dict[str, str]) -> None:
        self.notes = notes

    def read_note(self, title: Annotated[str, "Title of the note."]) -> str:
        """Read one note."""
        return self.notes[title]

    @tool(requires_approval=True, side_effects=["writes_files"])
    def write_note(self, title: str, text: str, ctx: ToolContext) -> str:
        """Write a note."""
        self.notes[title] = text
        return f"saved by {ctx.call_id}"

    def _helper(self) -> None:
        """Private: never a tool."""

    @property
    def count(self) -> int:
        return len(self.notes)


class MoreNotes(Notes):
    def read_note(self, title: Annotated[str, "Title of the note."]) -> str:
        """Read one note, loudly."""
        return self.notes[title].upper()

    def list_notes(self) -> list[str]:
        """List the titles."""
        return sorted(self.notes)


class Marked(Toolbox):
    marked_only = True

    @tool
    def visible(self) -> str:
        """Visible."""
        return "yes"

    def plain(self) -> str:
        """Not marked."""
        return "no"


async def test_toolbox_methods_become_bound_tools():
    box = Notes({"a": "alpha"})
    tools = {t.name: t for t in box.tools()}
    assert list(tools) == ["read_note", "write_note"]
    read, write = tools["read_note"], tools["write_note"]
    assert read.parameters["properties"] == {
        "title": {"type": "string", "description": "Title of the note."}
    }
    assert write.policy.requires_approval is True
    assert list(write.parameters["properties"]) == ["title", "text"]
    assert (await read.invoke({"title": "a"})).content == "alpha"
    ctx = ToolContext(tool=write, call_id="c9", run_id="r", round=1)
    assert (await write.invoke({"title": "b", "text": "beta"}, ctx)).content == "saved by c9"
    assert box.notes["b"] == "beta"
    # Through an instance the decorated method is a bound tool, still callable like the method.
    assert box.write_note("c", "gamma", ctx) == "saved by c9"
    with pytest.raises(TypeError, match="call it on an instance"):
        Notes.write_note("c", "gamma", ctx)


async def test_toolbox_subclasses_override_and_add():
    box = MoreNotes({"a": "alpha"})
    tools = {t.name: t for t in box.tools()}
    assert list(tools) == ["write_note", "read_note", "list_notes"]
    assert (await tools["read_note"].invoke({"title": "a"})).content == "ALPHA"
    assert (await tools["list_notes"].invoke({})).data == ["a"]


def test_toolbox_marked_only_and_prefix():
    assert [t.name for t in Marked().tools()] == ["visible"]
    assert [t.name for t in Notes({}).tools(prefix="work_")] == [
        "work_read_note",
        "work_write_note",
    ]
    with pytest.raises(ToolDefinitionError, match="invalid tool name 'work read_note'"):
        Notes({}).tools(prefix="work ")
    assert [t.name for t in Notes({}).tools(prefix="work.")] == [
        "work.read_note",
        "work.write_note",
    ]


# -- paging ------------------------------------------------------------------------------------


def test_paging_slices_and_refuses_past_the_cap():
    paging = Paging(page_size=2, max_pages=3)
    items = list(range(10))
    assert paging.slice(items, 1) == Page(items=(0, 1), page=1, has_more=True)
    assert paging.slice(items, 3) == Page(items=(4, 5), page=3, has_more=False)
    with pytest.raises(ArgumentsInvalid) as info:
        paging.slice(items, 4)
    assert info.value.problems == (
        "page: got 4; the last page this tool serves is 3. Ask for a page from 1 to 3, or narrow "
        "the request.",
    )
    with pytest.raises(ArgumentsInvalid, match="pages start at 1"):
        paging.slice(items, 0)


def test_paging_refuses_a_page_past_the_end_naming_the_last_page():
    paging = Paging(page_size=4, max_pages=10)
    assert paging.slice([1, 2, 3, 4, 5], 2) == Page(items=(5,), page=2, has_more=False)
    with pytest.raises(ArgumentsInvalid, match="the last page is 2"):
        paging.slice([1, 2, 3, 4, 5], 3)
    assert paging.slice([], 1) == Page(items=(), page=1, has_more=False)


def test_paging_for_fetched_pages():
    paging = Paging(page_size=10, max_pages=2)
    assert paging.offset(2) == 10
    assert paging.page(1, ["a"], has_more=True).has_more is True
    assert paging.page(2, ["b"], has_more=True).has_more is False  # the cap is the last page
    with pytest.raises(ValueError, match="max_pages must be an integer >= 1"):
        Paging(max_pages=0)


async def test_a_paging_tool_end_to_end():
    paging = Paging(page_size=2, max_pages=2)

    @tool
    def letters(page: PageNumber = 1) -> Page[str]:
        """Letters, two per page."""
        return paging.slice("abcdef", page)

    assert (await letters.invoke({})).data == {"items": ["a", "b"], "page": 1, "has_more": True}
    assert (await letters.invoke({"page": 2})).data == {
        "items": ["c", "d"],
        "page": 2,
        "has_more": False,
    }
    refused = await letters.invoke({"page": 3})
    assert refused.content == (
        "Invalid arguments for tool letters: page: got 3; the last page this tool serves is 2. "
        "Ask for a page from 1 to 2, or narrow the request."
    )
    zero = await letters.invoke({"page": 0})
    assert "page: got 0; expected an integer >= 1" in (zero.content or "")


# -- truncation --------------------------------------------------------------------------------


def test_truncation_cuts_at_a_character_boundary_and_says_so():
    result = ToolResult.ok("é" * 100, artifacts={"raw": b"x" * 1000})
    cut = truncate_result(result, 120)
    text = cut.content or ""
    assert len(text.encode("utf-8")) <= 120
    assert text.startswith("é")
    assert "[Result truncated: showing the first" in text
    assert "of 200 bytes.]" in text
    assert cut.metadata["truncated"] is True
    assert cut.metadata["original_bytes"] == 200
    assert cut.artifacts == result.artifacts
    text.encode("utf-8").decode("utf-8")


def test_truncation_turns_big_data_into_cut_text_and_leaves_small_results_alone():
    small = ToolResult.ok("short")
    assert truncate_result(small, 100) is small
    big = ToolResult.ok(data={"rows": list(range(1000))})
    cut = truncate_result(big, 200)
    assert cut.data is None
    assert (cut.content or "").startswith('{"rows": [0, 1, 2')
    assert len((cut.content or "").encode()) <= 200
    with pytest.raises(ValueError, match="max_bytes must be positive"):
        truncate_result(small, 0)


# -- lint --------------------------------------------------------------------------------------


def test_lint_reports_authoring_mistakes():
    @tool
    def bare(q: str, limit: int | None = 5) -> None:
        pass

    codes = {(f.code, f.parameter) for f in lint_tool(bare)}
    assert ("missing-description", None) in codes
    assert ("parameter-without-description", "q") in codes
    assert ("null-means-default", "limit") in codes

    @tool(instructions="Prefer recent sources.")
    def shout(text: Annotated[str, "Text."]) -> str:
        """Shout the text. You must always call this before answering."""
        return text

    (finding,) = lint_tool(shout)
    assert finding.code == "instructions-in-description"
    assert "'You must'" in finding.message
    assert str(finding).startswith("warning: shout: the description tells the model")

    @tool
    def utc_now() -> str:
        """The current time, always in UTC."""
        return ""

    (absolute,) = lint_tool(utc_now)
    assert absolute.severity == "info"
    assert "'always'" in absolute.message


def test_lint_reports_unsafe_names_and_non_strict_schemas():
    t = Tool(
        name="get-Weather." + "x" * 60,
        description="Weather.",
        parameters={
            "type": "object",
            "properties": {"tags": {"type": "object", "description": "Free tags."}},
        },
    )
    findings = {f.code: f for f in lint_tool(t)}
    assert "breaks the name rule" in findings["unsafe-name"].message
    assert "providers accept at most 64" in findings["unsafe-name"].message
    assert findings["unsafe-name"].severity == "warning"
    dotted = Tool(name="math.factorial", description="Factorial.")
    alias, style = lint_tool(dotted)
    assert alias.severity == "info"
    assert "under an alias" in alias.message
    assert (style.code, style.severity) == ("not-snake-case", "warning")
    assert "rename it 'math_factorial'" in style.message
    assert "open dict" in findings["not-strict-compatible"].message
    assert findings["not-strict-compatible"].severity == "info"
    hyphen = Tool(name="get-weather", description="Weather.")
    finding, _ = lint_tool(hyphen)
    assert "ptype" in finding.message


def test_lint_is_quiet_for_a_well_written_tool():
    @tool
    def forecast(city: Annotated[str, "City name, e.g. Lyon."], days: int = 3) -> str:
        """Weather forecast for a city.

        Args:
            days: Days ahead, 1 to 7.
        """
        return city

    assert lint_tool(forecast) == []


def test_lint_warns_of_names_that_are_not_lower_case_snake_case():
    for name, suggestion in (("GetWeather", "get_weather"), ("getWeather", "get_weather")):
        (finding,) = lint_tool(Tool(name=name, description="Weather."))
        assert (finding.code, finding.severity) == ("not-snake-case", "warning")
        assert f"rename it {suggestion!r}" in finding.message
    assert lint_tool(Tool(name="get_weather", description="Weather.")) == []


def test_inline_is_a_policy_shortcut_and_off_by_default():
    @tool(inline=True)
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert add.policy == ToolPolicy(inline=True)
    assert not ToolPolicy().inline
    assert Tool.from_schema(
        "echo", "Echo.", {"type": "object"}, lambda a: a, inline=True
    ).policy.inline


async def _later() -> None:
    """Async."""


def _now() -> None:
    """Sync."""


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda: tool(inline=True, timeout=5)(_now), "cannot be stopped at its timeout (5 s)"),
        (lambda: Tool.from_function(_now, policy=ToolPolicy(inline=True, timeout=0.5)), "(0.5 s)"),
        (lambda: tool(inline=True)(_later), "its function is async"),
        (
            lambda: Tool.from_schema("ext", "E.", {"type": "object"}, external=True, inline=True),
            "an external tool is run by the caller",
        ),
        (
            lambda: attrs.evolve(
                tool(inline=True)(_now), policy=ToolPolicy(inline=True, timeout=1)
            ),
            "cannot be stopped at its timeout",
        ),
    ],
    ids=["timeout", "policy-timeout", "async", "external", "evolved"],
)
def test_inline_is_refused_where_it_cannot_hold(make: Any, problem: str):
    with pytest.raises(ToolDefinitionError, match="inline applies to a sync function") as refused:
        make()
    assert problem in str(refused.value)
