"""Tests of the conservative repair of tool-call argument text."""

from __future__ import annotations

import json
import random
import re
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire._json.relaxed import (
    REPAIRS,
    ArgumentsSyntaxError,
    ParsedArguments,
    _RelaxedParser,
    parse_arguments,
)

# -- repairs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "arguments", "repairs"),
    [
        ('{"location": "Paris"}', {"location": "Paris"}, ()),
        ('\n  {"location": "Paris"}  \n', {"location": "Paris"}, ()),
        ('{"note": "```json {} ```"}', {"note": "```json {} ```"}, ()),
        ('{"a": 1, "a": 2}', {"a": 2}, ()),
        ("", {}, ("empty text",)),
        (" \n\t", {}, ("empty text",)),
        ('""', {}, ("object encoded as a JSON string", "empty text")),
        (
            '```json\n{"query": "weather in Paris", "limit": 3}\n```',
            {"query": "weather in Paris", "limit": 3},
            ("markdown code fence",),
        ),
        ('```\n{"a": 1}\n```', {"a": 1}, ("markdown code fence",)),
        ('```json {"a": 1}```', {"a": 1}, ("markdown code fence",)),
        ('\n```JSON\r\n{"a": 1}\r\n```\n', {"a": 1}, ("markdown code fence",)),
        ("```json\n```", {}, ("markdown code fence", "empty text")),
        (
            '"{\\"location\\": \\"Paris\\", \\"unit\\": \\"celsius\\"}"',
            {"location": "Paris", "unit": "celsius"},
            ("object encoded as a JSON string",),
        ),
        ('{{"location": "Paris"}}', {"location": "Paris"}, ("redundant wrapping braces",)),
        ('{ {"a": [1]} }', {"a": [1]}, ("redundant wrapping braces",)),
        ("{{{}}}", {}, ("redundant wrapping braces",)),
        (
            '{location: "Paris", unit_2: "celsius", $ref: null}',
            {"location": "Paris", "unit_2": "celsius", "$ref": None},
            ("unquoted keys",),
        ),
        ("{'location': 'Paris'}", {"location": "Paris"}, ("single-quoted strings",)),
        (
            "{'text': 'He said \"hi\", it\\'s \\u00e9 \\\\ fine\\n'}",
            {"text": 'He said "hi", it\'s é \\ fine\n'},
            ("single-quoted strings",),
        ),
        (
            '{"a": [1, 2,], "b": {"c": 3,},}',
            {"a": [1, 2], "b": {"c": 3}},
            ("trailing commas",),
        ),
        (
            "```json\n{query: 'x', tags: ['a', 'b',],}\n```",
            {"query": "x", "tags": ["a", "b"]},
            ("markdown code fence", "unquoted keys", "single-quoted strings", "trailing commas"),
        ),
        (
            '"{\\"a\\": 1,}"',
            {"a": 1},
            ("object encoded as a JSON string", "trailing commas"),
        ),
        (
            '"{{\\"a\\": 1}}"',
            {"a": 1},
            ("object encoded as a JSON string", "redundant wrapping braces"),
        ),
        (
            '```json\n"{\\"a\\": 1}"\n```',
            {"a": 1},
            ("markdown code fence", "object encoded as a JSON string"),
        ),
        (
            "'{\"a\": 1}'",
            {"a": 1},
            ("single-quoted strings", "object encoded as a JSON string"),
        ),
        ('<|"|>{"scope": "tmp"}', {"scope": "tmp"}, ("template quote tokens",)),
        (' <|"|>{"scope": "tmp"}<|"|>\n', {"scope": "tmp"}, ("template quote tokens",)),
        (
            '{scope:<|"|>tmp<|"|>,depth:2}',
            {"scope": "tmp", "depth": 2},
            ("unquoted keys", "template quote tokens"),
        ),
        (
            '{<|"|>reason<|"|>: <|"|>He said <|"|>hi<|"|> twice, a \\ b<|"|>, '
            '"tags": [<|"|>a<|"|>, <|"|>b<|"|>]}',
            {"reason": 'He said "hi" twice, a \\ b', "tags": ["a", "b"]},
            ("template quote tokens",),
        ),
        (
            '{"code": <|"|>x = {"k": 1}\n<|"|>}',
            {"code": 'x = {"k": 1}\n'},
            ("template quote tokens",),
        ),
    ],
)
def test_repairs(text: str, arguments: dict[str, Any], repairs: tuple[str, ...]) -> None:
    parsed = parse_arguments(text)
    assert parsed == ParsedArguments(arguments, repairs)  # type: ignore[arg-type]
    assert parsed.repaired == bool(repairs)


