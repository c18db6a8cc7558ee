"""Definitions from other hosts: every problem refused with its path, and normalised into schemas
that are sound on every wire."""

from __future__ import annotations

import json
import re
from typing import Any

import fastjsonschema
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire.tools import (
    ArgumentsInvalid,
    Tool,
    ToolDefinitionError,
    normalize_schema,
    strict_projection,
)
from toolwire.tools._normalize import TYPE_WORDS
from toolwire.tools._schemacheck import JSON_TYPES, schema_problems
from toolwire.tools._validation import compiled_validator

METASCHEMA = jsonschema.Draft202012Validator.META_SCHEMA
# The words of the issue, and their spellings in other languages.
WILD_WORDS = ["float", "dict", "any", "tuple", "String", "HashMap", "long", "char", "", "List[str]"]


def _handler(arguments: dict[str, Any]) -> dict[str, Any]:
    return arguments


def obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


def used_type_words(node: Any) -> set[str]:
    """Every value of a "type" keyword anywhere in a schema (wire tools included)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "type" and isinstance(value, str):
                found.add(value)
            elif key == "type" and isinstance(value, list):
                found.update(v for v in value if isinstance(v, str))
            elif key not in ("enum", "const", "default", "examples"):
                found |= used_type_words(value)
    elif isinstance(node, list):
        for item in node:
            found |= used_type_words(item)
    return found


def assert_sound(schema: dict[str, Any]) -> None:
    """What "sound" means: the metaschema, our check, and the validator all accept it."""
    jsonschema.validate(schema, METASCHEMA)
    assert schema_problems(schema) == []
    compiled_validator(schema)
    assert used_type_words(schema) <= set(JSON_TYPES)


# -- hand-written ---------------------------------------------------------------------------------

PLACES: list[tuple[str, Any, str]] = [
    ("property", lambda t: obj({"size": {"type": t}}), "$.properties.size.type"),
    (
        "array items",
        lambda t: obj({"xs": {"type": "array", "items": {"type": t}}}),
        "$.properties.xs.items.type",
    ),
    (
        "nested object",
        lambda t: obj({"m": obj({"inner": {"type": t}})}),
        "$.properties.m.properties.inner.type",
    ),
    (
        "anyOf member",
        lambda t: obj({"u": {"anyOf": [{"type": "string"}, {"type": t}]}}),
        "$.properties.u.anyOf[1].type",
    ),
    (
        "additionalProperties",
        lambda t: obj({"d": {"type": "object", "additionalProperties": {"type": t}}}),
        "$.properties.d.additionalProperties.type",
    ),
    (
        "prefixItems",
        lambda t: obj({"p": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": t}]}}),
        "$.properties.p.prefixItems[1].type",
    ),
    (
        "type list",
        lambda t: obj({"n": {"type": [t, "null"]}}),
        "$.properties.n.type[0]",
    ),
    (
        "$defs",
        lambda t: {**obj({"r": {"$ref": "#/$defs/R"}}), "$defs": {"R": {"type": t}}},
        "$.$defs.R.type",
    ),
]


@pytest.mark.parametrize("word", WILD_WORDS)
@pytest.mark.parametrize(("place", "build", "path"), PLACES, ids=[p[0] for p in PLACES])
def test_a_wild_type_word_is_refused_at_its_path_and_normalised(
    word: str, place: str, build: Any, path: str
) -> None:
    schema = build(word)
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_schema("sizes", "Sizes.", schema, _handler)
    assert caught.value.problems == (caught.value.problems[0],)
    problem = caught.value.problems[0]
    assert problem.startswith(f"{path}: {word!r} is not a JSON Schema type"), problem
    assert "sizes" in str(caught.value)
    assert "normalize=True" in str(caught.value)

    made = Tool.from_schema("sizes", "Sizes.", schema, _handler, normalize=True)
    assert_sound(dict(made.parameters))
    assert made.schema_notes
    assert made.schema_notes[0].startswith(path.rsplit("[", 1)[0])
    projection = made.strict_projection()
    if projection.schema is not None:
        assert_sound(dict(projection.schema))
    else:
        assert all(
            not re.search(r"type .* is not a JSON Schema type", p) for p in projection.problems
        )


def test_every_problem_is_named_at_once() -> None:
    schema = obj(
        {
            "size": {"type": "float"},
            "meta": {"type": "dict", "properties": {"k": {"type": "String"}}},
            "tags": {"type": "array", "items": {"type": "char"}},
            "mode": {"type": "string", "optional": True},
            "count": {"type": "integer", "minimum": "one"},
            "code": {"type": "string", "pattern": "("},
            "other": {"$ref": "#/$defs/missing"},
        },
        ["size"],
    )
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_schema("many", "Many problems.", schema, _handler)
    problems = caught.value.problems
    assert [p.split(":")[0] for p in problems] == [
        "$.properties.size.type",
        "$.properties.meta.type",
        "$.properties.meta.properties.k.type",
        "$.properties.tags.items.type",
        "$.properties.count.minimum",
        "$.properties.code.pattern",
        "$.properties.other.$ref",
    ]
    assert (
        problems[0] == "$.properties.size.type: 'float' is not a JSON Schema type; use \"number\""
    )
    assert "(7 problems)" in str(caught.value)
    assert "4 of them" in str(caught.value)  # what normalize=True would fix


def test_a_remote_reference_is_refused_before_anything_fetches_it() -> None:
    schema = obj({"a": {"$ref": "https://example.com/schema.json"}})
    with pytest.raises(ToolDefinitionError, match=r"\$\.properties\.a\.\$ref: .* refers outside"):
        Tool.from_schema("remote", "", schema, _handler)


def test_a_reference_under_a_keyword_no_validator_reads_is_still_checked() -> None:
    # Validators follow a $ref wherever it stands; one that points nowhere must not get through.
    schema = {"a": {"$ref": "("}, "anyOf": [False]}
    assert schema_problems(schema) == [
        "$.a.$ref: '(' refers outside the schema; only local "
        'references ("#/$defs/…") are followed, so put the '
        "referenced schema under $defs"
    ]
    assert schema_problems({"x-meta": [{"$ref": "#/nowhere"}]}) == [
        "$.x-meta[0].$ref: '#/nowhere' points at nothing in this schema"
    ]
    assert schema_problems({"x-meta": {"note": "no reference here"}}) == []
    assert schema_problems({"enum": [{"type": None, "$ref": "#/a"}]}) == [
        "$.enum[0].$ref: '#/a' points at nothing in this schema"
    ]
    assert schema_problems({"enum": ["a", {"b": 1}], "default": "a"}) == []


def test_a_reference_must_point_at_a_schema() -> None:
    # A validator compiles what a $ref points at as a schema: null or a number is not one.
    assert schema_problems({"a": None, "minimum": 0, "$ref": "#/a"}) == [
        "$.$ref: '#/a' points at null, which is not a schema (an object, or true or false)"
    ]
    assert schema_problems({"x": [1, 2], "$ref": "#/x/1"}) == [
        "$.$ref: '#/x/1' points at 2, which is not a schema (an object, or true or false)"
    ]
    assert schema_problems({"$defs": {"no": False}, "$ref": "#/$defs/no"}) == []


def test_tools_made_directly_are_checked_too() -> None:
    with pytest.raises(ToolDefinitionError, match=r"tool direct: .*\$\.properties\.x\.type"):
        Tool(name="direct", parameters=obj({"x": {"type": "double"}}), external=True)


def test_normalize_maps_the_dialects_and_lists_every_change() -> None:
    wild = {
        "properties": {
            "size": "float",
            "when": {"type": "String", "nullable": True},
            "must": {"type": "int", "required": True},
            "maybe": {"type": "bool", "optional": True},
            "pair": {"type": "Tuple", "items": {"type": "long"}},
            "choice": {"type": "string", "enum": ["a", "b"], "nullable": True},
        },
        "required": ["maybe"],
    }
    before = json.dumps(wild)
    schema, notes = normalize_schema(wild)
    assert json.dumps(wild) == before  # the input is not changed
    assert schema == {
        "type": "object",
        "properties": {
            "size": {"type": "number"},
            "when": {"type": ["string", "null"]},
            "must": {"type": "integer"},
            "maybe": {"type": "boolean"},
            "pair": {"type": "array", "items": {"type": "integer"}},
            "choice": {"type": ["string", "null"], "enum": ["a", "b", None]},
        },
        "required": ["must"],
    }
    assert_sound(schema)
    assert len(notes) == 11, notes
    assert notes[0] == '$: the root had no "type"; it became "type": "object"'
    assert '$.properties.size: the type word \'float\' became a schema {"type": "number"}' in notes
    assert "$.properties.maybe.optional: 'optional: true' became optional" in notes


def test_a_standard_schema_normalises_to_itself_without_notes() -> None:
    schema = obj({"q": {"type": "string"}, "n": {"type": ["integer", "null"]}}, ["q"])
    assert normalize_schema(schema) == (schema, ())


def test_the_type_word_table_maps_to_standard_types_only() -> None:
    assert set(TYPE_WORDS.values()) <= {*JSON_TYPES, ""}
    for word in WILD_WORDS:
        schema, notes = normalize_schema(obj({"v": {"type": word}}))
        assert notes, word
        assert schema_problems(schema) == [], word


def test_what_normalising_cannot_fix_is_still_refused_with_its_path() -> None:
    schema = obj({"v": {"type": "quaternion"}, "w": {"type": "float"}})
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_schema("q", "", schema, _handler, normalize=True)
    assert caught.value.problems == (
        "$.properties.v.type: 'quaternion' is not a JSON Schema type; valid types: array, "
        "boolean, integer, null, number, object, string",
    )


# -- generated ----------------------------------------------------------------------------------

STANDARD_LEAVES = st.sampled_from(
    [{"type": t} for t in ("string", "integer", "number", "boolean", "null")]
    + [{"type": ["string", "null"]}, {"enum": ["a", 1]}, {}]
)
WILD_LEAVES = st.sampled_from(WILD_WORDS).map(lambda word: {"type": word})
NAMES = st.text(alphabet="abcxyz_", min_size=1, max_size=6)


def trees(leaves: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.dictionaries(NAMES, inner, min_size=1, max_size=3).map(obj),
            inner.map(lambda item: {"type": "array", "items": item}),
            st.lists(inner, min_size=1, max_size=3).map(lambda members: {"anyOf": members}),
            inner.map(lambda value: {"type": "object", "additionalProperties": value}),
        ),
        max_leaves=8,
    )


def wild_paths(node: Any, path: str = "$") -> list[str]:
    """Where the generated schema holds a wild type word."""
    found: list[str] = []
    if isinstance(node, dict):
        if node.get("type") in WILD_WORDS and node.get("type") not in JSON_TYPES:
            found.append(f"{path}.type")
        for key in ("items", "additionalProperties"):
            if key in node:
                found += wild_paths(node[key], f"{path}.{key}")
        for name, sub in (node.get("properties") or {}).items():
            found += wild_paths(sub, f"{path}.properties.{name}")
        for index, sub in enumerate(node.get("anyOf") or ()):
            found += wild_paths(sub, f"{path}.anyOf[{index}]")
    return found


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    properties=st.dictionaries(NAMES, trees(STANDARD_LEAVES | WILD_LEAVES), min_size=1, max_size=4)
)
def test_generated_wild_schemas_are_refused_whole_and_normalised_sound(
    properties: dict[str, Any],
) -> None:
    schema = obj(properties)
    expected = wild_paths(schema)
    problems = schema_problems(schema)
    assert [p.split(": ")[0] for p in problems] == expected
    normalized, notes = normalize_schema(schema)
    assert len(notes) == len(expected)
    assert_sound(normalized)
    made = Tool.from_schema("generated", "", normalized, _handler)
    projection = made.strict_projection()
    if projection.schema is not None:
        assert_sound(dict(projection.schema))
    # Any call the model could make is accepted or refused, never an exception of the schema.
    for arguments in ({}, dict.fromkeys(properties, "text"), {key: [1] for key in properties}):
        try:
            made.validate(arguments)
        except ArgumentsInvalid as exc:
            problems = exc.problems
        else:
            problems = ("accepted",)
        assert problems


JUNK = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["(", "x", "#/a", "string"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(
            ["type", "properties", "items", "anyOf", "required", "minimum", "minLength",
             "pattern", "$ref", "enum", "additionalProperties", "$defs", "a", "not"]
        ),
        inner,
        max_size=4,
    ),
    max_leaves=10,
)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=JUNK)
def test_a_schema_the_check_passes_is_valid_by_the_metaschema_and_compiles(schema: Any) -> None:
    if not isinstance(schema, dict) or schema_problems(schema):
        return
    jsonschema.validate(schema, METASCHEMA)
    fastjsonschema.compile(schema)


# -- on the wire ----------------------------------------------------------------------------------


@pytest.mark.parametrize("word", WILD_WORDS)
def test_normalised_wild_tools_render_sound_on_every_native_wire(word: str) -> None:
    openai = pytest.importorskip("toolwire_openai")
    anthropic = pytest.importorskip("toolwire_anthropic")
    schema = obj(
        {
            "a": {"type": word, "description": "A."},
            "b": {"type": "array", "items": {"type": word}},
            "c": {"anyOf": [{"type": word}, {"type": "string"}]},
            "d": obj({"e": {"type": word}}, ["e"]),
        },
        ["a"],
    )
    made = Tool.from_schema("wild", "Wild.", schema, _handler, normalize=True)
    spec = made.function_spec()
    for binds in (False, True):
        rendered = [
            openai.render_chat_tools([spec], binds_strict=binds)[0]["function"],
            openai.render_responses_tools([spec], binds_strict=binds)[0],
        ]
        for body in rendered:
            assert_sound(body["parameters"])
            if body.get("strict"):
                assert binds
    assert_sound(anthropic.render_tools([spec])[0]["input_schema"])
    projection = strict_projection(made.parameters)
    assert all("is not a JSON Schema type" not in p for p in projection.problems)


def test_a_schema_the_validator_still_cannot_compile_refuses_the_call_not_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolwire.tools import _validation

    made = Tool.from_schema("gap", "", obj({"a": {"type": "string"}}), _handler)

    def broken(schema: Any, *, all_errors: bool = False) -> Any:
        raise ToolDefinitionError("invalid JSON Schema: a gap in the definition check")

    monkeypatch.setattr(_validation, "compiled_validator", broken)
    with pytest.raises(ArgumentsInvalid, match="gap in the definition check") as caught:
        made.validate({"a": "x"})
    assert caught.value.tool == "gap"


def test_a_root_of_any_type_becomes_an_object_with_a_note() -> None:
    schema, notes = normalize_schema({"type": "any", "properties": {"n": {"type": "int"}}})
    assert schema == {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert notes[0].startswith("$: the root accepted any value")
    assert_sound(schema)


def test_strict_projection_names_an_unknown_type_at_its_node_and_never_sends_it() -> None:
    # Schemas that skipped the definition check (a resolver's own FunctionSpec, say).
    schema = obj(
        {
            "meta": {"type": "dict", "properties": {"k": {"type": "string"}}},
            "size": {"anyOf": [{"type": "any"}, {"type": "number"}]},
        },
        ["meta"],
    )
    projection = strict_projection(schema)
    assert projection.schema is None
    assert [p.split(":")[0] for p in projection.problems] == ["meta", "size(anyOf 0)"]
    assert all(
        "is not a JSON Schema type, so strict mode cannot send it" in p for p in projection.problems
    )
    assert not any("properties" in p for p in projection.problems)
