"""Patterns rewritten for a grammar-building server: anchored, in its subset, meaning the same."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire_openai._patterns import server_pattern, server_schema

PATTERNS = [
    r"[0-9]\S*\s+[^\s0-9]|[^\s0-9]\s+[0-9]|[Nn]oon|[Mm]id(?:day|night)",
    r"[0-9][.,]?\s*[^\s0-9.,]|\b([Aa]n?|[Oo]ne)\s+[^\s0-9]",
    r"^[^0-9]*$",
    r"^\d{3}-\d{4}$",
    r"[a-z]+@[a-z]+\.[a-z]{2,}",
    r"\w+\W\w+",
]


@pytest.mark.parametrize("pattern", PATTERNS)
@given(text=st.text(alphabet="ab09 .,-@Nnoi\t", max_size=12))
def test_the_rewritten_pattern_accepts_what_the_pattern_finds(pattern: str, text: str) -> None:
    rewritten = server_pattern(pattern)
    assert rewritten is not None
    assert rewritten.startswith("^")
    assert rewritten.endswith("$")
    # A word boundary is left out (only ever widening), so where the pattern has none the
    # two agree exactly; where it has one, the rewritten one takes at least as much.
    found = re.search(pattern, text) is not None
    taken = re.fullmatch(rewritten, text) is not None
    if r"\b" in pattern:
        assert taken or not found
    else:
        assert taken == found


@pytest.mark.parametrize(
    "pattern",
    [r"(?=a)b", r"(?!x)y", r"(a)\1", r"(?P<n>a)", r"[\S]x", r"a^b"],
)
def test_a_pattern_outside_the_subset_is_left_out(pattern: str) -> None:
    assert server_pattern(pattern) is None
    schema = {"type": "object", "properties": {"x": {"type": "string", "pattern": pattern}}}
    assert server_schema(schema) == {"type": "object", "properties": {"x": {"type": "string"}}}


def test_a_schema_without_patterns_is_the_same_object() -> None:
    schema = {"type": "object", "properties": {"pattern": {"type": "string"}}}
    assert server_schema(schema) is schema


@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed"
)
def test_the_basics_schemas_build_llama_cpp_python_grammars_once_rewritten() -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    import toolwire_basics._tools as basics

    refused = []
    for tool in (basics.calculator, basics.current_time, basics.convert_time, basics.convert_units):
        parameters = tool.function_spec().parameters
        try:
            LlamaGrammar.from_json_schema(json.dumps(parameters), verbose=False)
        except AssertionError:
            refused.append(tool.name)
        # As sent to the server, every schema builds a grammar.
        LlamaGrammar.from_json_schema(json.dumps(server_schema(parameters)), verbose=False)
    # As written, the unanchored patterns made the server drop these schemas.
    assert refused == ["calculator", "convert_time", "convert_units"]
