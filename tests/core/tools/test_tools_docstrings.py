"""Docstring reading: descriptions and parameter texts in Google, NumPy and Sphinx styles."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from toolwire.tools._docstrings import (
    _ALL_SECTIONS,
    _google_header,
    _sphinx_field,
    parse_docstring,
)

GOOGLE = """Find books by title.

    Searches the local catalogue only.

    Args:
        title (str): Words of the title.
        weights (dict(str, float), optional): Per-word weights.
        limit: How many books to return,
            at most 50.
        *extra: Ignored.

    Returns:
        list: the books; limit: not a parameter.

    Raises:
        ValueError: when title is empty.

    Examples:
        >>> find("dune")
        title: not a parameter either
    """

NUMPY = """Find books by title.

    Parameters
    ----------
    title : str
        Words of the title.
    limit, offset : int, optional
        Paging window.

    Returns
    -------
    list
        The books.

    Examples
    --------
    title : not a parameter
    """

SPHINX = """Find books by title.

    :param title: Words of the title.
    :param int limit: How many books
        to return.
    :type limit: int
    :returns: the books
    :raises ValueError: when title is empty
    """


def test_google_style_parameters_and_description():
    doc = parse_docstring(GOOGLE)
    assert doc.description == "Find books by title.\n\nSearches the local catalogue only."
    assert doc.parameters == {
        "title": "Words of the title.",
        "weights": "Per-word weights.",
        "limit": "How many books to return, at most 50.",
        "extra": "Ignored.",
    }


def test_numpy_style_parameters_with_shared_entries():
    doc = parse_docstring(NUMPY)
    assert doc.description == "Find books by title."
    assert doc.parameters == {
        "title": "Words of the title.",
        "limit": "Paging window.",
        "offset": "Paging window.",
    }


def test_sphinx_style_fields():
    doc = parse_docstring(SPHINX)
    assert doc.description == "Find books by title."
    assert doc.parameters == {
        "title": "Words of the title.",
        "limit": "How many books to return.",
    }


def test_sections_other_than_parameters_never_leak_into_parameters():
    for text in (GOOGLE, NUMPY):
        doc = parse_docstring(text)
        assert "title" in doc.parameters
        assert "not a parameter" not in " ".join(doc.parameters.values())
        assert "books" not in doc.parameters.get("limit", "").replace("How many books", "")


def test_attributes_section_for_records():
    doc = parse_docstring(
        """A filter.

        Attributes:
            field: The field name.
            op: The comparison.
        """
    )
    assert doc.description == "A filter."
    assert doc.attributes == {"field": "The field name.", "op": "The comparison."}
    assert doc.parameters == {}


def test_empty_and_summary_only():
    assert parse_docstring(None).description == ""
    assert parse_docstring("   ").parameters == {}
    assert parse_docstring("Just a summary.").description == "Just a summary."


def test_a_line_ending_in_a_colon_in_the_description_is_not_a_section():
    doc = parse_docstring("Compare two values.\n\nUsage:\n    compare(a, b)\n")
    assert "Usage:" in doc.description
    assert doc.parameters == {}


# The parser tries a section pattern only on a line that could match it (a Google header ends
# in a colon, a Sphinx field starts with one); these check that no line it skips would match.
GOOGLE_HEADER = re.compile(r"^([A-Za-z][A-Za-z ]*?)\s*:\s*$")
SPHINX_FIELD = re.compile(r"^:([A-Za-z]+)((?:\s+[^:]+)?)\s*:(.*)$")
LINE = st.text(alphabet=st.sampled_from("Args :param\t \u00a0\u2003x-"), max_size=16)


@given(LINE)
def test_google_header_precheck_skips_no_header(line: str) -> None:
    match = GOOGLE_HEADER.match(line)
    expected = match.group(1).lower() if match and match.group(1).lower() in _ALL_SECTIONS else None
    assert _google_header(line) == expected


@given(LINE)
def test_sphinx_field_precheck_skips_no_field(line: str) -> None:
    found = _sphinx_field(line)
    expected = SPHINX_FIELD.match(line)
    assert (found and found.groups()) == (expected and expected.groups())


def test_headers_with_trailing_space_are_sections() -> None:
    parsed = parse_docstring("Do it.\n\nArgs:\u00a0 \n    a: The a.\n:param b: The b.\n")
    assert parsed.description == "Do it."
    assert parsed.parameters == {"a": "The a.", "b": "The b."}
