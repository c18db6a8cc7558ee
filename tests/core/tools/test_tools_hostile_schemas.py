"""Schemas from hostile or careless authors: patterns that backtrack, references that never end,
words JSON Schema ignores, and whatever else a schema holds: none may stall or end a run."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import fastjsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loop_support import make_host, scripted_loop

from toolwire import Tool, ToolContext, ToolResultMessage, ToolStatus
from toolwire.testing import tool_call
from toolwire.tools import ArgumentsInvalid, ToolDefinitionError, lint_tool
from toolwire.tools._patterns import linear_pattern, unsupported_construct
from toolwire.tools._validation import _EXTRA_FORMATS, _is_email

EVIL = r"^([a-zA-Z0-9]+)+@example\.com$"


def _echo(arguments: dict[str, Any]) -> dict[str, Any]:
    return arguments


def obj(properties: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **more}


def refusals(tool: Tool, arguments: Any) -> tuple[str, ...]:
    with pytest.raises(ArgumentsInvalid) as caught:
        tool.validate(arguments)
    return caught.value.problems


# -- patterns -------------------------------------------------------------------------------------


def test_backtracking_shapes_finish_in_a_bounded_time() -> None:
    # Each of these takes Python's matcher 2**n steps (or n**2 for the email format) on such
    # inputs: run where a hang costs a killed child, not the test session.
    script = textwrap.dedent(
        f"""
        from toolwire import Tool
        from toolwire.tools import ArgumentsInvalid

        def refused(tool, arguments):
            try:
                tool.validate(arguments)
            except ArgumentsInvalid:
                return True
            return False

        evil = {EVIL!r}
        for normalize in (False, True):  # a plugin's definition, an MCP server's
            email = Tool.from_schema(
                "email", "", {{"type": "object", "properties": {{
                    "email": {{"type": "string", "pattern": evil}},
                    "contact": {{"type": "string", "format": "email"}},
                }}}}, lambda a: a, normalize=normalize,
            )
            assert refused(email, {{"email": "a" * 100_000 + "!"}})
            assert not refused(email, {{"email": "ann@example.com"}})
            assert refused(email, {{"contact": "a.." * 300_000}})
        keys = Tool.from_schema(
            "keys", "", {{"type": "object", "patternProperties": {{"^(a|aa)+$": {{}}}},
                          "additionalProperties": False}}, lambda a: a,
        )
        assert refused(keys, {{"a" * 5_000 + "!": 1}})
        assert not refused(keys, {{"aaaa": 1}})
        print("bounded")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "bounded", done.stderr


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        (r"^(?=.*[A-Z]).{8,}$", "a lookahead (?=…)"),
        (r"^(?!admin).*$", "a negative lookahead (?!…)"),
        (r"(?<=@)\w+", "a lookbehind (?<=…)"),
        (r"(?<!\.)x", "a negative lookbehind (?<!…)"),
        (r"(a)\1", "a back reference (\\1)"),
        (r"(?P<n>a)(?P=n)", "a back reference (?P=…)"),
        (r"(?>a+)b", "an atomic group (?>…)"),
        (r"a++b", "a possessive quantifier (*+, ++, ?+)"),
        (r"a{2}+", "a possessive quantifier (*+, ++, ?+)"),
        (r"[\1]", "an octal escape (\\1)"),
        (r"^a\Z", "Python's end of text (\\Z; a JSON Schema pattern writes $)"),
    ],
)
def test_a_pattern_only_a_backtracking_matcher_runs_is_refused_at_definition(
    pattern: str, construct: str
) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_schema("signup", "", obj({"code": {"type": "string", "pattern": pattern}}), _echo)
    (problem,) = caught.value.problems
    assert problem.startswith(
        f"$.properties.code.pattern: the pattern {pattern!r} uses {construct}"
    )
    assert str(caught.value).startswith("tool signup: invalid parameter schema")
    with pytest.raises(ToolDefinitionError) as named:
        Tool.from_schema("keyed", "", {"type": "object", "patternProperties": {pattern: {}}}, _echo)
    assert f'$.patternProperties["{pattern}"]' in named.value.problems[0].replace("\\\\", "\\")


@pytest.mark.parametrize(
    "pattern",
    [r"a+?b", r"[+*]+", r"\++", r"[]a]+", r"^\d{3}-\d{4}$", r"(?:ab)+c", r"(?P<y>\d{4})"],
)
def test_patterns_rE2_runs_are_not_mistaken_for_backtracking_ones(pattern: str) -> None:
    assert unsupported_construct(pattern) is None
    linear_pattern(pattern)