def test_repair_names_are_the_documented_ones() -> None:
    assert REPAIRS == (
        "empty text",
        "markdown code fence",
        "object encoded as a JSON string",
        "redundant wrapping braces",
        "unquoted keys",
        "single-quoted strings",
        "trailing commas",
        "template quote tokens",
        "trailing text after the object",
    )


# -- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "position", "message"),
    [
        ('{"location": "Paris"', 20, "the text ends inside an object, where ',' or '}' was"),
        ('{"location": "Par', 17, "the text ends inside the string opened at char 13"),
        ('{"a": {"b": {"c": 1}}', 21, "the text ends inside an object"),
        ('{"a": [1, 2', 11, "the text ends inside an array, where ',' or ']' was"),
        ('{"a": ', 6, "the text ends where a JSON value was expected"),
        ('{"a"', 4, "expected ':' after the key 'a', got the end of the text"),
        ('{"a": <|"|>x', 12, 'the text ends inside the string opened with <|"|> at char 6'),
        ('<|"|>[1]', 5, "expected '{' (tool arguments must be a JSON object), got '['"),
        ("{'a': 'x}", 9, "the text ends inside the string opened at char 6 (truncated?)"),
        ('[{"a": 1}]', 0, "expected '{' (tool arguments must be a JSON object), got an array"),
        ("  [1, 2,]", 2, "expected '{' (tool arguments must be a JSON object), got '['"),
        ("42", 0, "got the number 42"),
        ("null", 0, "got null"),
        ("true", 0, "got true"),
        ('{"a": 1}{"b": 2}', 8, "a second value follows the arguments object"),
        ('{"a": 1}\n{"b": 2}', 9, "concatenated objects are not merged"),
        ('{"a": 1} ```', 9, "extra text after the arguments object: '`'"),
        ('{"a": True}', 6, "got 'True' (JSON literals are true, false and null)"),
        ('{"a": None}', 6, "got 'None' (JSON literals are true, false and null)"),
        ('{"a": NaN}', 6, "got 'NaN'"),
        ('{"city": Paris}', 9, "got 'Paris' (unquoted strings are not repaired)"),
        ('{"a": 1,,}', 8, "expected a key, got ','"),
        ('{"a": 1 // why\n}', 8, "expected ',' or '}', got '/'"),
        ('{"a": "line\nbreak"}', 11, "control character '\\n' inside a string"),
        ('{"a": "\\x41"}', 7, "invalid escape '\\\\x' in a string"),
        ('{"a": 01}', 7, "leading zeros are not allowed in JSON numbers"),
        ('{"a": .5}', 6, "expected a JSON value, got '.'"),
        ('{"a": +1}', 6, "expected a JSON value, got '+'"),
        ("{max-results: 5}", 4, "expected ':' after the key 'max', got '-'"),
        (
            'Here you go: {"a": 1}',
            0,
            "expected '{' (tool arguments must be a JSON object), got 'H'",
        ),
        ('```json\n{"a": 1}\n``` done', 0, "got '`'"),
        ('{{"a": 1}, {"b": 2}}', 9, "expected '}' closing the redundant braces opened at char 0"),
        ('"Paris"', 0, "of the decoded string: expected '{'"),
        ('"[1, 2]"', 0, "of the decoded string: expected '{' (tool arguments must be a JSON"),
        ('"{\\"a\\": 1"', 7, "of the decoded string: the text ends inside an object"),
        ('"\\"{}\\""', 0, "of the decoded string: expected '{'"),
        pytest.param(
            "{a: " + "[" * 300 + "]" * 300 + "}", 203, "nested deeper than 200 levels", id="deep"
        ),
    ],
)
def test_refusals_name_position_and_expectation(text: str, position: int, message: str) -> None:
    with pytest.raises(ArgumentsSyntaxError, match=re.escape(message)) as caught:
        parse_arguments(text)
    assert caught.value.position == position
    assert f"(char {position})" in str(caught.value)
    assert caught.value.expected
    assert isinstance(caught.value, ValueError)


