"""The grammar builder, checked without a model: for generated tool schemas, every text the grammar
accepts is an answer or one call whose arguments validate, valid calls are accepted, invalid ones
refused; and the same against llama.cpp's own grammar engine when it is installed."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping
from typing import Any

import fastjsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from llamacpp_gbnf import Grammar

from toolwire.prompted import parse_tool_calls
from toolwire.tools import FunctionSpec, ToolDefinitionError
from toolwire_llamacpp import GrammarError, build_grammar, tool_grammar

Schema = dict[str, Any]

# -- schemas the grammar constrains completely ------------------------------------------------

_names = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True)
_json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.floats(-1e6, 1e6, allow_nan=False).filter(lambda x: x == 0 or abs(x) > 1e-6),
    st.text(max_size=6),
)


def _leaf_schemas() -> st.SearchStrategy[Schema]:
    lengths = st.integers(0, 3).flatmap(
        lambda low: st.integers(low, low + 4).map(
            lambda high: {"type": "string", "minLength": low, "maxLength": high}
        )
    )
    ranges = st.integers(-40, 40).flatmap(
        lambda low: st.integers(low, low + 30).map(
            lambda high: {"type": "integer", "minimum": low, "maximum": high}
        )
    )
    return st.one_of(
        st.just({"type": "string"}),
        lengths,
        st.just({"type": "integer"}),
        st.sampled_from([{"type": "integer", "minimum": 0}, {"type": "integer", "minimum": 1}]),
        ranges,
        st.just({"type": "number"}),
        st.just({"type": "number", "minimum": 0}),
        st.just({"type": "boolean"}),
        st.just({"type": "null"}),
        st.just({"type": ["string", "null"]}),
        st.lists(_json_scalars, min_size=1, max_size=4, unique_by=json.dumps).map(
            lambda values: {"enum": values}
        ),
        _json_scalars.map(lambda value: {"const": value}),
        st.just({}),
    )


def _extend(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    objects = st.dictionaries(_names, children, max_size=4).flatmap(
        lambda props: st.builds(
            lambda required, closed: {
                "type": "object",
                "properties": props,
                **({"required": required} if required else {}),
                **({"additionalProperties": False} if closed else {}),
            },
            st.lists(st.sampled_from(sorted(props)), unique=True) if props else st.just([]),
            st.booleans(),
        )
    )
    maps = children.map(lambda value: {"type": "object", "additionalProperties": value})
    arrays = st.builds(
        lambda items, low, extra: {
            "type": "array",
            "items": items,
            **({"minItems": low} if low else {}),
            **({"maxItems": low + extra} if extra is not None else {}),
        },
        children,
        st.integers(0, 2),
        st.one_of(st.none(), st.integers(0, 2)),
    )
    tuples = st.lists(children, min_size=1, max_size=3).flatmap(
        lambda prefix: st.integers(0, len(prefix)).map(
            lambda low: {"type": "array", "prefixItems": prefix, "items": False, "minItems": low}
        )
    )
    unions = st.lists(children, min_size=2, max_size=3).map(lambda branches: {"anyOf": branches})
    return st.one_of(objects, maps, arrays, tuples, unions)


_schemas = st.recursive(_leaf_schemas(), _extend, max_leaves=6)


@st.composite
def _parameters(draw: st.DrawFn) -> Schema:
    props = draw(st.dictionaries(_names, _schemas, max_size=4))
    required = draw(st.lists(st.sampled_from(sorted(props)), unique=True)) if props else []
    schema: Schema = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


@st.composite
def _functions(draw: st.DrawFn) -> list[FunctionSpec]:
    names = draw(st.lists(_names, min_size=1, max_size=3, unique=True))
    return [
        FunctionSpec(name=name, description="", parameters=draw(_parameters())) for name in names
    ]


# -- valid values of those schemas ---------------------------------------------------------------

_any_json = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=5,
)


def _values(schema: Any) -> st.SearchStrategy[Any]:
    if schema == {} or schema is True:
        return _any_json
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return st.one_of([_values(branch) for branch in schema["anyOf"]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([_values({**schema, "type": k}) for k in kind])
    if kind == "string":
        return st.text(min_size=schema.get("minLength", 0), max_size=schema.get("maxLength", 8))
    if kind == "integer":
        return st.integers(schema.get("minimum", -(10**12)), schema.get("maximum", 10**12))
    if kind == "number":
        low = schema.get("minimum", -1e50)
        floats = st.floats(low, 1e50, allow_nan=False).filter(lambda x: x == 0 or abs(x) > 1e-50)
        return floats | st.integers(int(low) if low > -1e50 else -(10**9), 10**9)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        if "prefixItems" in schema:
            prefix = schema["prefixItems"]
            return st.integers(schema.get("minItems", 0), len(prefix)).flatmap(
                lambda n: st.tuples(*[_values(s) for s in prefix[:n]]).map(list)
            )
        low = schema.get("minItems", 0)
        return st.lists(
            _values(schema["items"]), min_size=low, max_size=schema.get("maxItems", low + 2)
        )
    if kind == "object":
        props = schema.get("properties")
        if props is None:
            return st.dictionaries(
                st.text(max_size=4), _values(schema["additionalProperties"]), max_size=3
            )
        required = set(schema.get("required", ()))

        @st.composite
        def build(draw: st.DrawFn) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for name, sub in props.items():  # schema order: the grammar writes members in it
                if name in required or draw(st.booleans()):
                    out[name] = draw(_values(sub))
            return out

        return build()
    raise AssertionError(f"no values for {schema}")


def _call_text(name: str, arguments: Any) -> str:
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<tool_call>{body}</tool_call>"


_validators: dict[str, Callable[[Any], Any]] = {}


def _draft7(node: Any) -> Any:
    """``prefixItems`` (2020-12) as draft 7's ``items`` list, which fastjsonschema reads."""
    if isinstance(node, list):
        return [_draft7(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _draft7(value) for key, value in node.items()}
    if "prefixItems" in out:
        out["additionalItems"] = out.pop("items", True)
        out["items"] = out.pop("prefixItems")
    return out


def _validator(schema: Mapping[str, Any]) -> Callable[[Any], Any]:
    key = json.dumps(schema, sort_keys=True)
    if key not in _validators:
        _validators[key] = fastjsonschema.compile(_draft7(schema))
    return _validators[key]


def _is_valid(schema: Mapping[str, Any], value: Any) -> bool:
    try:
        _validator(schema)(value)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- properties ----------------------------------------------------------------------------------


@_SETTINGS
@given(_functions())
def test_supported_schemas_are_fully_constrained(functions: list[FunctionSpec]) -> None:
    grammar = tool_grammar(functions)
    assert grammar.unconstrained == ()
    Grammar(grammar.text)  # every rule it uses is defined


@_SETTINGS
@given(_functions(), st.randoms(use_true_random=False))
def test_every_accepted_text_is_an_answer_or_one_valid_call(
    functions: list[FunctionSpec], rng: random.Random
) -> None:
    grammar = Grammar(tool_grammar(functions).text)
    by_name = {f.name: f for f in functions}
    for _ in range(12):
        text = grammar.sample(rng)
        assert grammar.accepts(text), text
        parsed = parse_tool_calls(text, functions, "json")
        if not text.startswith("<tool_call>"):
            assert parsed.calls == (), text
            assert "<tool_call" not in text
            continue
        (call,) = parsed.calls
        assert call.is_valid, (text, call.invalid_reason)
        assert call.name in by_name
        assert call.arguments is not None
        schema = by_name[call.name].parameters
        assert _is_valid(schema, dict(call.arguments)), (text, schema)


@_SETTINGS
@given(st.data())
def test_valid_calls_are_accepted(data: st.DataObject) -> None:
    functions = data.draw(_functions())
    function = data.draw(st.sampled_from(functions))
    arguments = data.draw(_values(function.parameters))
    assert _is_valid(function.parameters, arguments)
    text = _call_text(function.name, arguments)
    assert Grammar(tool_grammar(functions).text).accepts(text), text


def _mutations(schema: Schema, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name in schema.get("required", ()):
        out.append({k: v for k, v in arguments.items() if k != name})
    for name in arguments:
        for wrong in ([], "x", 1.5, None, {"k": 1}, True):
            out.append({**arguments, name: wrong})
    out.append({**arguments, "zz_not_a_parameter": 1})
    return out


@_SETTINGS
@given(st.data())
def test_invalid_arguments_are_refused(data: st.DataObject) -> None:
    function = FunctionSpec(name="f", description="", parameters=data.draw(_parameters()))
    arguments = data.draw(_values(function.parameters))
    grammar = Grammar(tool_grammar([function]).text)
    for wrong in _mutations(function.parameters, arguments):
        if not _is_valid(function.parameters, wrong):
            assert not grammar.accepts(_call_text("f", wrong)), wrong


# -- choices -------------------------------------------------------------------------------------

CALC = FunctionSpec(
    name="calculator",
    description="",
    parameters={
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
        "additionalProperties": False,
    },
)
CLOCK = FunctionSpec(
    name="current_time",
    description="",
    parameters={"type": "object", "properties": {"timezone": {"type": "string"}}},
)
CALC_CALL = _call_text("calculator", {"expression": "1 + 1"})
CLOCK_CALL = _call_text("current_time", {})


@pytest.mark.parametrize(
    ("choice", "accepted", "refused"),
    [
        ("auto", [CALC_CALL, CLOCK_CALL, "It is 2."], []),
        ("required", [CALC_CALL, CLOCK_CALL], ["It is 2."]),
        ("none", ["It is 2."], [CALC_CALL, CLOCK_CALL]),
        ("calculator", [CALC_CALL], [CLOCK_CALL, "It is 2."]),
    ],
)
def test_choices(choice: str, accepted: list[str], refused: list[str]) -> None:
    grammar = Grammar(build_grammar([CALC, CLOCK], choice))
    for text in accepted:
        assert grammar.accepts(text), text
    for text in refused:
        assert not grammar.accepts(text), text


@pytest.mark.parametrize(
    "text",
    [
        CALC_CALL.replace("<tool_call>", "<tool_call>\n").replace("</tool_call>", "\n</tool_call>"),
        '<tool_call>{"name":"calculator","arguments":{"expression":"2"}}</tool_call>',
        "A < B and <b>bold, 3 <= 4 <",
        "Two\nlines",
    ],
)
def test_accepted_forms(text: str) -> None:
    assert Grammar(build_grammar([CALC, CLOCK])).accepts(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " leading space",
        "\nleading newline",
        "text then <tool_call>" + CALC_CALL.removeprefix("<tool_call>"),
        "an answer quoting <tool_call",
        "<b>an answer starting with a tag</b>",
        "see <tool>",
        '<tool_result id="1">',
        "The answer is 434.</tool_result>",
        "<|im_end|>",
        CALC_CALL + " and more",
        CALC_CALL + CLOCK_CALL,
        _call_text("calculator", {"expression": 1}),
        _call_text("calculator", {}),
        _call_text("unknown", {}),
        CALC_CALL.replace('{"expression"', '{  "expression"'),
    ],
)
def test_refused_forms(text: str) -> None:
    assert not Grammar(build_grammar([CALC, CLOCK])).accepts(text)


def test_errors_name_the_problem() -> None:
    with pytest.raises(GrammarError, match="'search' is not an offered tool; offered: calculator"):
        tool_grammar([CALC], "search")
    with pytest.raises(GrammarError, match="needs at least one offered tool"):
        tool_grammar([], "required")


def test_copied_arguments_are_spans_and_numbers_of_the_users_words() -> None:
    from toolwire_llamacpp._copies import Copies

    units = FunctionSpec(
        name="convert_units",
        description="",
        parameters={
            "type": "object",
            "properties": {
                "value": {"type": "number"},
                "from_unit": {"type": "string"},
                "to_unit": {"type": "string"},
            },
            "required": ["value", "from_unit", "to_unit"],
        },
    )
    copies = Copies.from_texts(["Convert 5 miles to kilometers?"])
    grammar = Grammar(tool_grammar([units, CLOCK], "required", copies=copies).text)
    good = {"value": 5, "from_unit": "miles", "to_unit": "kilometers"}
    assert grammar.accepts(_call_text("convert_units", good))
    # Words the user did not write, and numbers they did not write, cannot be produced.
    assert not grammar.accepts(_call_text("convert_units", {**good, "to_unit": "km"}))
    assert not grammar.accepts(_call_text("convert_units", {**good, "value": 8}))
    assert not grammar.accepts(_call_text("convert_units", {**good, "to_unit": "kilometers?"}))
    assert grammar.accepts(_call_text("current_time", {"timezone": "Convert 5 miles"}))
    assert not grammar.accepts(_call_text("current_time", {"timezone": "UTC"}))


def test_a_kind_of_value_with_nothing_to_copy_stays_free() -> None:
    from toolwire_llamacpp._copies import Copies

    count = FunctionSpec(
        name="count",
        description="",
        parameters={"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}},
    )
    copies = Copies.from_texts(["hello there"])
    assert copies.numbers == ()
    grammar = Grammar(tool_grammar([CALC, count], "required", copies=copies).text)
    assert grammar.accepts(_call_text("calculator", {"expression": "hello there"}))
    assert not grammar.accepts(_call_text("calculator", {"expression": "2 + 2"}))
    assert grammar.accepts(_call_text("count", {"n": 7}))
    written = Copies.from_texts(["How many seconds are in a week, 2,480 or 17.5% or -3?"])
    assert written.numbers == ("2480", "17.5", "-3", "1")
    assert written.integers() == ("2480", "-3", "1")
    # Bounds still hold: -3 is not a count.
    bounded = Grammar(tool_grammar([count], "required", copies=written).text)
    assert bounded.accepts(_call_text("count", {"n": 2480}))
    assert not bounded.accepts(_call_text("count", {"n": -3}))


def test_long_strings_are_capped_when_asked() -> None:
    grammar = Grammar(tool_grammar([CALC], max_string_length=5).text)
    assert grammar.accepts(_call_text("calculator", {"expression": "12345"}))
    assert not grammar.accepts(_call_text("calculator", {"expression": "123456"}))


# -- what cannot be constrained is said --------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"type": "string", "pattern": "^a"}, "$.x: the string's 'pattern' is not enforced"),
        ({"type": "string", "format": "date"}, "'format' is not enforced"),
        ({"type": "number", "maximum": 3}, "maximum is not enforced"),
        ({"type": "integer", "minimum": 5}, "bounds are not enforced"),
        ({"type": "integer", "multipleOf": 2}, "'multipleOf'"),
        ({"type": "array", "items": {}, "uniqueItems": True}, "'uniqueItems' is not enforced"),
        ({"not": {"type": "null"}}, "the keyword 'not' is not enforced"),
        ({"allOf": [{"type": "string"}, {"minLength": 2}]}, "'allOf' is not enforced"),
        ({"oneOf": [{"type": "number"}, {"type": "integer"}]}, "'oneOf' is treated as 'anyOf'"),
        ({"minimum": 3}, "held to any JSON value"),
    ],
)
def test_unconstrained_parts_are_reported(schema: Schema, fragment: str) -> None:
    function = FunctionSpec(
        name="f",
        description="",
        parameters={"type": "object", "properties": {"x": schema}, "required": ["x"]},
    )
    grammar = tool_grammar([function])
    assert any(fragment in note and note.startswith("f: $.x") for note in grammar.unconstrained), (
        grammar.unconstrained
    )
    Grammar(grammar.text)


