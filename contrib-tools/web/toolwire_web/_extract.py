"""Main-content extraction: find a page's article in its HTML and render it as Markdown."""

from __future__ import annotations

import re
from urllib.parse import urljoin

import attrs
from selectolax.lexbor import LexborHTMLParser, LexborNode

from ._budget import MAX_DEPTH, over_budget, plain_text
from ._classes import (
    BODY,
    DISCUSSION,
    FURNITURE,
    NEGATIVE,
    POSITIVE,
    classify_names,
    sort_names,
)
from ._counts import TreeCounts, count_commas
from ._markdown import escape_plain_text, render
from ._metadata import PageMetadata, read_metadata
from ._text import check_encoding, decode_html

__all__ = ["ExtractedPage", "extract_page"]


@attrs.frozen
class ExtractedPage:
    """The main content of a web page and what the page says about itself.

    ``markdown`` and ``text`` hold the same content: Markdown with headings, lists, links,
    tables, code blocks and quotes, and plain text without markup or URLs. Metadata fields are
    None when the page does not declare them.
    """

    #: The main content as Markdown.
    markdown: str
    #: The same content as plain text.
    text: str
    #: The article's title (``og:title``, JSON-LD ``headline``, ``<title>`` or the ``<h1>``).
    title: str | None = attrs.field(default=None, kw_only=True)
    #: The page's summary (``<meta name="description">``, ``og:description``, JSON-LD).
    description: str | None = attrs.field(default=None, kw_only=True)
    #: The author or authors, comma-separated (JSON-LD, ``<meta name="author">``, markup).
    author: str | None = attrs.field(default=None, kw_only=True)
    #: The publication date as the page writes it, typically ISO 8601.
    date: str | None = attrs.field(default=None, kw_only=True)
    #: The language the page declares (``<html lang>``, ``Content-Language``), e.g. ``en-GB``.
    language: str | None = attrs.field(default=None, kw_only=True)
    #: Why the page was read as plain text rather than as a tree (nesting too deep, too many
    #: elements), or None when it was not.
    degraded: str | None = attrs.field(default=None, kw_only=True)


# Removed before anything is measured: never part of an article's text.
_JUNK_TAGS = [
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "math",
    "canvas",
    "iframe",
    "object",
    "embed",
    "audio",
    "video",
    "map",
    "link",
    "meta",
    "button",
    "input",
    "select",
    "textarea",
    "label",
    "dialog",
    "nav",
]
_JUNK_SELECTOR = ",".join(_JUNK_TAGS)
# Hidden elements, and parts of a page that are never its article: removed unless they hold
# most of the page.
_HIDDEN_SELECTOR = ",".join(
    [
        "[hidden]",
        '[aria-hidden="true"]',
        '[style*="display:none" i]',
        '[style*="display: none" i]',
        '[style*="visibility:hidden" i]',
        '[role="navigation"]',
        '[role="contentinfo"]',
        '[role="complementary"]',
        '[role="dialog"]',
        '[role="alertdialog"]',
        '[role="search"]',
        '[role="menu"]',
        '[role="menubar"]',
        "aside",
        "footer",
        "form",
    ]
)

_TABLE_PARTS = frozenset({"tr", "tbody", "thead", "tfoot"})
_NEVER_REMOVED = frozenset({"body", "html", "main", "article"})
# What counts as a paragraph when the text of a page is weighed.
_PARAGRAPH_SELECTOR = "p, pre, td, blockquote, li, h2, h3, h4"
# ... these only when they hold no <p> of their own, so that no text counts twice.
_WRAPPING_PARAGRAPHS = frozenset({"li", "td", "blockquote"})
# Containers whose own text counts as paragraphs: text written straight into a <div> and
# separated by <br>.
_TEXT_CONTAINER_SELECTOR = "div, section, article, main, span, font, center"
# Elements whose names are read before anything is measured. Inline elements and list items are
# judged with the block that holds them.
_CLASSIFIED_SELECTOR = (
    ':is([class], [id], article, [itemprop="articleBody"])'
    ":not(a, span, li, img, i, b, em, strong, time, abbr, picture, source)"
)
# Share of paragraph text that an ancestor must add for the content to grow to it.
_EXPANSION_PURITY = 0.75
# The page title (kept apart from the content) and captions of pictures.
_PRUNED_TAGS = frozenset({"h1", "figcaption"})
# Words inside a sentence: never cut out of it, whatever their names say.
_PHRASING_TAGS = frozenset({"a", "b", "strong", "i", "em", "code", "sup", "sub", "abbr", "cite"})
# Blocks left out of the content when they are mostly links: menus, lists of other stories.
_LINK_LIST_TAGS = frozenset({"ul", "ol", "div", "section", "table", "dl", "aside", "header"})
_HEADING_TAGS = frozenset({"h2", "h3", "h4"})
# What stands where an ad was.
_AD_LABEL = re.compile(
    r"(?:story continues below )?"
    r"(?:advertisement|advertising|advert|ad|sponsored|anzeige|publicidad|publicité|pubblicità"
    r"|реклама)"
    r"(?:[-: ]*(?:story continues below|continue reading below))?$",
    re.IGNORECASE,
)
# A paragraph's points go to its parent in full, to its grandparent by half, and so on.
_SCORE_DIVIDERS = (1, 2, 6, 9, 12)
# Tags whose presence inside an element the scoring and pruning ask about.
_FLAGGED_TAGS = frozenset({"p", "img", "blockquote"})
# An ad label is a few words: an element with more inside is never one (and its text is not
# read to find out).
_AD_LABEL_ELEMENTS = 20