# -- trailing text (native call admission) -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "arguments", "repairs"),
    [
        ('{"a": 1}\n{\n  "description": "x \\uao", "maxLength": \n{"} ', {"a": 1}, ()),
        ('{ "a": 1 }\nfunctions.add:\n{"b": "\\u<#f>"}', {"a": 1}, ()),
        ('{"a": 1} and some prose', {"a": 1}, ()),
        ('{"a": 1}}', {"a": 1}, ()),
        ("{a: 1,} then {b: 2", {"a": 1}, ("unquoted keys", "trailing commas")),
        ('"{\\"a\\": 1} more"', {"a": 1}, ("object encoded as a JSON string",)),
    ],
)
def test_text_after_the_leading_object_is_dropped_when_asked(
    text: str, arguments: dict[str, Any], repairs: tuple[str, ...]
) -> None:
    with pytest.raises(ArgumentsSyntaxError):
        parse_arguments(text)
    parsed = parse_arguments(text, trailing_text=True)
    assert parsed.arguments == arguments
    assert parsed.repairs == (*repairs, "trailing text after the object")


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ('{"a": 1}{"a": 2}', 8),
        ('{"a": 1}\n{"b": 2} and more', 9),
        ('{"a": 1}\nfunctions.add:\n{"a": 2}', 24),
        ('{"a": 1} noise {broken\n{"a": 2}', 23),
        ('{"a": 1} [1, 2]', 9),
        ('{"a": 1} "text"', 9),
        ('{"a": 1} 42', 9),
        ("{a: 1} then {b: 'x',}", 12),
    ],
)
def test_a_second_complete_value_after_the_object_is_refused(text: str, position: int) -> None:
    # Never merged with the first, never taken instead of it, never dropped: it may be a call.
    with pytest.raises(ArgumentsSyntaxError, match="a later one is not taken") as caught:
        parse_arguments(text, trailing_text=True)
    assert caught.value.position == position


def test_trailing_text_is_dropped_up_to_a_bound() -> None:
    text = '{"a": 1}' + "x" * 2048
    assert parse_arguments(text, trailing_text=True).arguments == {"a": 1}
    with pytest.raises(ArgumentsSyntaxError, match="2049 characters of text follow") as caught:
        parse_arguments(text + "x", trailing_text=True)
    assert caught.value.position == 8


def test_trailing_text_never_rescues_a_broken_leading_object() -> None:
    for text in ('{"a": 1', '{"a": "\\uq"} tail', 'tail {"a": 1}', "[1] tail"):
        with pytest.raises(ArgumentsSyntaxError):
            parse_arguments(text, trailing_text=True)


def test_error_reports_line_and_column() -> None:
    text = '{\n  "a": 1,\n  "b": tru\n}'
    with pytest.raises(ArgumentsSyntaxError) as caught:
        parse_arguments(text)
    error = caught.value
    assert (error.line, error.column, error.position) == (3, 8, 19)
    assert error.source == "text"
    assert str(error) == (
        "invalid tool arguments at line 3, column 8 (char 19): "
        "expected a JSON value, got 'tru' (unquoted strings are not repaired)"
    )


def test_positions_inside_a_fence_count_in_the_whole_text() -> None:
    with pytest.raises(ArgumentsSyntaxError, match="line 2, column 7") as caught:
        parse_arguments('```json\n{"a": x}\n```')
    assert caught.value.position == 14
    assert caught.value.problem == (
        "expected a JSON value, got 'x' (unquoted strings are not repaired)"
    )
    assert caught.value.reason == "at line 2, column 7 (char 14): " + caught.value.problem
    assert caught.value.expected == "a JSON value"


def test_refuses_non_text() -> None:
    with pytest.raises(TypeError, match="takes str, got bytes"):
        parse_arguments(b"{}")  # type: ignore[arg-type]


# -- properties ----------------------------------------------------------------------------------

identifiers = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_letters + "_$"),
    st.text(string.ascii_letters + string.digits + "_$", max_size=8),
)
keys = identifiers | st.text(max_size=6)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=10,
)
objects = st.dictionaries(keys, values, max_size=5)
whitespace = st.text(alphabet=" \t\n\r", max_size=2)