def test_an_unresolvable_ref_never_reaches_the_grammar() -> None:
    # The definition check refuses it when the function is made, so no grammar is built for it.
    with pytest.raises(ToolDefinitionError, match="points at nothing"):
        FunctionSpec(
            name="f",
            description="",
            parameters={"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}},
        )


def test_disjoint_one_of_is_exact() -> None:
    function = FunctionSpec(
        name="f",
        description="",
        parameters={
            "type": "object",
            "properties": {"x": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
        },
    )
    assert tool_grammar([function]).unconstrained == ()


def test_local_references_and_recursion() -> None:
    parameters = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/node"}},
        "required": ["tree"],
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "label": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
                "required": ["label"],
            }
        },
    }
    function = FunctionSpec(name="f", description="", parameters=parameters)
    built = tool_grammar([function])
    assert built.unconstrained == ()
    grammar = Grammar(built.text)
    deep = {"tree": {"label": "a", "children": [{"label": "b", "children": [{"label": "c"}]}]}}
    assert grammar.accepts(_call_text("f", deep))
    assert not grammar.accepts(_call_text("f", {"tree": {"children": []}}))


# -- llama.cpp's own engine --------------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_llama_cpp_agrees(
    llama_accepts: Callable[[str, str], bool | None], data: st.DataObject
) -> None:
    functions = data.draw(_functions())
    function = data.draw(st.sampled_from(functions))
    arguments = data.draw(_values(function.parameters))
    text = tool_grammar(functions).text
    verdict = llama_accepts(text, _call_text(function.name, arguments))
    assume(verdict is not None)
    assert verdict
    rng = data.draw(st.randoms(use_true_random=False))
    sampled = Grammar(text).sample(rng)
    assert llama_accepts(text, sampled) in (True, None), sampled
    for wrong in _mutations(function.parameters, arguments)[:4]:
        if not _is_valid(function.parameters, wrong):
            assert not llama_accepts(text, _call_text(function.name, wrong)), wrong


