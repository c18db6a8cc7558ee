"""Property tests: a call in any dialect reads back as the same arguments, whole or streamed."""

from __future__ import annotations

import json
import keyword
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prompted_support import ids

from toolwire.prompted import DIALECTS, parse_tool_calls
from toolwire.prompted._render import render_call
from toolwire.prompted._scanner import CallPiece, TextPiece, TurnScanner
from toolwire.tools import FunctionSpec

NAMES = st.builds(
    lambda first, rest: first + rest,
    st.sampled_from("abcxyz"),
    st.text(alphabet="abcdefxyz_0123", max_size=9),
)
# Tool names may be dotted (math.factorial): every dialect calls them by their own name.
TOOL_NAMES = NAMES | st.builds(lambda a, b: f"{a}.{b}", NAMES, NAMES)
# Parameter names also include Python keywords (written as **{...} in ptype).
PARAMETER_NAMES = NAMES | st.sampled_from(["from", "class", "if", "item", "name", "type"])
# Pieces of text that stress the readers: tags, entities, fences, quotes, newlines, literals.
TRICKY = [
    "</a>", "<b>", "&lt;", "&amp;lt;", "&#60;", "AT&T", "\n", "\r\n", "\r", "  ", "null", "None",
    "true", "5", "-0.0", "1e5", '"quoted"', "'", '"""', "\\", "</tool_call>", "<tool_call>",
    "</tool_result>", "<think>", "</think>", "```", "```json\n", ")", "(", "search(", "[1, 2]",
    '{"a": 1}', "{", "]", "é", "🚀", "\u2028", "\x00", "\t",
]  # fmt: skip
STRINGS = st.text(max_size=30) | st.lists(
    st.sampled_from(TRICKY) | st.text(max_size=4), max_size=6
).map("".join)
SCALAR_SCHEMAS = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "null"},
        {"type": ["string", "null"]},
        {"type": ["integer", "null"]},
        {"type": ["boolean", "string"]},
        {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        {"enum": ["red", "green", "1", "null", "a b"]},
        {"enum": ["x", 2, None, True]},
        {},
        # What the normaliser makes of the wild's bare `list`, `dict` and `any`.
        {"type": "array"},
        {"type": "object"},
        {"type": ["number", "null"]},
    ]
)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | STRINGS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=4,
)