def _classify(node: LexborNode) -> int:
    """Flags telling what an element's class and id names say it is."""
    attributes = node.attributes
    classes = attributes.get("class")
    identifier = attributes.get("id")
    if not classes and not identifier:
        return 0
    return classify_names(f"{classes or ''} {identifier or ''}")


def _head_title(tree: LexborHTMLParser) -> str | None:
    """The text of the page's ``<title>``, if it has one."""
    head = tree.head
    title = None if head is None else head.css_first("title")
    return None if title is None else title.text()


def _text_length(node: LexborNode) -> int:
    """Characters of text in ``node``, its whitespace left out (close enough, and fast)."""
    return len(node.text(strip=True))


def _unique(nodes: list[LexborNode]) -> list[LexborNode]:
    """Drop repeats from a selector's matches (a node matching two selectors comes twice)."""
    seen: set[int] = set()
    kept = []
    for node in nodes:
        key = node.mem_id
        if key not in seen:
            seen.add(key)
            kept.append(node)
    return kept


def _ancestor_in(node: LexborNode, ids: set[int]) -> int | None:
    """Return the id of the nearest ancestor of ``node`` whose id is in ``ids``."""
    parent = node.parent
    while parent is not None:
        key = parent.mem_id
        if key in ids:
            return key
        parent = parent.parent
    return None


