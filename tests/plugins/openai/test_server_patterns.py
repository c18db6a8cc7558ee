"""Patterns rewritten for a grammar-building server: anchored, in its subset, meaning the same."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire_openai._patterns import (
    bounded_pattern,
    bounded_strings,
    server_pattern,
    server_schema,
)

PATTERNS = [
    r"^[^0-9]*$",
    r"^\d{3}-\d{4}$",
    r"^[a-z]+@[a-z]+\.[a-z]{2,}$",
    r"^\w+\W\w+$",
    r"^(?:a|b)+\s?c$",
    r"^\S+\s\d$",
]


@pytest.mark.parametrize("pattern", PATTERNS)
@given(text=st.text(alphabet="ab09 .,-@c\t", max_size=12))
def test_an_anchored_pattern_is_written_in_the_subset_meaning_the_same(
    pattern: str, text: str
) -> None:
    rewritten = server_pattern(pattern)
    assert rewritten is not None
    assert rewritten.startswith("^")
    assert rewritten.endswith("$")
    assert "(?" not in rewritten
    assert "\\s" not in rewritten
    assert (re.fullmatch(rewritten, text) is not None) == (re.search(pattern, text) is not None)


@pytest.mark.parametrize("pattern", PATTERNS)
@given(text=st.text(alphabet="ab09 .,-@c\t", max_size=8))
def test_a_bounded_pattern_matches_the_same_strings_up_to_its_bound(
    pattern: str, text: str
) -> None:
    rewritten = server_pattern(pattern)
    assert rewritten is not None
    bounded = bounded_pattern(rewritten, 8)
    assert "*" not in bounded.replace("\\*", "")
    assert (re.fullmatch(bounded, text) is not None) == (re.fullmatch(rewritten, text) is not None)


def test_a_bounded_pattern_leaves_classes_escapes_and_closed_counts_alone() -> None:
    assert (
        bounded_pattern(r"^[]*+]+a\*\+b{2}c{1,3}d{2,}$", 9) == r"^[]*+]{1,9}a\*\+b{2}c{1,3}d{2,9}$"
    )


@pytest.mark.parametrize(
    "pattern",
    [
        r"[0-9]\S*\s+[^\s0-9]",
        r"(?=a)b",
        r"^(?!x)y$",
        r"^(a)\1$",
        r"^(?P<n>a)$",
        r"^[\S]x$",
        r"^a^b$",
    ],
)
def test_an_unanchored_pattern_or_one_outside_the_subset_is_left_out(pattern: str) -> None:
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


@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed"
)
def test_a_patterned_string_is_bounded_in_the_grammar_the_server_builds() -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    import toolwire_basics._tools as basics

    # llama-cpp-python builds a string's grammar from its pattern alone, maxLength ignored:
    # `^[^0-9]*$` let the server write `into_unit` until its context was full.
    sent = bounded_strings(server_schema(basics.convert_units.function_spec().parameters), 200)
    assert sent["properties"]["into_unit"]["pattern"] == "^[^0-9]{0,200}$"
    LlamaGrammar.from_json_schema(json.dumps(sent), verbose=False)
