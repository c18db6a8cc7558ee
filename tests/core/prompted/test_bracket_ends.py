"""Where a bracketed call text ends, per dialect: brackets inside each dialect's strings skipped."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from toolwire.prompted._jsoncalls import find_json_end
from toolwire.prompted._ptype import find_bracket_end
from toolwire.prompted._typescript import find_call_end

Finder = Callable[[str, int], "int | None"]


def _end(text: str) -> int:
    """The index just after the marker ``|`` in ``text`` (the marker itself removed)."""
    return text.index("|")


@pytest.mark.parametrize(
    ("finder", "marked"),
    [
        # Python: single, double and triple quotes; escapes; nesting.
        (find_bracket_end, "f(a=[1, (2, 3)], b={'k': ')'})| tail"),
        (find_bracket_end, 'f("a \\" ) still a string")| tail'),
        (find_bracket_end, "f('''a ) ' \" ( b''')| tail"),
        (find_bracket_end, 'f("""x\n) y""")| tail'),
        # A one-line string left open ends at its line; the bracket on the next line counts.
        (find_bracket_end, "f('open\n)| tail"),
        # TypeScript: back quotes span lines; single and double quotes end at theirs.
        (find_call_end, "f({a: `x ) \n ( y`, b: 'z)'})| tail"),
        (find_call_end, 'f("open\n)| tail'),
        (find_call_end, 'f([1, [2, {c: "]"}]])| tail'),
        # JSON: both quote styles; parentheses are text, not brackets.
        (find_json_end, '{"a": "}", "b": [1, {"c": 2}]}| tail'),
        (find_json_end, "{'a': '} \\' }', b: (1}| tail"),
        (find_json_end, '[{"x": ")"}, {"y": "("}]| tail'),
    ],
)
def test_the_closing_bracket_is_found_past_strings(finder: Finder, marked: str) -> None:
    text = marked.replace("|", "", 1)
    assert finder(text, 0) == _end(marked)


@pytest.mark.parametrize(
    ("finder", "text"),
    [
        (find_bracket_end, "f(a=[1, 2]"),
        (find_bracket_end, "f('''never closed)"),
        (find_call_end, "f(`never ) closed"),
        (find_call_end, "f({a: 1}"),
        (find_json_end, '{"a": "never closed}'),
        (find_json_end, '{"a": [1, 2}'),
    ],
)
def test_a_text_that_ends_first_has_no_end(finder: Finder, text: str) -> None:
    assert finder(text, 0) is None


def test_the_scan_starts_at_the_given_bracket() -> None:
    text = 'call f("x") then g(")", [1])'
    start = text.index("g(") + 1
    assert find_call_end(text, start) == len(text)