class _Extraction:
    """State of one page's extraction. Elements are keyed by their ``mem_id``."""

    def __init__(self, tree: LexborHTMLParser, body: LexborNode, metadata: PageMetadata) -> None:
        self.tree = tree
        self.body = body
        self.body_id = body.mem_id
        #: Elements whose names or tags say they hold an article body.
        self.hints: list[LexborNode] = []
        #: Characters of paragraph text (less its links) inside each element.
        self.good: dict[int, float] = {}
        #: The paragraph score of each element, most of it from its own children.
        self.score: dict[int, float] = {}
        self.nodes: dict[int, LexborNode] = {}
        #: Text measures of the cleaned body, taken once before scoring.
        self.counts: TreeCounts | None = None
        #: ``good`` of the content chosen, once it is chosen.
        self.content_good = 0.0
        #: The page's titles, lowercased, to recognise a heading that repeats one.
        self.titles = [
            " ".join(title.split()).lower()
            for title in (metadata.title, _head_title(tree))
            if title
        ]

    # -- cleaning ------------------------------------------------------------------------------

    def remove_furniture(self) -> None:
        """Drop scripts, hidden elements and elements whose class or id names page furniture."""
        body = self.body
        # Children before their parents (reverse document order): never touch a freed node.
        for node in reversed(body.css(_JUNK_SELECTOR)):
            node.decompose()
        total = max(_text_length(body), 1)
        # A body hidden until scripts run must not shelter the furniture inside it.
        doomed = [node for node in body.css(_HIDDEN_SELECTOR) if node.tag not in ("body", "html")]
        named: dict[int, str] = {}
        hints = []
        for node in body.css(_CLASSIFIED_SELECTOR):
            tag = node.tag
            attributes = node.attributes
            names = f"{attributes.get('class') or ''} {attributes.get('id') or ''}"
            flags = sort_names(names)
            if flags & FURNITURE and tag not in _NEVER_REMOVED:
                doomed.append(node)
                named[node.mem_id] = names
            elif flags & BODY or tag == "article" or attributes.get("itemprop") == "articleBody":
                hints.append(node)
        self.hints = self.remove(_unique(doomed), named, hints, total)

    def remove(
        self,
        doomed: list[LexborNode],
        named: dict[int, str],
        hints: list[LexborNode],
        total: int,
    ) -> list[LexborNode]:
        """Decompose the furniture worth removing; return the hints that stay in the page.

        Only the outermost furniture is judged: what lies inside goes with it, or stays with it
        when it holds the page, for the finer pruning of the content to judge. All decisions
        are taken before the first node is freed, and nothing inside a removed element is
        touched again.
        """
        ids = {node.mem_id for node in doomed}
        enclosing = {node.mem_id: _ancestor_in(node, ids) for node in doomed}
        protected: set[int] = set()
        hint_places = []
        for hint in hints:
            place = _ancestor_in(hint, ids)
            hint_places.append(place)
            if place is not None and _text_length(hint) > max(400, 0.1 * total):
                # An article inside a wrapper whose class merely mentions furniture
                # ("modal-enabled"): the wrapper and the furniture around it stay.
                while place is not None and place not in protected:
                    protected.add(place)
                    place = enclosing[place]
        kept: set[int] = set()
        removed: list[LexborNode] = []
        for node in doomed:
            key = node.mem_id
            if enclosing[key] is not None:
                continue
            if key in protected or self.keeps(node, named.get(key), total):
                kept.add(key)
            else:
                removed.append(node)
        remaining = []
        for hint, place in zip(hints, hint_places, strict=True):
            outermost = place
            while outermost is not None and enclosing[outermost] is not None:
                outermost = enclosing[outermost]
            if outermost is None or outermost in kept:
                remaining.append(hint)
        for node in removed:
            node.decompose()
        return remaining

    def keeps(self, node: LexborNode, names: str | None, total: int) -> bool:
        """Tell furniture that must stay: it holds most of the page.

        :param names: the element's class and id names, for furniture found by its names.
        """
        if node.tag in _NEVER_REMOVED:
            return True
        if _text_length(node) <= 0.5 * total:
            return False
        # A page wrapped in a <form> or hidden until scripts run, or a wrapper whose names
        # mention furniture ("content-with-sidebar"). A sidebar or a comment section longer
        # than the article neither holds the page's title nor calls itself content.
        if names is None or node.css_first("h1") is not None:
            return True
        flags = classify_names(names)
        return bool(flags & POSITIVE) and not flags & DISCUSSION

    # -- scoring -------------------------------------------------------------------------------

    def measure(self) -> TreeCounts:
        """Count the text of every element of the cleaned body, in one walk."""
        self.counts = TreeCounts(self.body, flagged=_FLAGGED_TAGS)
        return self.counts

    @property
    def measured(self) -> TreeCounts:
        """The counts taken by :meth:`measure` (measuring now if that has not happened)."""
        return self.counts if self.counts is not None else self.measure()

    def score_paragraphs(self) -> None:
        """Weigh every paragraph and credit it to the elements that hold it.

        Every measure comes from the counts, so the work is linear in the page: a paragraph's
        text is never read again for each element that holds it.
        """
        counts = self.measured
        own: dict[int, float] = {}
        for paragraph in self.body.css(_PARAGRAPH_SELECTOR):
            if paragraph.tag in _WRAPPING_PARAGRAPHS and counts.holds(paragraph, "p"):
                continue
            length = counts.joined_length(paragraph)
            if length < 25:
                continue
            density = counts.link_length(paragraph) / length
            if density <= 0.5:
                commas = counts.commas.get(paragraph.mem_id, 0)
                self.credit(paragraph.parent, commas, length, density, own)
        # Text written straight into a container, paragraphs separated by <br>.
        for container in self.body.css(_TEXT_CONTAINER_SELECTOR):
            direct = container.text(deep=False)
            if len(direct) < 25 or len(direct.strip()) < 25:
                continue
            for child in container.iter(include_text=True):
                if child.tag == "-text":
                    text = " ".join((child.text_content or "").split())
                    if len(text) >= 25:
                        self.credit(container, count_commas(text), len(text), 0.0, own)
        self.good = counts.sum_up(own)

    def credit(
        self,
        node: LexborNode | None,
        commas: int,
        length: int,
        density: float,
        own: dict[int, float],
    ) -> None:
        """Credit a paragraph to the element holding it and score its nearest ancestors.

        Its text counts in ``own`` for the holder alone; :meth:`TreeCounts.sum_up` then adds
        it to every ancestor in one pass.
        """
        if node is None:
            return
        score = self.score
        nodes = self.nodes
        key = node.mem_id
        own[key] = own.get(key, 0.0) + length * (1 - density)
        points = (1 + commas + min(length / 100, 3)) * (1 - density)
        current: LexborNode | None = node
        for divider in _SCORE_DIVIDERS:
            if current is None:
                break
            key = current.mem_id
            nodes[key] = current
            score[key] = score.get(key, 0.0) + points / divider
            current = None if key == self.body_id else current.parent

    def choose(self) -> list[LexborNode]:
        """Pick the element(s) holding the main content."""
        if not self.score:
            return [self.body]
        best_key = max(self.score, key=lambda key: self.score[key] * self.class_weight(key))
        best = self.nodes[best_key]
        chosen = self.narrow(self.expand(best))
        if chosen.mem_id == best_key:
            return self.with_siblings(chosen)
        return [chosen]

    def ancestor_ids(self, node: LexborNode) -> set[int]:
        """Ids of all the ancestors of ``node``."""
        ids = set()
        parent = node.parent
        while parent is not None:
            ids.add(parent.mem_id)
            parent = parent.parent
        return ids

    def expand(self, best: LexborNode) -> LexborNode:
        """Climb from the densest element while its ancestors add mostly paragraph text."""
        good = self.good
        best_ancestors = self.ancestor_ids(best)
        best_key = best.mem_id
        # Other articles on the page (infinite scroll, teasers): never merged with this one.
        others = []
        for hint in self.hints:
            key = hint.mem_id
            if key == best_key or key in best_ancestors or good.get(key, 0.0) < 200:
                continue
            if hint.tag == "article" or hint.attrs.get("itemprop") == "articleBody":
                ancestors = self.ancestor_ids(hint)
                if best_key not in ancestors:
                    others.append(ancestors)
        top = best
        top_good = good.get(best_key, 0.0)
        counts = self.measured
        top_length = counts.text_length(best)
        node = best.parent
        for _ in range(6):
            if node is None or node.mem_id == self.body_id:
                break
            key = node.mem_id
            if any(key in ancestors for ancestors in others):
                break
            node_good = good.get(key, 0.0)
            added_good = node_good - top_good
            if added_good >= 50:
                node_length = counts.text_length(node)
                if added_good < _EXPANSION_PURITY * (node_length - top_length):
                    break
                top, top_good, top_length = node, node_good, node_length
            node = node.parent
        # Rows of a table are read with their table (a cell may be a layout table's column).
        while top.tag in _TABLE_PARTS and top.parent is not None:
            top = top.parent
        return top

    def narrow(self, node: LexborNode) -> LexborNode:
        """Prefer an article-body element inside ``node`` that holds nearly all its text."""
        key = node.mem_id
        limit = 0.9 * self.good.get(key, 0.0)
        chosen = node
        for hint in self.hints:
            if (
                hint.mem_id != key
                and self.good.get(hint.mem_id, 0.0) >= limit
                and self.is_inside(hint, chosen)
            ):
                chosen = hint
        return chosen

    def is_inside(self, node: LexborNode, ancestor: LexborNode) -> bool:
        """Tell whether ``ancestor`` holds ``node``."""
        target = ancestor.mem_id
        parent = node.parent
        while parent is not None:
            if parent.mem_id == target:
                return True
            parent = parent.parent
        return False

    def class_weight(self, key: int) -> float:
        """Weight of an element's score from its names: content raises it, furniture lowers it."""
        flags = _classify(self.nodes[key])
        weight = 1.0
        if flags & POSITIVE:
            weight += 0.25
        if flags & NEGATIVE:
            weight -= 0.25
        return weight

    def with_siblings(self, best: LexborNode) -> list[LexborNode]:
        """The densest element, and those of its siblings that continue its text."""
        best_key = best.mem_id
        parent = best.parent
        if parent is None or best_key == self.body_id:
            return [best]
        threshold = max(10.0, 0.2 * self.score.get(best_key, 0.0))
        chosen = []
        for sibling in parent.iter():
            if sibling.mem_id == best_key:
                chosen.append(sibling)
                continue
            key = sibling.mem_id
            if self.score.get(key, 0.0) >= threshold:
                chosen.append(sibling)
            elif sibling.tag == "p":
                length = self.measured.text_length(sibling)
                density = self.measured.link_length(sibling) / max(length, 1)
                if (length > 80 and density < 0.25) or (
                    0 < length <= 80 and density == 0 and sibling.text().rstrip().endswith(".")
                ):
                    chosen.append(sibling)
        return chosen

    # -- rendering -----------------------------------------------------------------------------

    def prune(self, node: LexborNode, tag: str) -> bool:
        """Tell whether an element inside the main content is furniture to leave out."""
        if tag in _PRUNED_TAGS:
            return True
        if tag in _PHRASING_TAGS or self.good.get(node.mem_id, 0.0) > 0.3 * self.content_good:
            return False
        flags = _classify(node)
        if flags & NEGATIVE and not flags & BODY:
            return True
        if tag in _HEADING_TAGS:
            return self.is_title(node)
        counts = self.measured
        if tag in _LINK_LIST_TAGS:
            length = counts.text_length(node)
            if length == 0:
                return not counts.holds(node, "img")
            if length < 40 and _is_ad_label(node, counts):
                return True
            return counts.link_length(node) > 0.6 * length and not counts.holds(node, "blockquote")
        if tag == "p":
            length = counts.text_length(node)
            if length < 40 and _is_ad_label(node, counts):
                return True
            # A paragraph of links: "more stories" lists written as paragraphs.
            return length > 0 and counts.link_length(node) >= 0.8 * length
        return tag == "span" and _is_ad_label(node, counts)

    def is_title(self, heading: LexborNode) -> bool:
        """Tell a heading repeating the page's title (kept in the metadata, not the content)."""
        text = " ".join(heading.text().split()).lower()
        return len(text) >= 10 and any(text in title for title in self.titles)


