"""A corpus of what small models really write, read by each dialect's parser."""

from __future__ import annotations

from typing import Any

import pytest
from prompted_support import FUNCTIONS, ids

from toolwire.prompted import Dialect, parse_tool_calls

Valid = tuple[str, dict[str, Any]]
Invalid = tuple[str, None, str]  # name, None, a fragment of the reason
Expected = list[Valid | Invalid]

CORPUS: list[tuple[str, Dialect, str, Expected, str]] = [
    # id, dialect, model output, expected calls, expected visible text
    (
        "json: chatter around one call",
        "json",
        'I will search for that.\n<tool_call>\n{"name": "search", "arguments": {"query": '
        '"rust agents", "limit": 3}}\n</tool_call>\nLet me know if you need more.',
        [("search", {"query": "rust agents", "limit": 3})],
        "I will search for that.\nLet me know if you need more.",
    ),
    (
        "json: two calls in one turn",
        "json",
        '<tool_call>{"name": "search", "arguments": {"query": "a"}}</tool_call>\n'
        '<tool_call>{"name": "fetch", "arguments": {"url": "https://b.example"}}</tool_call>',
        [("search", {"query": "a"}), ("fetch", {"url": "https://b.example"})],
        "",
    ),
    (
        "json: code fence around the call",
        "json",
        'Here:\n```json\n<tool_call>\n{"name": "fetch", "arguments": {"url": "https://x.example"}}'
        "\n</tool_call>\n```\nDone.",
        [("fetch", {"url": "https://x.example"})],
        "Here:\nDone.",
    ),
    (
        "json: code fence inside the tag",
        "json",
        '<tool_call>\n```json\n{"name": "search", "arguments": {"query": "fenced"}}\n```\n'
        "</tool_call>",
        [("search", {"query": "fenced"})],
        "",
    ),
    (
        "json: a fenced object without tags",
        "json",
        'Calling:\n```json\n{"name": "search", "arguments": {"query": "bare"}}\n```',
        [("search", {"query": "bare"})],
        "Calling:",
    ),
    (
        "json: a fenced object that is not a call stays text",
        "json",
        'Example config:\n```json\n{"name": "my-app", "version": 2}\n```',
        [],
        'Example config:\n```json\n{"name": "my-app", "version": 2}\n```',
    ),
    (
        "json: single quotes and trailing commas",
        "json",
        "<tool_call>{'name': 'search', 'arguments': {'query': 'it\\'s late', 'tags': ['x',],},}"
        "</tool_call>",
        [("search", {"query": "it's late", "tags": ["x"]})],
        "",
    ),
    (
        "json: unclosed final tag",
        "json",
        'Searching now.\n<tool_call>\n{"name": "search", "arguments": {"query": "unclosed"}}',
        [("search", {"query": "unclosed"})],
        "Searching now.",
    ),
    (
        "json: output cut inside the arguments",
        "json",
        '<tool_call>{"name": "search", "arguments": {"query": "cut sho',
        [("search", None, "not a valid JSON object")],
        "",
    ),
    (
        "json: escaped quotes and unicode",
        "json",
        '<tool_call>{"name": "search", "arguments": {"query": "say \\"héllo\\" to 東京 🚀"}}'
        "</tool_call>",
        [("search", {"query": 'say "héllo" to 東京 🚀'})],
        "",
    ),
    (
        "json: a closing tag inside a string value",
        "json",
        '<tool_call>{"name": "search", "arguments": {"query": "a </tool_call> b"}}</tool_call>'
        "\nafter",
        [("search", {"query": "a </tool_call> b"})],
        "after",
    ),
    (
        "json: calls inside think are ignored",
        "json",
        '<think>Maybe <tool_call>{"name": "fetch", "arguments": {"url": "u"}}</tool_call>? '
        "No.</think>\nThe answer is 4.",
        [],
        "The answer is 4.",
    ),
    (
        "json: think opened by the chat template",
        "json",
        'I should search. <tool_call>{"name": "fetch", "arguments": {"url": "u"}}</tool_call>'
        '\n</think>\n\n<tool_call>{"name": "search", "arguments": {"query": "real"}}</tool_call>',
        [("search", {"query": "real"})],
        "",
    ),
    (
        "json: parameters and a JSON-string of arguments",
        "json",
        '<tool_call>{"name": "search", "parameters": {"query": "p"}}</tool_call>'
        '<tool_call>{"name": "fetch", "arguments": "{\\"url\\": \\"https://s.example\\"}"}'
        "</tool_call>",
        [("search", {"query": "p"}), ("fetch", {"url": "https://s.example"})],
        "",
    ),
    (
        "json: an array of calls in one block",
        "json",
        '<tool_call>[{"name": "search", "arguments": {"query": "1"}}, '
        '{"name": "search", "arguments": {"query": "2"}}]</tool_call>',
        [("search", {"query": "1"}), ("search", {"query": "2"})],
        "",
    ),
    (
        "json: the next block opens before the first closes",
        "json",
        '<tool_call>{"name": "search", "arguments": {"query": "1"}}\n'
        '<tool_call>{"name": "search", "arguments": {"query": "2"}}</tool_call>',
        [("search", {"query": "1"}), ("search", {"query": "2"})],
        "",
    ),
    (
        "json: Llama-style object on its own line",
        "json",
        'Sure.\n{"name": "fetch", "parameters": {"url": "https://l.example"}}',
        [("fetch", {"url": "https://l.example"})],
        "Sure.",
    ),
    (
        "json: unknown tool keeps its name for the loop to refuse",
        "json",
        '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>',
        [("delete_everything", {})],
        "",
    ),
    (
        "json: prose inside the tag is an invalid call",
        "json",
        "<tool_call>I would like to search the web please</tool_call>",
        [("", None, "could not read a tool call")],
        "",
    ),
    (
        "json: a Hermes call written in ptype inside the tag",
        "json",
        '<tool_call>search("inside tag", 2)</tool_call>',
        [("search", {"query": "inside tag", "limit": 2})],
        "",
    ),
    (
        "json: an xml call inside the tag",
        "json",
        "<tool_call><fetch><url>https://t.example</url></fetch></tool_call>",
        [("fetch", {"url": "https://t.example"})],
        "",
    ),
    (
        "json: a stray closing tag disappears",
        "json",
        "All done.</tool_call>",
        [],
        "All done.",
    ),
    # -- xml ----------------------------------------------------------------------------
    (
        "xml: chatter and typed values",
        "xml",
        "Let me check.\n<search>\n<query>rust agents</query>\n<limit> 3 </limit>\n"
        "<fresh>True</fresh>\n<site>null</site>\n</search>\nBack soon.",
        [("search", {"query": "rust agents", "limit": 3, "fresh": True, "site": None})],
        "Let me check.\nBack soon.",
    ),
    (
        "xml: value on lines of its own",
        "xml",
        "<search>\n<query>\nmulti\nline\n</query>\n</search>",
        [("search", {"query": "multi\nline"})],
        "",
    ),
    (
        "xml: nested elements and JSON inside an element",
        "xml",
        "<search><query>q</query><filters><lang>en</lang><year>2024</year></filters>"
        '<tags>["a", "b"]</tags></search>',
        [("search", {"query": "q", "filters": {"lang": "en", "year": 2024}, "tags": ["a", "b"]})],
        "",
    ),
    (
        "xml: array as items, and as one element per item",
        "xml",
        "<search><query>q</query><tags><item>a</item><item>b</item></tags></search>\n"
        "<search><query>r</query><tags>a</tags><tags>b</tags></search>",
        [
            ("search", {"query": "q", "tags": ["a", "b"]}),
            ("search", {"query": "r", "tags": ["a", "b"]}),
        ],
        "",
    ),
    (
        "xml: entities are decoded, a bare ampersand kept",
        "xml",
        "<search><query>&lt;b&gt; AT&T &amp; co</query></search>",
        [("search", {"query": "<b> AT&T & co"})],
        "",
    ),
    (
        "xml: the value of a one-parameter tool without its element",
        "xml",
        "<fetch>https://one.example</fetch>",
        [("fetch", {"url": "https://one.example"})],
        "",
    ),
    (
        "xml: attributes and a self-closing call",
        "xml",
        '<search query="attr" limit="4"/>',
        [("search", {"query": "attr", "limit": 4})],
        "",
    ),
    (
        "xml: unclosed final tag",
        "xml",
        "Fetching.\n<fetch>\n<url>https://u.example</url>\n",
        [("fetch", {"url": "https://u.example"})],
        "Fetching.",
    ),
    (
        "xml: a tool name in prose is not a call",
        "xml",
        "You could <search for it> yourself, or use fetch.",
        [],
        "You could <search for it> yourself, or use fetch.",
    ),
    (
        "xml: fenced call",
        "xml",
        "```xml\n<fetch><url>https://f.example</url></fetch>\n```",
        [("fetch", {"url": "https://f.example"})],
        "",
    ),
    (
        "xml: an argument given twice is refused",
        "xml",
        "<search><query>a</query><query>b</query></search>",
        [("search", None, "given more than once")],
        "",
    ),
    (
        "xml: text beside argument elements is refused",
        "xml",
        "<search>look for <query>a</query></search>",
        [("search", None, "text outside the argument elements")],
        "",
    ),
    (
        "xml: a wrong type stays a string for validation to explain",
        "xml",
        "<search><query>a</query><limit>five</limit></search>",
        [("search", {"query": "a", "limit": "five"})],
        "",
    ),
    (
        "xml: a Hermes JSON call is read too",
        "xml",
        '<tool_call>{"name": "fetch", "arguments": {"url": "https://h.example"}}</tool_call>',
        [("fetch", {"url": "https://h.example"})],
        "",
    ),
    (
        "xml: calls inside think are ignored",
        "xml",
        "<think><fetch><url>x</url></fetch></think>Nothing to fetch.",
        [],
        "Nothing to fetch.",
    ),
    # -- ptype --------------------------------------------------------------------------
    (
        "ptype: positional arguments with chatter",
        "ptype",
        'Let me search.\nsearch("rust agents", 5)\nI will read the results next.',
        [("search", {"query": "rust agents", "limit": 5})],
        "Let me search.\nI will read the results next.",
    ),
    (
        "ptype: keyword arguments and JSON literals",
        "ptype",
        'search(query="x", fresh=true, site=null, filters={"lang": "en"}, tags=("a", "b"))',
        [
            (
                "search",
                {
                    "query": "x",
                    "fresh": True,
                    "site": None,
                    "filters": {"lang": "en"},
                    "tags": ["a", "b"],
                },
            )
        ],
        "",
    ),
    (
        "ptype: single quotes, trailing comma, a call over several lines",
        "ptype",
        "search(\n    'it\\'s (complicated)',\n    limit=2,\n)",
        [("search", {"query": "it's (complicated)", "limit": 2})],
        "",
    ),
    (
        "ptype: fenced python",
        "ptype",
        'Running:\n```python\nfetch("https://p.example")\n```\n',
        [("fetch", {"url": "https://p.example"})],
        "Running:",
    ),
    (
        "ptype: inline code at the start of a line",
        "ptype",
        '`fetch("https://i.example")`',
        [("fetch", {"url": "https://i.example"})],
        "",
    ),
    (
        "ptype: a mention in prose is not a call",
        "ptype",
        'I could use search("x") here.\nsearch("y") is what I would run.',
        [],
        'I could use search("x") here.\nsearch("y") is what I would run.',
    ),
    (
        "ptype: a list of calls",
        "ptype",
        '[search("a"), fetch(url="https://b.example")]',
        [("search", {"query": "a"}), ("fetch", {"url": "https://b.example"})],
        "",
    ),
    (
        "ptype: unclosed at the end of the output",
        "ptype",
        'Okay.\nsearch("never closed", ',
        [("search", None, "not closed")],
        "Okay.",
    ),
    (
        "ptype: an expression is never evaluated",
        "ptype",
        'fetch(__import__("os").getcwd())',
        [("fetch", None, "is not a literal value")],
        "",
    ),
    (
        "ptype: an unquoted word",
        "ptype",
        "search(rust)",
        [("search", None, "put text in quotes")],
        "",
    ),
    (
        "ptype: a syntax error",
        "ptype",
        'search("a" 5)',
        [("search", None, "not a valid call")],
        "",
    ),
    (
        "ptype: too many positional arguments",
        "ptype",
        'fetch("a", "b")',
        [("fetch", None, "at most 1 positional")],
        "",
    ),
    (
        "ptype: triple quotes and unicode",
        "ptype",
        'search("""multi\nline ) " text""", tags=["日本", "ü"])',
        [("search", {"query": 'multi\nline ) " text', "tags": ["日本", "ü"]})],
        "",
    ),
    (
        "ptype: calls inside think are ignored",
        "ptype",
        '<think>\nsearch("no")\n</think>\nNo search needed.',
        [],
        "No search needed.",
    ),
    (
        "python: a fenced call with keywords",
        "python",
        "Let me look.\n```python\nsearch('rust agents', limit=3, fresh=True)\n```\nOne moment.",
        [("search", {"query": "rust agents", "limit": 3, "fresh": True})],
        "Let me look.\nOne moment.",
    ),
    (
        "python: a list of calls",
        "python",
        "[search('a'), fetch(url='https://b.example')]",
        [("search", {"query": "a"}), ("fetch", {"url": "https://b.example"})],
        "",
    ),
    (
        "python: JSON literals are refused with the Python spelling",
        "python",
        'search("q", site=null)',
        [("search", None, "null is not a Python value; write None")],
        "",
    ),
    (
        "python: an f-string is not run",
        "python",
        "search(f'{secret}')",
        [("search", None, "f-strings are not accepted")],
        "",
    ),
    (
        "typescript: two calls with semicolons in a fence",
        "typescript",
        'Two lookups:\n```ts\nsearch("rust agents", 3);\nfetch(`https://b.example`);\n```',
        [("search", {"query": "rust agents", "limit": 3}), ("fetch", {"url": "https://b.example"})],
        "Two lookups:",
    ),
    (
        "typescript: an object literal with bare keys and trailing commas",
        "typescript",
        "search(\n  'q',\n  undefined,\n  undefined,\n  undefined,\n"
        "  {lang: 'de', year: 2024,},\n)",
        [("search", {"query": "q", "filters": {"lang": "de", "year": 2024}})],
        "",
    ),
    (
        "typescript: an awaited call is prose",
        "typescript",
        'await search("q") would find it.',
        [],
        'await search("q") would find it.',
    ),
    (
        "typescript: Python literals are refused with the TypeScript spelling",
        "typescript",
        'search("q", 2, False)',
        [("search", None, "False is not a TypeScript value; write false")],
        "",
    ),
    (
        "typescript: a call cut off at the end of the output",
        "typescript",
        'search("q", 2',
        [("search", None, "the call is not closed")],
        "",
    ),
]


