"""The python and typescript dialects: catalogue, reading, writing and refusals."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prompted_support import FETCH, FUNCTIONS, SEARCH, ids

from toolwire.prompted import parse_tool_calls, render_prompted_tools
from toolwire.prompted._render import render_call
from toolwire.prompted._typescript import MAX_CHARS, MAX_DEPTH, read_call
from toolwire.tools import FunctionSpec

OPEN = FunctionSpec(
    name="configure",
    description="Set options.",
    parameters={
        "type": "object",
        "properties": {"mode": {"type": "string"}},
        "additionalProperties": {"type": "integer"},
    },
    parameter_order=("mode",),
)


def _one(text: str, dialect: str, functions: tuple[FunctionSpec, ...] = FUNCTIONS) -> Any:
    parsed = parse_tool_calls(text, functions, dialect, new_id=ids)  # type: ignore[arg-type]
    assert len(parsed.calls) == 1, parsed
    return parsed.calls[0]


def test_the_catalogue_reads_like_python_and_typescript_signatures() -> None:
    python = render_prompted_tools((SEARCH,), "python")
    assert "search(query: str, limit: int = 5, fresh?: bool, site?: str | None" in python
    assert "as a Python function call:\nTOOL_NAME('value', 5, PARAMETER=True)" in python
    typescript = render_prompted_tools((SEARCH, OPEN), "typescript")
    assert (
        "search(query: string, limit?: number, fresh?: boolean, site?: string | null, "
        "filters?: {lang?: string, year?: number}, tags?: string[]): "
        "Search the web for pages about a topic.\n"
        "  query: What to look for.\n"
        "  limit: How many results to return. integer, 1..20, default 5\n"
    ) in typescript
    assert "configure(mode?: string, other?: {[key: string]: number})" in typescript
    assert "write undefined for a parameter you leave out" in typescript


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ('search("q")', {"query": "q"}),
        ("search('q', 3)", {"query": "q", "limit": 3}),
        ("search(`multi\nline`, undefined, true)", {"query": "multi\nline", "fresh": True}),
        ('search("q", undefined, false, null,)', {"query": "q", "fresh": False, "site": None}),
        ("search('it\\'s', 1_000)", {"query": "it's", "limit": 1000}),
        ('search("\\u{1F680} \\uD83D\\uDE80 \\x41\\t")', {"query": "🚀 🚀 A\t"}),
        ('search("a\\\nb")', {"query": "ab"}),
        ("search(`$5 and \\${x}`)", {"query": "$5 and ${x}"}),
        ("search(`a\r\nb`)", {"query": "a\nb"}),
        (
            'search("q", -2.5e1, undefined, undefined, {lang: "en", "year": 0x7E4,})',
            {"query": "q", "limit": -25.0, "filters": {"lang": "en", "year": 2020}},
        ),
        ('search("q", undefined, undefined, undefined, undefined, [`a`, "b",])', None),
        ('  search ( "q" ) ;', {"query": "q"}),
        ("fetch(.5)", {"url": 0.5}),
    ],
)
def test_typescript_calls_are_read(text: str, arguments: dict[str, Any] | None) -> None:
    call = _one(text, "typescript")
    assert call.invalid_reason is None, call.invalid_reason
    if arguments is None:
        arguments = {"query": "q", "tags": ["a", "b"]}
    assert call.arguments == arguments


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('search("q", 5, True)', "True is not a TypeScript value; write true"),
        ("search(q)", 'q is not a value; put text in quotes: "q"'),
        ('search("a" + "b")', "expected ',' or ')' in the call of search"),
        ("search(`x ${y}`)", "${…} is not accepted"),
        ('search("q", NaN)', "NaN is not a JSON value"),
        ('search("q", 5n)', "BigInt literals are not accepted"),
        ('search("q", 012)', "a number does not start with 0"),
        ('search("q",, 5)', "an empty argument; write undefined"),
        ('search("q", undefined, undefined, undefined, {lang: undefined})', "undefined is only"),
        ('search("q", undefined, undefined, undefined, {lang: "a", lang: "b"})', "appears twice"),
        ('search("q", undefined, undefined, undefined, {lang})', "has no value"),
        ('search("q", undefined, undefined, undefined, {[k]: 1})', "computed keys"),
        ('search("q", undefined, undefined, undefined, {...x})', "spreads are not accepted"),
        ('search("q", undefined, undefined, undefined, undefined, [1,,2])', "an empty place"),
        ('search("q", fn())', "is a call; only literal values"),
        ('search("\\1")', "octal escapes"),
        ('search(/* the query */ "q")', "comments are not accepted"),
        ("search(1, 2, 3, 4, 5, 6, 7, 8)", "search takes 6 arguments"),
        ('search("q", undefined, undefined, undefined, undefined, undefined, {query: "x"})', None),
    ],
)
def test_typescript_refusals_say_what_to_write(text: str, reason: str | None) -> None:
    call = _one(text, "typescript")
    assert call.arguments is None
    assert call.raw_arguments == text.strip()
    expected = reason or "'query' is a parameter of search; give it in its place"
    assert expected in (call.invalid_reason or ""), call.invalid_reason


def test_typescript_errors_say_where() -> None:
    found = read_call("search('open\nquery')", lambda name: ("query",))
    assert found.reason == (
        "not a valid call: a string in ' quotes cannot span lines; write \\n or use "
        "`back quotes` (line 1, column 13 at the end of the line)"
    )


def test_further_named_arguments_come_as_one_object_after_the_parameters() -> None:
    arguments = {"mode": "fast", "depth": 3, "two words": 1}
    text = render_call("configure", arguments, "typescript", OPEN)
    assert text == 'configure("fast", {depth: 3, "two words": 1})'
    assert _one(text, "typescript", (OPEN,)).arguments == arguments
    assert render_call("configure", {"depth": 3}, "typescript", OPEN) == (
        "configure(undefined, {depth: 3})"
    )


def test_a_tool_without_a_known_order_takes_one_object() -> None:
    # The history of a tool no longer offered is written as one object of named arguments.
    assert render_call("gone", {"a": 1, "b": [True]}, "typescript") == "gone({a: 1, b: [true]})"


def test_typescript_nesting_and_size_are_bounded() -> None:
    deep = "search(" + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + ")"
    call = _one(deep, "typescript")
    assert f"nest deeper than {MAX_DEPTH} levels" in (call.invalid_reason or "")
    fine = "search(" + "[" * MAX_DEPTH + "]" * MAX_DEPTH + ")"
    assert _one(fine, "typescript").invalid_reason is None
    huge = 'search("' + "x" * MAX_CHARS + '")'
    assert f"longer than {MAX_CHARS} characters" in (_one(huge, "typescript").invalid_reason or "")


def test_python_calls_use_python_literals_and_quoting() -> None:
    arguments = {"query": 'say "hi"', "fresh": True, "site": None, "filters": {"lang": "en"}}
    text = render_call("search", arguments, "python", SEARCH)
    assert text == "search('say \"hi\"', fresh=True, site=None, filters={'lang': 'en'})"
    assert _one(text, "python").arguments == arguments
    refused = _one('search("q", fresh=true)', "python")
    assert refused.invalid_reason == "true is not a Python value; write True"
    assert _one("search('q', limit=None)", "python").arguments == {"query": "q", "limit": None}
    listed = parse_tool_calls("[search('a'), fetch('u')]", FUNCTIONS, "python", new_id=ids)
    assert [c.arguments for c in listed.calls] == [{"query": "a"}, {"url": "u"}]


def test_python_writes_names_python_would_change_as_a_spread() -> None:
    # Python reads identifiers in NFKC form: "ﬁle" would arrive as "file".
    function = FunctionSpec(
        name="put",
        description="",
        parameters={"type": "object", "properties": {"to": {}, "ﬁle": {"type": "string"}}},
        parameter_order=("to", "ﬁle"),
    )
    text = render_call("put", {"ﬁle": "a"}, "python", function)
    assert text == "put(**{'ﬁle': 'a'})"
    assert _one(text, "python", (function,)).arguments == {"ﬁle": "a"}


@pytest.mark.parametrize("dialect", ["python", "typescript"])
def test_a_mention_in_prose_is_no_call(dialect: str) -> None:
    text = "You could run search('x') yourself, or fetch(`u`) later."
    assert parse_tool_calls(text, FUNCTIONS, dialect).calls == ()  # type: ignore[arg-type]


@pytest.mark.parametrize("dialect", ["python", "typescript"])
def test_a_tool_call_block_is_read_in_the_tools_dialect(dialect: str) -> None:
    body = "fetch('u')" if dialect == "python" else "fetch(`u`)"
    call = _one(f"<tool_call>{body}</tool_call>", dialect, (FETCH,))
    assert call.arguments == {"url": "u"}


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(
            ["search(", "(", ")", "[", "]", "{", "}", "'", '"', "`", "\\", "${", ",", ":",
             "undefined", "true", "-", ".", "0x", "1", "e", "_", "u{", "\n", "\r", " ", "a", "é"]
        ),
        max_size=30,
    ).map("".join)
)  # fmt: skip
def test_the_typescript_reader_never_raises(text: str) -> None:
    found = read_call("search(" + text, lambda name: ("query", "limit"))
    assert (found.arguments is None) == (found.reason is not None)
    for call in parse_tool_calls(text, FUNCTIONS, "typescript").calls:
        assert call.is_valid or (call.raw_arguments is not None and call.invalid_reason)
