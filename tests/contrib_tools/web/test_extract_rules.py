"""The rules of main-content extraction, one small page each."""

from __future__ import annotations

import pytest

from toolwire_web.extraction import extract_page

PARAGRAPHS = [
    "The council met on Monday evening to hear the plans for the new library, which would "
    "replace the old reading room on the market square.",
    "Architects presented three designs, each keeping the facade of the old building, and "
    "residents were invited to comment on them before the end of the month.",
    "A decision is expected in the spring, after a second round of consultation with schools, "
    "local historians and the people who use the reading room every day.",
]
ARTICLE = "".join(f"<p>{paragraph}</p>" for paragraph in PARAGRAPHS)


def comments(count: int) -> str:
    reply = (
        "<div class='comment'><p>I have lived here for forty years and I think the new library "
        "is a fine idea, as long as the reading room keeps its old oak tables.</p></div>"
    )
    return f"<section id='comments' class='comments-area'>{reply * count}</section>"


def test_article_wins_over_a_longer_comment_section() -> None:
    html = f"<body><article><h1>Library plans</h1>{ARTICLE}</article>{comments(12)}</body>"
    result = extract_page(html)
    assert result.text == "\n\n".join(PARAGRAPHS)


def test_article_wins_over_a_longer_sidebar() -> None:
    teaser = (
        "<div class='teaser'><p>Another story from the region, with a summary long enough to "
        "look like a paragraph of an article to a careless reader.</p></div>"
    )
    html = (
        f"<body><h1>Library plans</h1><div class='story'>{ARTICLE}</div>"
        f"<div class='col-4 widget-area'>{teaser * 8}</div></body>"
    )
    assert extract_page(html).text == "\n\n".join(PARAGRAPHS)


def test_furniture_inside_the_article_body_is_removed() -> None:
    html = (
        "<body><div class='article-body'>"
        f"<p>{PARAGRAPHS[0]}</p>"
        "<div class='share-bar'><a href='/s/fb'>Facebook</a> <a href='/s/x'>X</a></div>"
        f"<p>{PARAGRAPHS[1]}</p>"
        "<div class='newsletter-box'><p>Sign up for our daily email, it is free.</p></div>"
        f"<p>{PARAGRAPHS[2]}</p>"
        "<p class='article-byline'>Reporting by A. Writer</p>"
        "<ul><li><a href='/a'>More from the council</a></li><li><a href='/b'>Most read"
        "</a></li></ul>"
        "</div></body>"
    )
    assert extract_page(html).text == "\n\n".join(PARAGRAPHS)


def test_page_wrapped_in_a_form_is_still_read() -> None:
    html = f"<body><form id='aspnetForm' action='/page.aspx'><div>{ARTICLE}</div></form></body>"
    assert extract_page(html).text == "\n\n".join(PARAGRAPHS)


def test_page_wrapper_named_like_furniture_is_kept() -> None:
    html = (
        "<body><div class='layout-with-sidebar'><h1>Library plans</h1>"
        f"<div class='main'>{ARTICLE}</div>"
        "<div class='sidebar'><a href='/x'>Weather</a></div></div></body>"
    )
    assert extract_page(html).text == "\n\n".join(PARAGRAPHS)


def test_hidden_elements_are_dropped() -> None:
    html = (
        f"<body><div class='content'>{ARTICLE}"
        "<div style='display: none'>Hidden text that no reader sees on the page at all.</div>"
        "<p hidden>Also hidden from every reader of the page, whatever its length.</p>"
        "</div></body>"
    )
    assert "hidden" not in extract_page(html).text.lower()


def test_embedded_posts_stay_in_the_article() -> None:
    html = (
        f"<body><div class='article-body'>{ARTICLE}"
        "<div class='social-media-embed'><blockquote class='twitter-tweet'><p>The reading room "
        "is the best place in town. <a href='https://t.co/x'>pic.example/x</a></p>— Reader "
        "(@reader) <a href='https://x.example/status/1'>May 1, 2024</a></blockquote></div>"
        "</div></body>"
    )
    result = extract_page(html)
    assert "The reading room is the best place in town." in result.text
    assert "> The reading room is the best place in town." in result.markdown


def test_article_split_across_sibling_sections_is_read_whole() -> None:
    sections = "".join(
        f"<div class='story-body-part'><p>{paragraph}</p><p>{paragraph}</p></div>"
        "<div>Advertisement</div><p>Story continues below advertisement</p>"
        for paragraph in PARAGRAPHS
    )
    html = f"<body><header><h1>Library plans</h1></header><section>{sections}</section></body>"
    result = extract_page(html)
    for paragraph in PARAGRAPHS:
        assert result.text.count(paragraph) == 2
    assert "dvertisement" not in result.text