def _is_ad_label(node: LexborNode, counts: TreeCounts) -> bool:
    if counts.elements.get(node.mem_id, 0) > _AD_LABEL_ELEMENTS:
        return False
    text = node.text()
    return len(text) < 200 and _AD_LABEL.match(" ".join(text.split())) is not None


def _base_url(url: str | None, declared: str | None) -> str | None:
    if declared is None:
        return url
    if url is None:
        return declared
    try:
        return urljoin(url, declared)
    except ValueError:
        return url


def _as_plain_text(document: str, reason: str) -> ExtractedPage:
    """A page over the budget of a tree, read as its visible text."""
    text = plain_text(document)
    return ExtractedPage(escape_plain_text(text), text, degraded=reason)


def extract_page(
    html: str | bytes, *, url: str | None = None, encoding: str | None = None
) -> ExtractedPage:
    """Extract the main content of a web page as Markdown and plain text, with its metadata.

    Navigation, headers and footers, scripts and styles, cookie banners, share widgets, comment
    sections, related-article lists and similar furniture are left out.

    The work is linear in the size of the page. A page nested deeper than
    :data:`MAX_DEPTH` or holding more than :data:`MAX_ELEMENTS` elements is read as plain
    text, without a tree, and says so in :attr:`ExtractedPage.degraded`.

    :param html: the page, as text or as the bytes received (their charset is taken from
        ``encoding``, else from the page's ``<meta>`` declaration, else UTF-8).
    :param url: the page's address; relative links and images are resolved against it.
    :param encoding: the charset of ``html`` bytes when known (for example from the HTTP
        ``Content-Type`` header); checked but not used for text.
    :raises TypeError: if ``html`` is neither text nor bytes.
    :raises ValueError: if ``encoding`` is not a known charset.
    """
    if isinstance(html, (bytes, bytearray, memoryview)):
        document = decode_html(bytes(html), encoding)
    elif isinstance(html, str):
        if encoding is not None:
            check_encoding(encoding)
        document = html
    else:
        raise TypeError(
            f"html must be str or bytes, got {type(html).__name__}: pass the page's markup "
            "as text or as the bytes received"
        )
    reason = over_budget(document)
    if reason is not None:
        return _as_plain_text(document, reason)
    tree = LexborHTMLParser(document)
    metadata = read_metadata(tree)
    body = tree.body or tree.root
    if body is None:
        return ExtractedPage("", "", title=metadata.title, language=metadata.language)
    extraction = _Extraction(tree, body, metadata)
    extraction.remove_furniture()
    if extraction.measure().depth > MAX_DEPTH:
        # The parser nested the page deeper than its tags said (misnested formatting).
        return _as_plain_text(document, f"elements nested more than {MAX_DEPTH} deep")
    extraction.score_paragraphs()
    content = extraction.choose()
    extraction.content_good = sum(extraction.good.get(node.mem_id, 0.0) for node in content)
    markdown, text = render(
        content, base_url=_base_url(url, metadata.base_url), prune=extraction.prune
    )
    return ExtractedPage(
        markdown=markdown,
        text=text,
        title=metadata.title,
        description=metadata.description,
        author=metadata.author,
        date=metadata.date,
        language=metadata.language,
    )