@pytest.mark.parametrize(
    ("dialect", "text", "expected", "visible"),
    [pytest.param(*case[1:], id=case[0]) for case in CORPUS],
)
def test_corpus(dialect: Dialect, text: str, expected: Expected, visible: str) -> None:
    parsed = parse_tool_calls(text, FUNCTIONS, dialect, new_id=ids)
    assert len(parsed.calls) == len(expected), parsed.calls
    for call, want in zip(parsed.calls, expected, strict=True):
        assert call.name == want[0]
        if want[1] is not None:
            assert call.invalid_reason is None, call.invalid_reason
            assert call.arguments == want[1]
        else:
            assert call.arguments is None
            assert call.raw_arguments, "an invalid call keeps its raw text"
            assert want[2] in (call.invalid_reason or "")
    assert parsed.text_without_calls == visible
    numbers = [int(c.id.removeprefix("call_t_")) for c in parsed.calls]
    assert numbers == sorted(set(numbers))


def test_thinking_is_kept_as_a_part() -> None:
    parsed = parse_tool_calls(
        '<think>I might call search("x").</think>Answer.', FUNCTIONS, "ptype", new_id=ids
    )
    assert parsed.thinking == 'I might call search("x").'
    assert parsed.calls == ()


def test_thinking_before_a_template_opened_close_tag() -> None:
    parsed = parse_tool_calls("reasoning here\n</think>\nAnswer.", FUNCTIONS, "json")
    assert parsed.thinking == "reasoning here\n"
    assert parsed.text_without_calls == "Answer."