def test_spaces_around_inline_elements_are_kept() -> None:
    html = (
        "<article><p>The plan was drawn up by <a href='https://arch.example/'>the firm</a> "
        "and <b>approved</b><i> on Monday</i>, said<a href='https://council.example/'> the "
        "council</a> in a statement about the reading room and its future.</p></article>"
    )
    result = extract_page(html)
    assert result.markdown == (
        "The plan was drawn up by [the firm](https://arch.example/) and **approved** *on "
        "Monday*, said [the council](https://council.example/) in a statement about the "
        "reading room and its future."
    )
    assert result.text == (
        "The plan was drawn up by the firm and approved on Monday, said the council in a "
        "statement about the reading room and its future."
    )


@pytest.mark.parametrize(
    ("href", "resolved"),
    [
        ("/about", "https://news.example/about"),
        ("//cdn.example/pic.jpg", "https://cdn.example/pic.jpg"),
        ("next.html", "https://news.example/2024/next.html"),
        ("../archive/", "https://news.example/archive/"),
        ("/a/../b", "https://news.example/b"),
        ("?page=2", "https://news.example/2024/story.html?page=2"),
        ("https://other.example/x y", "https://other.example/x%20y"),
        ("mailto:desk@news.example", "mailto:desk@news.example"),
    ],
)
def test_link_targets(href: str, resolved: str) -> None:
    html = f"<article><p>{PARAGRAPHS[0]} See <a href='{href}'>this page</a> for more.</p></article>"
    result = extract_page(html, url="https://news.example/2024/story.html")
    assert f"[this page]({resolved})" in result.markdown


def test_fragment_links_keep_only_their_text() -> None:
    html = f"<article><p>{PARAGRAPHS[0]} Jump to <a href='#notes'>the notes</a>.</p></article>"
    assert "Jump to the notes." in extract_page(html, url="https://news.example/").markdown


def test_layout_tables_are_read_as_blocks() -> None:
    cells = "".join(f"<tr><td><p>{paragraph}</p></td></tr>" for paragraph in PARAGRAPHS)
    html = f"<body><table width='100%'>{cells}</table></body>"
    result = extract_page(html)
    assert "|" not in result.markdown
    assert result.text == "\n\n".join(PARAGRAPHS)


def test_data_table_without_header_cells_uses_its_first_row() -> None:
    html = (
        f"<article>{ARTICLE}<table><tr><td>Year</td><td>Visitors</td></tr>"
        "<tr><td>2022</td><td>41,200</td></tr><tr><td>2023</td><td colspan='2'>44,950</td></tr>"
        "</table></article>"
    )
    result = extract_page(html)
    assert (
        "| Year | Visitors |  |\n| --- | --- | --- |\n| 2022 | 41,200 |  |\n| 2023 | 44,950 |  |"
    ) in result.markdown


def test_code_with_backticks_gets_a_longer_fence() -> None:
    html = (
        f"<article>{ARTICLE}<pre>echo `date`\n```\nnot a fence</pre>"
        "<p>Run <code>a `b` c</code> to see it.</p></article>"
    )
    result = extract_page(html)
    assert "````\necho `date`\n```\nnot a fence\n````" in result.markdown
    assert "Run ``a `b` c`` to see it." in result.markdown


def test_control_characters_are_dropped() -> None:
    result = extract_page(f"<article>{ARTICLE}<p>bell\x07 and\x1b escape</p></article>")
    assert "bell and escape" in result.text
    assert "\x07" not in result.markdown


def test_nested_emphasis_is_marked_once() -> None:
    html = f"<article>{ARTICLE}<p><b><b><strong>Very</strong></b></b> bold.</p></article>"
    assert "**Very** bold." in extract_page(html).markdown


def test_deeply_nested_markup_does_not_break_extraction() -> None:
    depth = 3000
    html = "<div>" * depth + ARTICLE + "</div>" * depth
    assert extract_page(html).text == "\n\n".join(PARAGRAPHS)
    lists = "<ul><li>" * 400 + PARAGRAPHS[0] + "</li></ul>" * 400
    assert PARAGRAPHS[0] in extract_page(lists).text


def test_table_as_the_main_content_stays_a_table() -> None:
    rows = "".join(
        f"<tr><td>Stall {number}</td><td>{number * 3} €</td><td>Fresh fish from the morning "
        f"boats, cleaned and filleted on request at stall {number}</td></tr>"
        for number in range(1, 9)
    )
    html = (
        "<body><nav><a href='/'>Home</a></nav><div id='content'><table>"
        f"<tr><th>Stall</th><th>Price</th><th>Notes</th></tr>{rows}</table></div></body>"
    )
    result = extract_page(html)
    assert result.markdown.startswith("| Stall | Price | Notes |\n| --- | --- | --- |\n")
    assert result.markdown.count("\n| Stall ") == 8
