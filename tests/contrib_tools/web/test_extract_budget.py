"""Pages built to make extraction slow: linear counts, and the budget that degrades to text."""

from __future__ import annotations

from pathlib import Path

import pytest
from selectolax.lexbor import LexborHTMLParser

from toolwire_web._budget import MAX_DEPTH, MAX_ELEMENTS, over_budget, plain_text
from toolwire_web._counts import TreeCounts
from toolwire_web.extraction import extract_page

PAGES = Path(__file__).parent / "pages"


def _page(body: str) -> str:
    return f"<html><head><title>t</title></head><body>{body}</body></html>"


@pytest.mark.parametrize("name", sorted(path.name for path in PAGES.glob("*.html")))
def test_counts_agree_with_reading_each_subtree(name: str) -> None:
    tree = LexborHTMLParser((PAGES / name).read_bytes().decode("utf-8", "replace"))
    body = tree.body
    assert body is not None
    counts = TreeCounts(body, flagged=frozenset({"p", "img"}))
    checked = 0
    for node in body.traverse():
        assert counts.text_length(node) == len(node.text(strip=True)), node.tag
        assert counts.joined_length(node) == len(node.text(separator=" ", strip=True)), node.tag
        # css() matches the element itself too, so a link counts its own text.
        links = sum(len(link.text(strip=True)) for link in node.css("a"))
        assert counts.link_length(node) == links, node.tag
        assert counts.holds(node, "p") == (node.css_first("p") is not None), node.tag
        checked += 1
    assert checked > 10


def test_nested_lists_within_the_budget_are_read_as_a_tree() -> None:
    depth = 40
    html = _page("<ul><li>level item, with words in it" * depth + "</li></ul>" * depth)
    page = extract_page(html)
    assert page.degraded is None
    assert page.text.count("level item, with words in it") == depth


@pytest.mark.parametrize(
    ("markup", "reason"),
    [
        ("<div>deep words " * 5000 + "</div>" * 5000, f"nested more than {MAX_DEPTH} deep"),
        # Stray closing tags first must not hide the nesting after them.
        ("</div>" * 5000 + "<div>deep words " * 5000, f"nested more than {MAX_DEPTH} deep"),
        ("<b><i>deep words " * 3000, f"nested more than {MAX_DEPTH} deep"),
        # <li> is not counted as a level, but the tree holds it: the tree's own depth is checked.
        ("<ul><li>deep words " * 300 + "</li></ul>" * 300, f"nested more than {MAX_DEPTH} deep"),
        ("<span>deep words</span>" * (MAX_ELEMENTS + 1), f"more than {MAX_ELEMENTS} elements"),
    ],
    ids=["divs", "closers-first", "formatting", "lists", "elements"],
)
def test_a_page_over_the_budget_is_read_as_plain_text(markup: str, reason: str) -> None:
    page = extract_page(_page(markup))
    assert page.degraded is not None
    assert reason in page.degraded
    assert "deep words" in page.text
    assert "<" not in page.text


def test_tags_inside_scripts_styles_and_comments_do_not_count() -> None:
    hidden = "<div>" * (2 * MAX_DEPTH)
    html = _page(
        f"<script>var s = '{hidden}';</script><style>/* {hidden} */</style><!-- {hidden} -->"
        "<p>An ordinary paragraph of an ordinary page, long enough to be its article.</p>"
    )
    assert over_budget(html) is None
    page = extract_page(html)
    assert page.degraded is None
    assert "An ordinary paragraph" in page.markdown


def test_plain_text_keeps_paragraphs_and_drops_markup() -> None:
    html = (
        "<p>First &amp; one</p><div>Second<br>line</div><script>alert(1)</script>"
        "<!-- a comment --><style>p {}</style><p>Third <b>bold</b></p><script>never closed <p>x"
    )
    text = plain_text(html)
    assert text.split("\n\n") == ["First & one", "Second", "line", "Third bold"]


def test_plain_text_of_unclosed_angle_brackets_is_the_text() -> None:
    assert plain_text("a < b and c <d") == "a < b and c <d"
    assert plain_text("<" * 10_000) == "<" * 10_000


def test_a_degraded_page_is_markdown_that_reads_as_its_text() -> None:
    page = extract_page(_page("<div># not a heading *or* [link]" * 1000))
    assert page.degraded is not None
    assert "\\# not a heading \\*or\\* \\[link\\]" in page.markdown


@pytest.mark.parametrize("depth", [200, 900, 1000, 100_000])
def test_json_ld_nested_past_any_limit_leaves_the_page_readable(depth: int) -> None:
    authors = "[" * depth + '"Ann"' + "]" * depth
    ld = f'{{"@type": "NewsArticle", "headline": "Deep", "author": {authors}}}'
    html = (
        f'<html><head><script type="application/ld+json">{ld}</script></head><body>'
        "<p>Words of the article, with commas, and enough of them to be its body.</p>"
        "</body></html>"
    )
    page = extract_page(html)
    assert "Words of the article" in page.text
    assert page.author is None


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, 0.0])
def test_web_timeouts_must_be_finite_and_positive(value: float) -> None:
    from toolwire_web._settings import WebSettings

    for key in ("timeout", "convert_timeout"):
        with pytest.raises(ValueError, match=f"{key} = .*expected a finite number of at least"):
            WebSettings.coerce({key: value})