def test_llama_cpp_takes_the_answer_rules(
    llama_accepts: Callable[[str, str], bool | None],
) -> None:
    text = build_grammar([CALC, CLOCK])
    assert llama_accepts(text, "It is 434.")
    assert llama_accepts(text, "a <b> c")
    assert not llama_accepts(text, "<b> c")
    assert not llama_accepts(text, "see <tool_result")
    assert not llama_accepts(text, " It is 434.")


QUANTITY = FunctionSpec(
    name="convert_units",
    description="",
    parameters={
        "type": "object",
        "properties": {
            "quantity": {"type": "string", "pattern": "[0-9]\\s*[^\\s0-9]"},
            "into_unit": {"type": "string", "pattern": "^[^0-9]*$"},
        },
        "required": ["quantity", "into_unit"],
    },
)


QUANTITY_WORDS = FunctionSpec(
    name="convert_units",
    description="",
    parameters={
        "type": "object",
        "properties": {
            "quantity": {"type": "string", "pattern": "[0-9]|\\b(a|an|one)\\s"},
            "into_unit": {"type": "string", "pattern": "^[^0-9]*$"},
        },
        "required": ["quantity", "into_unit"],
    },
)


def test_a_copy_is_held_to_the_arguments_pattern() -> None:
    from toolwire_llamacpp._copies import Copies

    copies = Copies.from_texts(["How many pounds is 3 kg?"])
    built = tool_grammar([QUANTITY], "required", copies=copies)
    grammar = Grammar(built.text)
    assert grammar.accepts(_call_text("convert_units", {"quantity": "3 kg", "into_unit": "pounds"}))
    assert grammar.accepts(
        _call_text("convert_units", {"quantity": "is 3 kg", "into_unit": "How many pounds"})
    )
    # No span without a number and a word after it is a quantity; none with a digit a unit.
    assert not grammar.accepts(
        _call_text("convert_units", {"quantity": "pounds", "into_unit": "kg"})
    )
    assert not grammar.accepts(
        _call_text("convert_units", {"quantity": "3 kg", "into_unit": "3 kg"})
    )
    assert built.unconstrained == ()