@settings(max_examples=60)
@given(
    value=objects,
    ensure_ascii=st.booleans(),
    indent=st.none() | st.integers(0, 2),
    around=st.tuples(whitespace, whitespace),
)
def test_valid_objects_parse_unchanged(
    value: dict[str, Any], ensure_ascii: bool, indent: int | None, around: tuple[str, str]
) -> None:
    text = around[0] + json.dumps(value, ensure_ascii=ensure_ascii, indent=indent) + around[1]
    assert parse_arguments(text) == ParsedArguments(json.loads(text), ())
    # The relaxed parser, used when json.loads refuses, reads valid JSON the same way.
    repairs: list[Any] = []
    parser = _RelaxedParser(text, full=text, base=0, source="text", repairs=repairs)
    assert parser.parse_document(allow_string=False) == json.loads(text)
    assert repairs == []


def _single_quoted(text: str, ensure_ascii: bool) -> str:
    body = json.dumps(text, ensure_ascii=ensure_ascii)[1:-1]
    return "'" + body.replace('\\"', '"').replace("'", "\\'") + "'"


def relaxed_text(value: Any, rng: random.Random, used: set[str]) -> str:
    """Write a value the way a sloppy model might, noting the repairs that reading it needs."""
    ensure_ascii = rng.random() < 0.5
    if isinstance(value, dict):
        members = []
        for key, member in value.items():
            style = rng.choice(["json", "bare", "single"])
            if style == "bare" and re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", key):
                used.add("unquoted keys")
                written_key = key
            elif style == "single":
                used.add("single-quoted strings")
                written_key = _single_quoted(key, ensure_ascii)
            else:
                written_key = json.dumps(key, ensure_ascii=ensure_ascii)
            written_value = relaxed_text(member, rng, used)
            members.append(f"{written_key}{_space(rng)}:{_space(rng)}{written_value}")
        return "{" + _join(members, rng, used) + "}"
    if isinstance(value, list):
        return "[" + _join([relaxed_text(item, rng, used) for item in value], rng, used) + "]"
    if isinstance(value, str) and rng.random() < 0.5:
        used.add("single-quoted strings")
        return _single_quoted(value, ensure_ascii)
    return json.dumps(value, ensure_ascii=ensure_ascii)


def _space(rng: random.Random) -> str:
    return "".join(rng.choice(" \t\n\r") for _ in range(rng.choice([0, 0, 1, 2])))


def _join(items: list[str], rng: random.Random, used: set[str]) -> str:
    text = ",".join(_space(rng) + item + _space(rng) for item in items)
    if items and rng.random() < 0.5:
        used.add("trailing commas")
        text += "," + _space(rng)
    return text


@settings(max_examples=100)
@given(value=objects, seed=st.integers(0, 2**32), wrappers=st.integers(0, 7))
def test_sloppy_writing_is_repaired_and_reported(
    value: dict[str, Any], seed: int, wrappers: int
) -> None:
    rng = random.Random(seed)
    used: set[str] = set()
    text = relaxed_text(value, rng, used)
    if wrappers & 1:
        used.add("redundant wrapping braces")
        text = "{" + text + "}"
    if wrappers & 2:
        used.add("object encoded as a JSON string")
        text = json.dumps(text, ensure_ascii=rng.random() < 0.5)
    if wrappers & 4:
        used.add("markdown code fence")
        text = "```" + rng.choice(["json", "", "JSON"]) + "\n" + text + "\n```"
    parsed = parse_arguments(text)
    assert parsed.arguments == json.loads(json.dumps(value))
    assert set(parsed.repairs) == used
    assert len(parsed.repairs) == len(used)  # each named once


@settings(max_examples=60)
@given(value=objects, cut=st.integers(1, 10_000))
def test_truncated_objects_are_refused(value: dict[str, Any], cut: int) -> None:
    text = json.dumps(value)
    truncated = text[: len(text) - 1 - cut % len(text)]
    if not truncated.strip():
        return
    with pytest.raises(ArgumentsSyntaxError, match=r"\(char \d+\)"):
        parse_arguments(truncated)
