"""Tests of the incremental partial-JSON parser."""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from toolwire._json.partial import PartialJSONParser
from toolwire.http._sse import SSEDecoder

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def strict_loads(text: str) -> Any:
    """json.loads without the NaN/Infinity extension, which is not JSON."""

    def reject(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=reject)


def same(a: Any, b: Any) -> bool:
    """Equality that also tells 1 from 1.0 and True, and -0.0 from 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return bool(a == b)


def is_prefix(partial: Any, final: Any) -> bool:
    """Whether a lenient value is consistent with the final one.

    Every member but the last open one must equal the final member; the last may itself be a
    prefix (a string prefix, or an object/array with fewer members).
    """
    if isinstance(final, dict):
        if not isinstance(partial, dict) or list(partial) != list(final)[: len(partial)]:
            return False
        keys = list(partial)
        return all(same(partial[k], final[k]) for k in keys[:-1]) and (
            not keys or is_prefix(partial[keys[-1]], final[keys[-1]])
        )
    if isinstance(final, list):
        if not isinstance(partial, list) or len(partial) > len(final):
            return False
        return all(same(x, y) for x, y in zip(partial[:-1], final, strict=False)) and (
            not partial or is_prefix(partial[-1], final[len(partial) - 1])
        )
    if isinstance(final, str):
        return isinstance(partial, str) and final.startswith(partial)
    return same(partial, final)


def parse_in_pieces(pieces: list[str]) -> PartialJSONParser:
    parser = PartialJSONParser()
    for piece in pieces:
        parser.feed(piece)
    return parser


def splits(text: str) -> Iterator[list[str]]:
    """The text whole, one character at a time, and cut in two at every position."""
    yield [text]
    yield list(text)
    for i in range(1, len(text)):
        yield [text[:i], text[i:]]


# -- lenient values while the text streams in ----------------------------------------------------


def test_object_fills_in_key_by_key() -> None:
    text = '{"city": "Par", "days": [1, 2], "units": {"t": "c"}, "ok": true, "n": 12}'
    parser = PartialJSONParser()
    seen: list[Any] = []
    for char in text:
        parser.feed(char)
        seen.append(json.loads(json.dumps(parser.value)))
    assert seen[0] == {}
    assert {"city": ""} in seen  # a string value appears as soon as it opens
    assert {"city": "Pa"} in seen
    assert {"city": "Par", "days": []} in seen
    assert {"city": "Par", "days": [1]} in seen  # a number appears once something ends it
    assert {"city": "Par", "days": [1, 2], "units": {"t": "c"}} in seen
    assert {"city": "Par", "days": [1, 2], "units": {"t": "c"}, "ok": True} in seen
    # a number that could still grow is left out until it is complete
    assert {"city": "Par", "days": [1, 2], "units": {"t": "c"}, "ok": True, "n": 1} not in seen
    assert seen[-1] == json.loads(text)
    assert parser.complete
    assert parser.finish() == json.loads(text)


def test_member_appears_only_once_its_value_starts() -> None:
    parser = PartialJSONParser()
    parser.feed('{"a": 1, "bb')
    assert parser.value == {"a": 1}
    parser.feed('b":')
    assert parser.value == {"a": 1}
    parser.feed(" tr")
    assert parser.value == {"a": 1}
    parser.feed("u")
    assert parser.value == {"a": 1}
    parser.feed("e")
    assert parser.value == {"a": 1, "bbb": True}


def test_value_is_live_and_not_rebuilt() -> None:
    parser = PartialJSONParser()
    parser.feed('{"items": [')
    first = parser.value
    items = first["items"]
    parser.feed('{"x": 1}, ')
    assert parser.value is first
    assert parser.value["items"] is items
    assert items == [{"x": 1}]


def test_no_value_before_any_text() -> None:
    parser = PartialJSONParser()
    assert parser.value is None
    assert not parser.has_value
    parser.feed("  \n ")
    assert not parser.has_value
    assert not parser.complete


def test_null_is_a_value_unlike_nothing_yet() -> None:
    parser = PartialJSONParser()
    parser.feed("nul")
    assert not parser.has_value
    parser.feed("l")
    assert parser.has_value
    assert parser.value is None
    assert parser.finish() is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"hello"', "hello"),
        ("-12.5e+3", -12500.0),
        ("0", 0),
        ("true", True),
        ("false", False),
        ("[]", []),
        ("{}", {}),
        ('  [1, "a", null]  ', [1, "a", None]),
    ],
)
def test_top_level_may_be_any_value(text: str, expected: Any) -> None:
    for pieces in splits(text):
        assert same(parse_in_pieces(pieces).finish(), expected)


def test_top_level_string_shows_its_prefix() -> None:
    parser = PartialJSONParser()
    parser.feed('"ab')
    assert parser.has_value
    assert parser.value == "ab"
    parser.feed('c"')
    assert parser.value == "abc"
    assert parser.complete


def test_top_level_number_completes_at_finish_or_whitespace() -> None:
    parser = PartialJSONParser()
    parser.feed("42")
    assert not parser.has_value
    assert parser.finish() == 42
    parser = PartialJSONParser()
    parser.feed("42 ")
    assert parser.complete
    assert parser.value == 42


# -- tokens split across deltas -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        r'{"s": "caf\u00e9 \"q\" \\ \/ \b\f\n\r\t"}',
        r'{"emoji": "\ud83d\ude00 and \uD83D\uDE00"}',
        r'{"lone": "\ud83d", "low": "\ude00", "twice": "\ud83d\ud83d\ude00", "mixed": "\ud83dx"}',
        '{"raw": "東京 😀 naïve"}',
        '{"n": [-0, -0.0, 0.5, 1e5, 1E-5, 2.5e+10, 123456789012345678901234567890]}',
        '{"l": [true, false, null]}',
        ' \t\n\r{ \t\n\r"a" \t\n\r: \t\n\r[ 1 , { } , [ ] ] \t\n\r} \t\n\r',
    ],
)
def test_every_split_parses_like_json_loads(text: str) -> None:
    expected = json.loads(text)
    for pieces in splits(text):
        parser = PartialJSONParser()
        for piece in pieces:
            parser.feed(piece)
            if parser.has_value:
                assert is_prefix(parser.value, expected), (pieces, parser.value)
        assert same(parser.finish(), expected)
        assert parser.raw == text


def test_surrogate_pair_waits_for_its_second_half() -> None:
    parser = PartialJSONParser()
    parser.feed('["a\\ud83d')
    assert parser.value == ["a"]
    parser.feed("\\ude0")
    assert parser.value == ["a"]
    parser.feed('0b"]')
    assert parser.value == ["a😀b"]


def test_deep_nesting_needs_no_recursion() -> None:
    depth = 5000
    parser = PartialJSONParser()
    parser.feed("[" * depth + "]" * depth)
    value = parser.finish()
    for _ in range(depth - 1):
        value = value[0]
    assert value == []


# -- invalid and incomplete text -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no JSON value: the text is empty"),
        (" \n", "the text is only whitespace"),
        ('{"a": 1', "incomplete JSON: the text ends at character 7 inside the number '1'"),
        ('{"a": 1 ', "ends at character 8 after a value, where ',' or a closing bracket was"),
        ('{"a": "b', "ends at character 8 inside a string (open: object)"),
        ('{"a": [1, {"b', "inside a key (open: object > array > object)"),
        ('{"a": 1.', "inside the number '1.'"),
        ('{"a": tr', "inside 'true'"),
        ('{"a" 1}', "at character 5: expected ':' after the key 'a', got '1'"),
        ("{'a': 1}", "at character 1: expected a double-quoted key or '}', got \"'\""),
        ('{"a": 1,}', "at character 8: expected a double-quoted key, got '}'"),
        ("[1,]", "at character 3: expected a JSON value, got ']'"),
        ('{"a": 1]', "expected ',' or '}', got ']'"),
        ("[1}", "expected ',' or ']', got '}'"),
        ("01", "'01' is not a valid JSON number"),
        ("[1.e5]", "'1.e5' is not a valid JSON number"),
        ("[-]", "'-' is not a valid JSON number"),
        ("[+1]", "expected a JSON value or ']', got '+'"),
        ("[NaN]", "got 'N'"),
        ("trux", "invalid literal 'trux', expected 'true'"),
        ('"a\\x"', "invalid escape '\\x' inside a string"),
        ('"\\u12g4"', "expected a hex digit in a \\u escape, got 'g'"),
        ('"a\nb"', "control character '\\n' inside a string"),
        ('{"a": 1} {"b": 2}', "character 9: expected the end of the text"),
        pytest.param("1" * 5000, "'11111111111111111111'…(5000 characters) is not", id="long-int"),
    ],
)
def test_errors_name_the_position_and_what_was_expected(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        strict_loads(text)
    parser = PartialJSONParser()
    for char in text:
        parser.feed(char)  # never raises on bad input
    with pytest.raises(ValueError, match=re.escape(message)):
        parser.finish()
    with pytest.raises(ValueError, match=re.escape(message)):
        parser.finish()


def test_error_keeps_what_was_parsed_before_it() -> None:
    parser = PartialJSONParser()
    parser.feed('{"a": "xy", "b": [1, 2 x] ,"c": 3}')
    assert parser.error == "invalid JSON at character 23: expected ',' or ']', got 'x'"
    assert parser.value == {"a": "xy", "b": [1, 2]}
    assert not parser.complete
    assert parser.raw == '{"a": "xy", "b": [1, 2 x] ,"c": 3}'


def test_feed_checks_its_argument_and_the_state() -> None:
    parser = PartialJSONParser()
    with pytest.raises(TypeError, match="takes str, got bytes"):
        parser.feed(b"{}")  # type: ignore[arg-type]
    parser.feed("{}")
    assert parser.finish() == {}
    with pytest.raises(RuntimeError, match=r"after finish\(\)"):
        parser.feed(" ")


# -- properties ----------------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=()))
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(
            st.text(st.characters(exclude_categories=()), max_size=8), children, max_size=5
        )
    ),
    max_leaves=25,
)
whitespace = st.text(alphabet=" \t\n\r", max_size=3)


@st.composite
def serialised(draw: st.DrawFn, values: st.SearchStrategy[Any] = json_values) -> tuple[Any, str]:
    value = draw(values)
    separators = (
        draw(whitespace) + "," + draw(whitespace),
        draw(whitespace) + ":" + draw(whitespace),
    )
    text = json.dumps(
        value,
        ensure_ascii=draw(st.booleans()),
        separators=separators,
        indent=draw(st.none() | st.integers(0, 2)),
    )
    return value, draw(whitespace) + text + draw(whitespace)


@st.composite
def cut(draw: st.DrawFn, text: str) -> list[str]:
    """Split text into deltas: from single characters to the whole text in one piece."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    chance = draw(st.sampled_from([0.0, 0.05, 0.3, 1.0]))
    points = [i for i in range(1, len(text)) if rng.random() < chance]
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), case=serialised())
@example(data=None, case=({"a": "\ud83d\ude00"}, '{"a": "\\ud83d\\ude00"}'))
def test_any_split_of_any_json_matches_json_loads(
    data: st.DataObject | None, case: tuple[Any, str]
) -> None:
    _, text = case
    expected = json.loads(text)
    pieces = list(text) if data is None else data.draw(cut(text))
    parser = PartialJSONParser()
    for piece in pieces:
        parser.feed(piece)
        if parser.has_value:
            assert is_prefix(parser.value, expected), (pieces, parser.value)
    assert same(parser.finish(), expected)
    assert parser.raw == text