def test_distinct_copies_keep_a_later_argument_off_the_first_ones_words() -> None:
    from toolwire_llamacpp._copies import Copies

    copies = Copies.from_texts(["How many pounds is 3 kg?"])
    apart = Grammar(tool_grammar([QUANTITY], "required", copies=copies, distinct_copies=True).text)
    together = Grammar(tool_grammar([QUANTITY], "required", copies=copies).text)
    same = _call_text("convert_units", {"quantity": "3 kg", "into_unit": "kg"})
    assert together.accepts(same)
    assert not apart.accepts(same)
    assert not apart.accepts(
        _call_text("convert_units", {"quantity": "pounds is 3 kg", "into_unit": "pounds"})
    )
    for good in (
        {"quantity": "3 kg", "into_unit": "pounds"},
        {"quantity": "is 3 kg", "into_unit": "How many pounds"},
    ):
        assert apart.accepts(_call_text("convert_units", good))


def test_distinct_copies_allow_a_span_the_user_wrote_twice() -> None:
    from toolwire_llamacpp._copies import Copies

    copies = Copies.from_texts(["3 kg or kg?"])
    assert copies.apart('"3 kg"', '"kg"')
    grammar = Grammar(
        tool_grammar([QUANTITY], "required", copies=copies, distinct_copies=True).text
    )
    assert grammar.accepts(_call_text("convert_units", {"quantity": "3 kg", "into_unit": "kg"}))