def schemas(depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    if depth >= 2:
        return SCALAR_SCHEMAS
    inner = st.deferred(lambda: schemas(depth + 1))
    arrays = inner.map(lambda item: {"type": "array", "items": item})
    return SCALAR_SCHEMAS | arrays | objects(inner)


def objects(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        props = draw(st.dictionaries(PARAMETER_NAMES, inner, min_size=1, max_size=4))
        needed = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
        return {"type": "object", "properties": props, "required": needed}

    return build()


def values(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return st.one_of([values(s) for s in schema["anyOf"]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([values({"type": k}) for k in kind])
    if kind == "string":
        return STRINGS
    if kind == "integer":
        return st.integers(-(10**15), 10**15)
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False) | st.integers(-1000, 1000)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(values(schema["items"]) if "items" in schema else JSON_VALUES, max_size=4)
    if kind == "object" and "properties" not in schema:
        return st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3)
    if kind == "object":
        props = schema["properties"]
        needed = {k: values(v) for k, v in props.items() if k in schema["required"]}
        # null for an optional property means "left out": every dialect writes and reads it.
        optional = {
            k: values(v) | st.none() for k, v in props.items() if k not in schema["required"]
        }
        return st.fixed_dictionaries(needed, optional=optional)
    return JSON_VALUES


@st.composite
def calls(draw: st.DrawFn) -> tuple[FunctionSpec, dict[str, Any]]:
    parameters = draw(objects(schemas(1)))
    order = tuple(draw(st.permutations(sorted(parameters["properties"]))))
    function = FunctionSpec(
        name=draw(TOOL_NAMES),
        description="A tool.",
        parameters=parameters,
        parameter_order=order,
    )
    return function, draw(values(parameters))


def same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


CHATTER = st.sampled_from(
    [
        ("", ""),
        ("Let me look that up.\n", "\nI will wait for the result."),
        ("Sure! Calling the tool now:\n\n", ""),
        ("Étape 1 — recherche 🚀\n", "\n\nVoilà."),
    ]
)


WAYS = (
    ("json", "json"),
    ("xml", "json"),
    ("xml", "tags"),
    ("ptype", "json"),
    ("python", "json"),
    ("typescript", "json"),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call=calls(), chatter=CHATTER)
def test_a_rendered_call_reads_back_as_the_same_arguments(
    call: tuple[FunctionSpec, dict[str, Any]], chatter: tuple[str, str]
) -> None:
    check_round_trip(call, chatter)


def check_round_trip(call: tuple[FunctionSpec, dict[str, Any]], chatter: tuple[str, str]) -> None:
    function, arguments = call
    for dialect, nested in WAYS:
        written = render_call(function.name, arguments, dialect, function, nested=nested)
        text = chatter[0] + written + chatter[1]
        parsed = parse_tool_calls(text, [function], dialect, new_id=ids)
        assert len(parsed.calls) == 1, (dialect, text)
        found = parsed.calls[0]
        assert found.name == function.name
        assert found.invalid_reason is None, (dialect, found.invalid_reason, text)
        assert same(found.arguments, arguments), (dialect, text)
        expected_text = (chatter[0].strip() + "\n" + chatter[1].strip()).strip()
        assert parsed.text_without_calls == expected_text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=calls(),
    second=calls(),
    chatter=CHATTER,
    cuts=st.lists(st.integers(1, 40), min_size=1, max_size=60),
)
def test_streaming_in_any_pieces_reads_the_same_turn(
    first: tuple[FunctionSpec, dict[str, Any]],
    second: tuple[FunctionSpec, dict[str, Any]],
    chatter: tuple[str, str],
    cuts: list[int],
) -> None:
    check_streaming(first, second, chatter, cuts)


def check_streaming(
    first: tuple[FunctionSpec, dict[str, Any]],
    second: tuple[FunctionSpec, dict[str, Any]],
    chatter: tuple[str, str],
    cuts: list[int],
) -> None:
    functions = [first[0]]
    if second[0].name != first[0].name:
        functions.append(second[0])
    for dialect in DIALECTS:
        text = (
            chatter[0]
            + render_call(first[0].name, first[1], dialect, first[0])
            + "\n"
            + render_call(second[0].name, second[1], dialect, second[0])
            + chatter[1]
        )
        whole = parse_tool_calls(text, functions, dialect, new_id=ids)
        assert len(whole.calls) == 2
        scanner = TurnScanner(functions, dialect, new_id=ids)
        pieces = []
        pos = 0
        for size in cuts:
            pieces += scanner.feed(text[pos : pos + size])
            pos += size
        pieces += scanner.feed(text[pos:])
        pieces += scanner.finish()
        assert scanner.result() == whole
        assert [p.call for p in pieces if isinstance(p, CallPiece)] == list(whole.calls)
        visible = "".join(p.text for p in pieces if isinstance(p, TextPiece))
        assert visible.split() == (chatter[0] + " " + chatter[1]).split()


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=120, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from("<>/{}[]()\"'`\n tool_call:name,search1=&;think"), max_size=120
    )
    | st.text(max_size=80)
)
def test_no_text_makes_the_parser_raise(dialect: str, text: str) -> None:
    search = FunctionSpec(
        name="search",
        description="",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
        parameter_order=("q",),
    )
    parsed = parse_tool_calls(text, [search], dialect, new_id=ids)
    for call in parsed.calls:
        assert call.is_valid or (call.raw_arguments is not None and call.invalid_reason)


def test_names_that_are_not_keyword_arguments_are_written_as_a_spread_in_ptype() -> None:
    assert keyword.iskeyword("from")
    function = FunctionSpec(
        name="move",
        description="",
        parameters={"type": "object", "properties": {"to": {}}, "additionalProperties": {}},
        parameter_order=("to",),
    )
    arguments = {"to": "b", "from": "a", "two words": 1}
    text = render_call("move", arguments, "ptype", function)
    assert text == 'move("b", **{"from": "a", "two words": 1})'
    parsed = parse_tool_calls(text, [function], "ptype")
    assert parsed.calls[0].arguments == arguments


@pytest.mark.parametrize("kind", ["string", "integer", "number", "boolean", "array", "object"])
def test_xml_reads_a_plain_null_as_left_out_for_every_type(kind: str) -> None:
    from toolwire.tools import Tool

    made = Tool.from_schema(
        "mod",
        "A tool.",
        {"type": "object", "properties": {"q": {"type": "string"}, "mod": {"type": kind}}},
        lambda arguments: arguments,
    )
    function = made.function_spec()
    written = render_call("mod", {"q": "x", "mod": None}, "xml", function)
    assert "<mod>null</mod>" in written
    parsed = parse_tool_calls(written, [function], "xml", new_id=ids)
    assert parsed.calls[0].arguments == {"q": "x", "mod": None}
    assert made.validate(parsed.calls[0].arguments) == {"q": "x"}


@pytest.mark.parametrize("schema", [{"type": "string"}, {"type": ["string", "null"]}, {}])
@pytest.mark.parametrize("text", ["null", " null", "null\n", "\nnull\n"])
def test_xml_writes_the_word_null_so_that_it_reads_back_as_text(
    schema: dict[str, Any], text: str
) -> None:
    function = FunctionSpec(
        name="say",
        description="",
        parameters={"type": "object", "properties": {"words": schema}},
        parameter_order=("words",),
    )
    written = render_call("say", {"words": text}, "xml", function)
    assert "<words>null</words>" not in written
    parsed = parse_tool_calls(written, [function], "xml", new_id=ids)
    assert parsed.calls[0].arguments == {"words": text}