@settings(max_examples=100)
@given(data=st.data(), case=serialised())
def test_damaged_json_is_refused_exactly_when_json_loads_refuses(
    data: st.DataObject, case: tuple[Any, str]
) -> None:
    _, text = case
    position = data.draw(st.integers(0, len(text)))
    insert = data.draw(
        st.sampled_from(
            [
                '"',
                "\\",
                ",",
                ":",
                "{",
                "}",
                "[",
                "]",
                "1",
                "-",
                ".",
                "e",
                "u",
                " ",
                "\n",
                "\x00",
                "é",
            ]
        )
    )
    if data.draw(st.booleans()) and position < len(text):
        damaged = text[:position] + text[position + 1 :]
    else:
        damaged = text[:position] + insert + text[position:]
    try:
        expected: Any = strict_loads(damaged)
    except (ValueError, RecursionError):
        expected = ValueError
    parser = parse_in_pieces(data.draw(cut(damaged)))
    if expected is ValueError:
        with pytest.raises(ValueError, match="JSON"):
            parser.finish()
    else:
        assert same(parser.finish(), expected)


# -- real streams --------------------------------------------------------------------------------


def _argument_streams() -> Iterator[tuple[str, list[str]]]:
    """(name, argument deltas) for each tool call streamed in the recorded provider traffic."""
    traffic = SHARED_DATA / "provider-traffic"
    bodies: list[tuple[str, bytes]] = [
        (path.name, path.read_bytes())
        for folder in ("openai-chat-sse", "anthropic-messages-sse")
        for path in sorted((traffic / folder).iterdir())
    ]
    for path in sorted((traffic / "anthropic-tool-runs").iterdir()):
        for number, exchange in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            body = exchange["response"]["body"]
            if isinstance(body, str):
                bodies.append((f"{path.name} {number}", body.encode()))
    with (traffic / "recorded-exchanges.jsonl").open(encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            record = json.loads(line)
            if record.get("response_sse"):
                bodies.append((f"exchange {number}", record["response_sse"].encode()))
    for name, body in bodies:
        decoder = SSEDecoder()
        calls: dict[tuple[str, int], list[str]] = {}
        for event in decoder.feed(body) + decoder.close():
            if event.is_done:
                continue
            payload = event.json()
            kind = payload.get("type")
            if kind == "content_block_delta" and payload["delta"]["type"] == "input_json_delta":
                calls.setdefault(("block", payload["index"]), []).append(
                    payload["delta"]["partial_json"]
                )
            elif kind == "response.function_call_arguments.delta":
                calls.setdefault(("item", payload["output_index"]), []).append(payload["delta"])
            for choice in payload.get("choices") or ():
                for call in (choice.get("delta") or {}).get("tool_calls") or ():
                    arguments = (call.get("function") or {}).get("arguments")
                    if arguments is not None:
                        calls.setdefault(("choice", call["index"]), []).append(arguments)
        for key, deltas in calls.items():
            yield f"{name} {key}", deltas


@pytest.mark.shared_data
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is not present")
def test_recorded_tool_argument_streams() -> None:
    streams = list(_argument_streams())
    assert len(streams) >= 12
    complete = 0
    for name, deltas in streams:
        text = "".join(deltas)
        parser = PartialJSONParser()
        try:
            expected = strict_loads(text) if text.strip() else None
        except ValueError:
            expected = ValueError
        for delta in deltas:
            parser.feed(delta)
            if expected not in (None, ValueError) and parser.has_value:
                assert is_prefix(parser.value, expected), name
        if expected is ValueError or expected is None:
            with pytest.raises(ValueError, match="JSON"):
                parser.finish()
        else:
            assert same(parser.finish(), expected), name
            complete += 1
    assert complete >= 10


def test_a_huge_open_string_is_shown_with_a_bounded_lag() -> None:
    parser = PartialJSONParser()
    body = "".join(chr(0x61 + i % 26) for i in range(20_000))
    parser.feed('{"path": "a.txt", "body": "')
    publishes = 0
    last = ""
    for received, ch in enumerate(body, start=1):
        parser.feed(ch)
        shown = parser.value["body"]
        assert body.startswith(shown)
        assert len(shown) >= received - received // 8 - 1
        publishes += shown is not last
        last = shown
    # Geometric republishing: a few dozen joins for 20,000 characters, not one per character.
    assert publishes < 200
    parser.feed('"}')
    assert parser.value == {"path": "a.txt", "body": body}
    assert parser.finish() == {"path": "a.txt", "body": body}


@pytest.mark.parametrize(
    ("text", "more"),
    [
        ('{"expression": "0 + 1", "n": [1, 2.5, -0], "o": {"a": null}}', ""),
        (' {"a": "\\ud83d", "b": "东"} \n', "  "),
        ('{"a": 1}', ' {"b": 2}'),  # text after the whole value
        ('{"a": NaN}', ""),  # not JSON, though json.loads takes it
        ('{"a": 1', "}"),  # a prefix
        ('{"a": {"b": 1}', "}"),  # a prefix that ends with a brace
        ('{"a": "\x01"}', ""),  # a raw control character
        ("[1]", ""),
    ],
)
def test_a_whole_first_delta_reads_as_the_same_text_read_char_by_char(text: str, more: str) -> None:
    whole, by_char = PartialJSONParser(), PartialJSONParser()
    whole.feed(text)
    whole.feed(more)
    for char in text + more:
        by_char.feed(char)
    assert whole.has_value == by_char.has_value
    assert whole.complete == by_char.complete
    assert whole.error == by_char.error
    assert same(whole.value, by_char.value)
    assert whole.raw == text + more
    assert _outcome(whole) == _outcome(by_char)


def _outcome(parser: PartialJSONParser) -> tuple[str, Any]:
    """What :meth:`PartialJSONParser.finish` comes to: the value (as JSON), or the error."""
    try:
        value = parser.finish()
    except ValueError as exc:
        return "error", str(exc)
    return "value", json.dumps(value)
