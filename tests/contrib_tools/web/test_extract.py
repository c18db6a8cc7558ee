"""Main-content extraction on pages written for these tests."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from toolwire_web.extraction import ExtractedPage, extract_page, normalize_text_document

PAGES = Path(__file__).parent / "pages"


def page(name: str) -> bytes:
    return (PAGES / name).read_bytes()


# -- boilerplate


@pytest.fixture(scope="module")
def news() -> ExtractedPage:
    return extract_page(page("boilerplate_article.html"), url="https://courier.example/news/mill")


def test_article_paragraphs_are_kept_in_order(news: ExtractedPage) -> None:
    paragraphs = news.markdown.split("\n\n")
    assert paragraphs[0].startswith("Residents of Eastwick voted by a wide margin")
    assert paragraphs[-1].startswith("Engineers surveyed the foundations")
    assert len(paragraphs) == 5
    assert '"We have watched it fall apart for sixty years," said' in news.markdown


@pytest.mark.parametrize(
    "furniture",
    [
        "cookie",  # consent banner
        "Sport",  # navigation
        "Search the Courier",  # search form
        "Home",  # breadcrumbs
        "Share on Social",  # share widget
        "Email this story",
        "Advertisement",  # ad slot label
        "Related stories",  # related-article list inside the body
        "Ferry timetable",
        "inbox",  # newsletter sign-up
        "comments",  # comment section
        "grandfather",
        "Most read",  # sidebar
        "Lifeboat crew",
        "All rights reserved",  # footer
        "Privacy",
        "dataLayer",  # script
        "font-family",  # style
        "idle since 1957",  # picture caption
    ],
)
def test_furniture_is_left_out(news: ExtractedPage, furniture: str) -> None:
    assert furniture not in news.markdown
    assert furniture not in news.text


def test_title_heading_is_metadata_not_content(news: ExtractedPage) -> None:
    assert news.title == "Harbour town votes to restore its tidal mill"
    assert "Harbour town votes" not in news.markdown


def test_metadata_from_meta_tags(news: ExtractedPage) -> None:
    assert news.description == (
        "Residents of Eastwick backed a plan to bring the 18th-century mill back to work."
    )
    assert news.author == "Marta Quinlan"
    assert news.date == "2024-03-14T09:30:00Z"
    assert news.language == "en-GB"


def test_page_record_is_frozen(news: ExtractedPage) -> None:
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        news.title = "changed"  # type: ignore[misc]


# -- structure


@pytest.fixture(scope="module")
def guide() -> ExtractedPage:
    return extract_page(page("structured_article.html"), url="https://elsewhere.example/ignored")


def test_headings_become_atx_headings(guide: ExtractedPage) -> None:
    assert "\n\n## What the log looks like\n\n" in guide.markdown
    assert "\n\n### Choosing the size\n\n" in guide.markdown
    assert "\n\nWhat the log looks like\n\n" in guide.text


def test_inline_emphasis_and_code(guide: ExtractedPage) -> None:
    assert "the last *n* values" in guide.markdown
    assert "**never** grows" in guide.markdown
    assert "call `push()` for each" in guide.markdown
    assert "the last n values" in guide.text


def test_table_becomes_pipe_table(guide: ExtractedPage) -> None:
    assert (
        "| Station | Time | Value \\| unit |\n"
        "| --- | --- | --- |\n"
        "| north-ridge | 06:00 | 4.2 °C |\n"
        "| river-mouth | 06:00 | 7.9 °C |"
    ) in guide.markdown
    assert "north-ridge\t06:00\t4.2 °C" in guide.text


def test_code_block_is_fenced_with_its_language(guide: ExtractedPage) -> None:
    code = (
        "```python\n"
        "class Ring:\n"
        "    def __init__(self, size):\n"
        "        self.items = [None] * size\n"
        "        self.next = 0\n"
        "\n"
        "    def push(self, value):\n"
        "        self.items[self.next] = value\n"
        "        self.next = (self.next + 1) % len(self.items)\n"
        "```"
    )
    assert code in guide.markdown
    assert "        self.next = (self.next + 1) % len(self.items)" in guide.text
    assert "```" not in guide.text


def test_nested_and_ordered_lists(guide: ExtractedPage) -> None:
    assert (
        "- Dashboards need the last hour:\n"
        "  - 60 values at one reading a minute\n"
        "  - 360 values at one reading every ten seconds\n"
        "- Alarms need only the last few values\n"
        "\n"
        "1. Measure the reading rate.\n"
        "2. Multiply by the window."
    ) in guide.markdown


def test_blockquote(guide: ExtractedPage) -> None:
    assert "\n\n> A buffer that never grows is a buffer you never have to watch.\n\n" in (
        guide.markdown
    )


def test_relative_links_resolve_against_the_base_element(guide: ExtractedPage) -> None:
    assert "[the chapter on ring buffers](https://notes.example.org/guides/ring-buffers.html)" in (
        guide.markdown
    )
    assert "[deque reference](https://notes.example.org/reference/deque)" in guide.markdown
    assert "[forum thread](https://forum.example.org/t/42)" in guide.markdown


def test_script_links_keep_only_their_text(guide: ExtractedPage) -> None:
    assert "Don't use this link." in guide.markdown
    assert "javascript" not in guide.markdown


def test_text_has_no_urls_or_markup(guide: ExtractedPage) -> None:
    assert "http" not in guide.text
    assert "](" not in guide.text
    assert "**" not in guide.text
    assert "#" not in guide.text


def test_metadata_from_json_ld_graph(guide: ExtractedPage) -> None:
    assert guide.title == "Reading sensor logs with a ring buffer"
    assert guide.description == "A small, allocation-free reader for sensor logs."
    assert guide.author == "Ines Okafor, Tom Reyes"
    assert guide.date == "2023-11-02"
    assert guide.language == "en"


def test_links_resolve_against_the_url_without_a_base_element() -> None:
    html = (
        "<html><body><article><p>The annual report is out, with the full accounts of the "
        'year, in <a href="../files/report.pdf">the report</a> and on '
        '<a href="/about">the about page</a>.</p></article></body></html>'
    )
    result = extract_page(html, url="https://example.org/news/2024/report.html")
    assert "[the report](https://example.org/news/files/report.pdf)" in result.markdown
    assert "[the about page](https://example.org/about)" in result.markdown


def test_relative_links_stay_relative_without_a_url() -> None:
    html = (
        "<p>Plenty of text in this paragraph to make it the content of the page, "
        'with <a href="/docs">a relative link</a> that nothing can resolve.</p>'
    )
    assert "[a relative link](/docs)" in extract_page(html).markdown


def test_images_keep_alt_text_and_resolved_source() -> None:
    html = (
        "<article><p>The new bridge opened to walkers and cyclists this morning, "
        "after two years of work on the river crossing.</p>"
        '<p><img src="img/bridge.jpg" alt="The bridge at dawn"></p>'
        "<p>It is the first new crossing in the town for more than a century, and cost less "
        "than planned.</p></article>"
    )
    result = extract_page(html, url="https://town.example/news/")
    assert "![The bridge at dawn](https://town.example/news/img/bridge.jpg)" in result.markdown
    assert "bridge.jpg" not in result.text


def test_markdown_characters_in_text_are_escaped() -> None:
    html = (
        "<article><p>Prices fell 5*3 points, a drop the desk calls _remarkable_ for a week "
        "with [no] news, while snake_case names stay as written.</p>"
        "<p># not a heading, and 1. not a list either, as both are plain text here.</p>"
        "</article>"
    )
    result = extract_page(html)
    assert r"5\*3" in result.markdown
    assert r"\_remarkable\_" in result.markdown
    assert r"\[no\]" in result.markdown
    assert "snake_case" in result.markdown
    assert "\n\n\\# not a heading" in result.markdown
    assert "[no]" in result.text


# -- text and encodings


def test_non_ascii_text_is_preserved() -> None:
    html = (
        "<html lang='de'><body><main><p>Größere Fähren über die Förde: Kapitän Jürgen Voß "
        "meldet „volle Auslastung“ — 東京から来た客も多い 🚢.</p>"
        "<p>Die Reederei plant für den Sommer zusätzliche Abfahrten ab Kiel und Laboe, sagt "
        "die Geschäftsführerin.</p></main></body></html>"
    )
    result = extract_page(html)
    assert "Größere Fähren über die Förde: Kapitän Jürgen Voß meldet „volle Auslastung“" in (
        result.text
    )
    assert "東京から来た客も多い 🚢." in result.markdown
    assert result.language == "de"


def test_charset_declared_with_http_equiv() -> None:
    result = extract_page(page("windows1251_article.html"))
    assert result.title == "Зимняя навигация на Волге"
    assert "тёплая осень задержала ледостав" in result.markdown
    assert "«ёлки-палки, успели!»" in result.text
    assert "Главная" not in result.markdown
    assert "\ufffd" not in result.markdown


def test_charset_declared_with_meta_charset() -> None:
    html = (
        '<html><head><meta charset="Shift_JIS"><title>港の灯台</title></head><body><article>'
        "<p>港の灯台は百年前に建てられ、今も毎晩海を照らしている。町の人々は灯台を誇りに"
        "思っており、毎年夏には記念の祭りが開かれる。</p></article></body></html>"
    )
    result = extract_page(html.encode("shift_jis"))
    assert result.title == "港の灯台"
    assert "港の灯台は百年前に建てられ" in result.text


def test_explicit_encoding_wins_over_the_declaration() -> None:
    html = (
        '<meta charset="utf-8"><p>Café société: the menu changed, and the crème brûlée '
        "is gone from the list of desserts this season.</p>"
    )
    result = extract_page(html.encode("latin-1"), encoding="iso-8859-1")
    assert "Café société" in result.text
    assert "crème brûlée" in result.text


def test_undeclared_bytes_are_utf8_with_replacement() -> None:
    html = "<p>Plain words in a paragraph long enough to count as the content, naïve or not.</p>"
    data = html.encode("utf-8").replace("naïve".encode(), b"na\xffve")
    result = extract_page(data)
    assert "na\ufffdve or not." in result.text


def test_byte_order_mark_wins() -> None:
    html = (
        '<meta charset="windows-1252"><p>Schöne Grüße aus dem Norden, wo es heute '
        "wieder regnet und der Wind vom Meer her weht.</p>"
    )
    result = extract_page(b"\xef\xbb\xbf" + html.encode("utf-8"))
    assert "Schöne Grüße aus dem Norden" in result.text


def test_unknown_encoding_is_refused_with_its_name() -> None:
    with pytest.raises(ValueError, match=r"unknown encoding 'utf-99'.*'utf-8'"):
        extract_page(b"<p>text</p>", encoding="utf-99")


def test_html_of_another_type_is_refused() -> None:
    with pytest.raises(TypeError, match="html must be str or bytes, got int"):
        extract_page(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("html", ["", "   ", b"", "<html></html>", "<p></p>"])
def test_empty_pages_give_empty_content(html: str | bytes) -> None:
    result = extract_page(html)
    assert result.markdown == ""
    assert result.text == ""
    assert result.title is None


def test_page_without_paragraphs_keeps_its_text() -> None:
    result = extract_page("<body><div>Opening hours: 9 to 5</div></body>")
    assert result.text == "Opening hours: 9 to 5"


def test_text_in_divs_separated_by_line_breaks() -> None:
    html = (
        '<body><div class="menu"><a href="/">Home</a> <a href="/a">About</a></div>'
        '<div class="content">The first paragraph sits straight in the div, without a p element '
        "around it.<br><br>The second one follows two line breaks later, as some older sites "
        "still write them.<br>It ends on a line of its own.</div></body>"
    )
    result = extract_page(html)
    assert result.text.startswith("The first paragraph sits straight in the div")
    assert "later, as some older sites still write them.\nIt ends on a line of its own." in (
        result.text
    )
    assert "About" not in result.text


# -- text documents


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("one\r\ntwo\r\n", "one\ntwo\n"),
        ("one\rtwo\r", "one\ntwo\n"),
        ("one\r\n\r\ntwo\rthree\nfour", "one\n\ntwo\nthree\nfour"),
        ("\ufeffplain\n", "plain\n"),
        ("unchanged\n\ttabs  and  spaces\n", "unchanged\n\ttabs  and  spaces\n"),
        ("", ""),
    ],
)
def test_normalize_text_document(body: str, expected: str) -> None:
    assert normalize_text_document(body) == expected


def test_normalized_documents_have_no_carriage_returns() -> None:
    mixed = "a\r\nb\rc\n" * 50
    assert not re.search("\r", normalize_text_document(mixed))