def test_patterns_keep_their_json_schema_meaning() -> None:
    tool = Tool.from_schema(
        "codes",
        "",
        obj(
            {
                "ascii": {"type": "string", "pattern": r"^[\u0000-\u007F]*$"},
                "emoji": {"type": "string", "pattern": r"^\uD83D\uDE00$"},
                "digits": {"type": "string", "pattern": r"^\d+$"},
                "end": {"type": "string", "pattern": "^a$"},
            }
        ),
        _echo,
    )
    assert tool.validate({"ascii": "plain", "emoji": "😀", "digits": "042", "end": "a"})
    for arguments in ({"ascii": "é"}, {"emoji": "x"}, {"digits": "٣"}, {"end": "a\n"}):
        assert refusals(tool, arguments)
    # A lone surrogate (a file name that is not UTF-8) is checked, not a crash.
    assert refusals(tool, {"ascii": "report-\udcff"})
    assert tool.validate({"end": "a"})


def test_formats_are_checked_without_backtracking_and_mean_what_they_meant() -> None:
    original = fastjsonschema.draft07.CodeGeneratorDraft07.FORMAT_REGEXS
    email = re.compile(original["email"])
    idn = re.compile(original["idn-hostname"])
    ours = linear_pattern(str(_EXTRA_FORMATS["idn-hostname"]), anchored=True, python=True)

    @settings(max_examples=3000, deadline=None)
    @given(text=st.text(alphabet="ax-_.9Z@n", max_size=14))
    def same(text: str) -> None:
        for candidate in (text, "xn--" + text):
            assert _is_email(candidate) == bool(email.match(candidate)), candidate
            assert ours.match(candidate) == bool(idn.match(candidate)), candidate

    same()


# -- references -----------------------------------------------------------------------------------

LOOPS = [
    (
        {
            "type": "object",
            "$ref": "#/definitions/a",
            "definitions": {"a": {"$ref": "#/definitions/a"}},
        },
        "$.definitions.a.$ref",
    ),
    (
        obj(
            {"x": {"$ref": "#/$defs/a"}},
            **{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}},
        ),
        "$.$defs.b.allOf[0].$ref",
    ),
    (obj({"x": {"type": "string"}}, anyOf=[{"$ref": "#"}]), "$.anyOf[0].$ref"),
    (
        obj({}, **{"not": {"$ref": "#/$defs/n"}, "$defs": {"n": {"not": {"$ref": "#/$defs/n"}}}}),
        "$.$defs.n.not.$ref",
    ),
]


@pytest.mark.parametrize(("schema", "where"), LOOPS)
def test_a_reference_back_to_itself_is_refused_at_definition(schema: Any, where: str) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_schema("selfloop", "", schema, _echo)
    (problem,) = caught.value.problems
    assert problem.startswith(
        f"{where}: leads back to the same schema without going into the value"
    )
    assert str(caught.value).startswith("tool selfloop: invalid parameter schema")


def test_a_recursive_schema_that_goes_into_the_value_is_kept_and_bounded() -> None:
    tree = obj(
        {"node": {"$ref": "#/$defs/node"}},
        **{
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
                    },
                }
            }
        },
    )
    tool = Tool.from_schema("tree", "", tree, _echo)
    assert tool.validate({"node": {"children": [{"children": []}]}})
    deep: dict[str, Any] = {"children": []}
    for _ in range(3000):
        deep = {"children": [deep]}
    (problem,) = refusals(tool, {"node": deep})
    assert "nest too deeply" in problem