def test_parts_keep_the_order_of_text_thinking_and_calls() -> None:
    parsed = parse_tool_calls(
        '<think>hm</think>First.\nfetch("u")\nThen.', FUNCTIONS, "ptype", new_id=ids
    )
    kinds = [type(p).__name__ for p in parsed.parts]
    assert kinds == ["ThinkingPart", "TextPart", "ToolCall", "TextPart"]


def test_default_ids_are_unique_across_turns() -> None:
    text = 'fetch("a")\nfetch("b")'
    first = parse_tool_calls(text, FUNCTIONS, "ptype")
    second = parse_tool_calls(text, FUNCTIONS, "ptype")
    every = [c.id for c in first.calls + second.calls]
    assert len(set(every)) == 4


def test_an_invalid_call_keeps_the_text_as_written() -> None:
    text = 'Trying.\n<tool_call>{"name": "search", "arguments": {"query": </tool_call>'
    call = parse_tool_calls(text, FUNCTIONS, "json").calls[0]
    assert call.raw_arguments == '<tool_call>{"name": "search", "arguments": {"query": </tool_call>'
    assert call.name == "search"


def test_an_unknown_dialect_is_refused_with_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown tool dialect 'yaml'; valid dialects: 'json'"):
        parse_tool_calls("x", FUNCTIONS, "yaml")  # type: ignore[arg-type]
