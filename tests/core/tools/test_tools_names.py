"""The tool name rule, checked without a pattern, against the rule written as one."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from toolwire.tools._names import MAX_TOOL_NAME_LENGTH, is_tool_name

# The rule as providers document it, plus dotted parts.
RULE = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")

NAME_TEXT = st.text(alphabet=st.sampled_from("aZ09_-..  \t\né$/"), max_size=70)


@given(NAME_TEXT)
def test_is_tool_name_follows_the_rule(name: str) -> None:
    expected = len(name) <= MAX_TOOL_NAME_LENGTH and RULE.fullmatch(name) is not None
    assert is_tool_name(name) is expected


@given(st.text(max_size=20))
def test_is_tool_name_on_any_text(name: str) -> None:
    assert is_tool_name(name) is (RULE.fullmatch(name) is not None)


def test_is_tool_name_edges() -> None:
    assert is_tool_name("math.factorial")
    assert is_tool_name("a" * MAX_TOOL_NAME_LENGTH)
    for name in ("", ".", "a.", ".a", "a..b", "a b", "a" * (MAX_TOOL_NAME_LENGTH + 1), 7, None):
        assert not is_tool_name(name)