async def test_a_schema_the_check_missed_still_never_ends_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review's reproduction with the definition check switched off (a gap in it): the call
    is refused, and ``run()`` answers."""
    from toolwire.tools import _schemacheck

    monkeypatch.setattr(_schemacheck, "_loops", lambda root: [])
    looping = Tool.from_schema("s_selfloop", "", LOOPS[0][0], _echo)
    host = make_host(tmp_path, [looping])
    loop, _ = scripted_loop(host, [[tool_call("s_selfloop", {})], "done"])
    run = await loop.run("go")
    assert run.stop_reason == "answered"
    (result,) = [m.result for m in run.messages if isinstance(m, ToolResultMessage)]
    assert result.status is ToolStatus.ERROR
    assert "nest too deeply" in str(result.content)


def test_a_required_name_that_no_value_can_have_is_refused() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_schema(
            "strict",
            "",
            {
                "type": "object",
                "patternProperties": {"^(a|aa)+$": {}},
                "additionalProperties": False,
                "required": ["b" * 40],
            },
            _echo,
        )
    assert "is required, but no property declares it" in caught.value.problems[0]
    allowed = Tool.from_schema(
        "allowed",
        "",
        {
            "type": "object",
            "patternProperties": {"^(a|aa)+$": {"type": "integer"}},
            "additionalProperties": False,
            "required": ["a" * 40],
        },
        _echo,
    )
    assert allowed.validate({"a" * 40: 1})
    assert refusals(allowed, {"a" * 40: "x"})
    assert refusals(allowed, {})


# -- whatever else a schema holds ----------------------------------------------------------------

HOSTILE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-2, 3)
    | st.sampled_from(
        ["#", "#/$defs/a", "#/$defs/b", "#/properties/x", "string", "object", EVIL, "(a|aa)+",
         "^x$", "(?=a)", "email", "date-time", "idn-hostname"]
    ),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(
            ["type", "properties", "items", "anyOf", "allOf", "oneOf", "not", "required",
             "pattern", "patternProperties", "format", "$ref", "$defs", "a", "b", "x",
             "additionalProperties", "enum", "minLength", "optional", "nullable", "x-order"]
        ),
        inner,
        max_size=5,
    ),
    max_leaves=14,
)  # fmt: skip
ARGUMENTS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.just("a" * 40 + "!"),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["x", "a", "b", "aa"]), inner, max_size=3),
    max_leaves=8,
)  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=HOSTILE, arguments=st.lists(ARGUMENTS, min_size=1, max_size=3))
def test_nothing_a_schema_holds_raises_past_a_refusal(schema: Any, arguments: list[Any]) -> None:
    body = {"type": "object", **schema} if isinstance(schema, dict) else schema
    for normalize in (False, True):
        try:
            tool = Tool.from_schema("hostile", "", body, _echo, normalize=normalize)
        except ToolDefinitionError:
            continue
        tool.strict_projection()
        lint_tool(tool)
        for value in arguments:
            try:
                tool.validate(value)
            except ArgumentsInvalid as exc:
                problems = exc.problems
            else:
                problems = ("accepted",)
            assert problems


# -- words JSON Schema ignores ------------------------------------------------------------------


def test_unknown_keywords_are_accepted_and_optional_and_nullable_are_read() -> None:
    schema = obj(
        {
            "query": {"type": "string", "x-order": 1, "examples": ["x"]},
            "limit": {"type": "integer", "optional": True},
            "note": {"type": "string", "nullable": True},
        },
        required=["query", "limit", "note"],
        **{"x-vendor": {"anything": [1, 2]}},
    )
    tool = Tool.from_schema("bfcl", "", schema, _echo)
    assert tool.parameters["required"] == ["query", "note"]
    assert tool.validate({"query": "q", "note": None}) == {"query": "q", "note": None}
    assert tool.schema_notes == (
        '$.properties.note.nullable: \'nullable: true\' became "type": ["string", "null"]',
        "$.properties.limit.optional: 'optional: true' became optional",
    )
    (finding,) = [f for f in lint_tool(tool) if f.code == "foreign-schema-word"]
    assert finding.severity == "warning"
    assert "'optional: true' became optional" in finding.message
    assert not [f for f in lint_tool(tool) if f.code == "normalized-schema"]


# -- the handler's context -----------------------------------------------------------------------


async def test_the_context_goes_by_annotation_never_into_a_defaulted_parameter() -> None:
    def tag(text: str) -> str:
        return f"<{text}>"

    def closure(arguments: dict[str, Any], _f=tag) -> str:  # type: ignore[no-untyped-def]
        return str(_f(arguments["text"]))

    def keyword(arguments: dict[str, Any], _f=tag, *, context: ToolContext) -> str:  # type: ignore[no-untyped-def]
        return f"{_f(arguments['text'])} in {context.call_id}"

    schema = obj({"text": {"type": "string"}}, required=["text"])
    cases = [
        (closure, "<hi>"),
        (keyword, "<hi> in call"),
        (lambda arguments, context: f"{arguments['text']} in {context.call_id}", "hi in call"),
        (lambda arguments: arguments["text"], "hi"),
    ]
    for handler, expected in cases:
        result = await Tool.from_schema("tagger", "", schema, handler).invoke({"text": "hi"})
        assert result.content == expected, result.content

    def needs_more(arguments: dict[str, Any], flag: bool) -> str:
        return ""

    with pytest.raises(ToolDefinitionError, match="parameter 'flag' has no value to receive"):
        Tool.from_schema("tagger", "", schema, needs_more)


def test_a_pattern_check_imports_no_matcher_at_definition() -> None:
    code = (
        "import sys; from toolwire import Tool; "
        "Tool.from_schema('t', '', {'type': 'object', 'properties': {'a': {'type': 'string', "
        "'pattern': '^a+$'}}}, lambda a: a); print('re2' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