def test_distinct_copies_give_way_on_a_long_message() -> None:
    from toolwire_llamacpp import _grammar
    from toolwire_llamacpp._copies import Copies

    words = [chr(97 + n // 26) + chr(97 + n % 26) for n in range(120)]
    text = " ".join(f"{n} kg {word}" for n, word in enumerate(words))
    copies = Copies.from_texts([text])
    plain = tool_grammar([QUANTITY], "required", copies=copies).text
    assert tool_grammar([QUANTITY], "required", copies=copies, distinct_copies=True).text == plain
    quantities = [s for s in copies.spans if re.search("[0-9]", s)]
    assert len(quantities) * (len(copies.spans) - len(quantities)) > _grammar.MAX_APART_LITERALS


def test_a_retry_cannot_copy_the_refused_value_again() -> None:
    from toolwire_llamacpp._copies import Copies

    copies = Copies.from_texts(["How many seconds are there in a week?"])
    refused = {"convert_units": [{"quantity": "a week", "into_unit": "are there in"}]}
    retry = Grammar(
        tool_grammar(
            [QUANTITY_WORDS], "required", copies=copies, distinct_copies=True, refused=refused
        ).text
    )
    again = {"quantity": "a week", "into_unit": "are there in"}
    assert not retry.accepts(_call_text("convert_units", again))
    assert retry.accepts(_call_text("convert_units", {**again, "into_unit": "seconds"}))
    assert retry.accepts(_call_text("convert_units", {**again, "into_unit": "How many seconds"}))
    first = Grammar(tool_grammar([QUANTITY_WORDS], "required", copies=copies).text)
    assert first.accepts(_call_text("convert_units", again))


def test_a_tools_only_copied_string_cannot_take_a_refused_value() -> None:
    from toolwire_llamacpp._copies import Copies

    copies = Copies.from_texts(["What is 17.5% of 2480?"])
    refused = {"calculator": [{"expression": "What is 17.5%"}]}
    retry = Grammar(tool_grammar([CALC], "required", copies=copies, refused=refused).text)
    assert not retry.accepts(_call_text("calculator", {"expression": "What is 17.5%"}))
    assert retry.accepts(_call_text("calculator", {"expression": "17.5% of 2480"}))
    unchanged = tool_grammar([CALC], "required", copies=copies).text
    assert (
        tool_grammar([CALC], "required", copies=copies, refused={"other": [{}]}).text == unchanged
    )


def test_a_tools_pattern_is_run_on_the_question_in_linear_time() -> None:
    """The pattern comes from a tool (an MCP server's, say), the text from the question: a
    backtracking engine would take 2**64 steps here."""
    from toolwire_llamacpp._grammar import _pattern_test

    test = _pattern_test("^(a+)+$")
    assert test is not None
    assert not test("a" * 64 + "!")
    assert test("a" * 64)
    # An expression RE2 cannot run offers no copy rather than a backtracking one.
    assert _pattern_test("^(?=a)a$") is None
