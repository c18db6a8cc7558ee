"""Page metadata (title, description, author, date, language) from meta tags, JSON-LD and markup."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import attrs
from selectolax.lexbor import LexborHTMLParser, LexborNode

__all__ = ["PageMetadata", "read_metadata"]

_ARTICLE_TYPES = frozenset(
    {
        "article",
        "newsarticle",
        "blogposting",
        "report",
        "scholarlyarticle",
        "techarticle",
        "analysisnewsarticle",
        "opinionnewsarticle",
        "reportagenewsarticle",
        "reviewnewsarticle",
        "backgroundnewsarticle",
        "liveblogposting",
        "socialmediaposting",
        "review",
        "recipe",
        "howto",
        "webpage",
        "medicalwebpage",
        "itempage",
    }
)
_WHITESPACE = re.compile(r"\s+")
_BY_PREFIX = re.compile(r"^\s*(?:by|von|par|por|di|door)\s+", re.IGNORECASE)


@attrs.frozen
class PageMetadata:
    """What a page says about itself, outside its main text."""

    title: str | None = None
    description: str | None = None
    author: str | None = None
    date: str | None = None
    language: str | None = None
    #: The ``<base href>`` of the page, against which its relative links resolve.
    base_url: str | None = None


def _clean(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    text = _WHITESPACE.sub(" ", value).strip()
    return text or None


def _meta_index(tree: LexborHTMLParser) -> dict[str, str]:
    """Map each meta ``name``/``property``/``itemprop`` (lowercased) to its first content."""
    index: dict[str, str] = {}
    for node in tree.css("meta[content]"):
        attributes = node.attributes
        content = attributes.get("content")
        if not content:
            continue
        for key in ("property", "name", "itemprop", "http-equiv"):
            name = attributes.get(key)
            if name:
                index.setdefault(name.strip().lower(), content)
    return index


def _first(index: dict[str, str], *keys: str) -> str | None:
    for key in keys:
        value = _clean(index.get(key))
        if value:
            return value
    return None


def _load_json_ld(text: str) -> Any:
    text = text.strip()
    if text.startswith("<!--"):
        text = text[4:]
    if text.endswith("-->"):
        text = text[:-3]
    try:
        return json.loads(text, strict=False)
    except (ValueError, RecursionError):  # not JSON, or nested past the decoder's limit
        return None


def _json_ld_objects(tree: LexborHTMLParser) -> Iterator[dict[str, Any]]:
    """Yield every JSON-LD object of the page, ``@graph`` members and nested lists included."""
    for script in tree.css('script[type="application/ld+json"]'):
        stack = [_load_json_ld(script.text())]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(reversed(item))
            elif isinstance(item, dict):
                yield item
                graph = item.get("@graph")
                if isinstance(graph, list):
                    stack.extend(reversed(graph))


def _types(item: dict[str, Any]) -> set[str]:
    declared = item.get("@type")
    names = declared if isinstance(declared, list) else [declared]
    return {name.lower() for name in names if isinstance(name, str)}


# Lists of authors nest a level or two (a list of lists of people); deeper is not metadata.
_NAME_LIST_DEPTH = 3


def _person_names(value: object, depth: int = 0) -> list[str]:
    if isinstance(value, str):
        name = _clean(value)
        return [name] if name and not name.startswith("http") else []
    if isinstance(value, dict):
        name = _clean(value.get("name"))
        return [name] if name else []
    if isinstance(value, list) and depth < _NAME_LIST_DEPTH:
        return [name for member in value for name in _person_names(member, depth + 1)]
    return []


def _join_names(names: list[str]) -> str | None:
    unique = list(dict.fromkeys(names))
    return ", ".join(unique) if unique else None


def _article_object(tree: LexborHTMLParser) -> dict[str, Any]:
    """Merge the JSON-LD objects that describe the page's article (first value of a key wins)."""
    merged: dict[str, Any] = {}
    for item in _json_ld_objects(tree):
        if _types(item) & _ARTICLE_TYPES:
            for key, value in item.items():
                merged.setdefault(key, value)
    return merged


def _first_in(node: LexborNode | None, selector: str) -> LexborNode | None:
    return None if node is None else node.css_first(selector)


def _node_text(node: LexborNode | None) -> str | None:
    return None if node is None else _clean(node.text())


def _markup_author(tree: LexborHTMLParser) -> str | None:
    node = tree.css_first('[itemprop="author"] [itemprop="name"]')
    if node is not None:
        return _clean(node.attributes.get("content")) or _node_text(node)
    node = tree.css_first('[itemprop="author"]')
    if node is not None:
        found = _clean(node.attributes.get("content")) or _node_text(node)
        if found and len(found) < 100:
            return found
    node = tree.css_first('a[rel~="author"]')
    found = _node_text(node)
    return found if found and len(found) < 100 else None


def _markup_date(tree: LexborHTMLParser) -> str | None:
    for selector in (
        '[itemprop="datePublished"]',
        "time[pubdate][datetime]",
        "article time[datetime]",
        "time[datetime]",
    ):
        node = tree.css_first(selector)
        if node is not None:
            attributes = node.attributes
            found = _clean(attributes.get("datetime")) or _clean(attributes.get("content"))
            if found:
                return found
    return None


def read_metadata(tree: LexborHTMLParser) -> PageMetadata:
    """Read a page's metadata; call before scripts are removed, since JSON-LD lives in them."""
    meta = _meta_index(tree)
    article = _article_object(tree)

    title = (
        _first(meta, "og:title", "twitter:title")
        or _clean(article.get("headline"))
        or _node_text(_first_in(tree.head, "title"))
        or _node_text(tree.css_first("h1"))
    )
    description = _first(meta, "description", "og:description", "twitter:description") or _clean(
        article.get("description")
    )

    author = _join_names(_person_names(article.get("author")))
    if author is None:
        declared = _first(
            meta,
            "author",
            "article:author",
            "byl",
            "parsely-author",
            "sailthru.author",
            "dc.creator",
            "dcterms.creator",
        )
        if declared and not declared.startswith("http"):
            author = _BY_PREFIX.sub("", declared)
    author = author or _markup_author(tree)

    date = (
        _first(
            meta,
            "article:published_time",
            "og:published_time",
            "datepublished",
            "pubdate",
            "publishdate",
            "publish-date",
            "parsely-pub-date",
            "sailthru.date",
            "dc.date.issued",
            "dcterms.date",
            "dc.date",
            "date",
        )
        or _clean(article.get("datePublished"))
        or _clean(article.get("dateCreated"))
        or _markup_date(tree)
    )

    language = None
    html = tree.root
    if html is not None:
        language = _clean(html.attributes.get("lang")) or _clean(html.attributes.get("xml:lang"))
    language = (
        language
        or _first(meta, "content-language", "language")
        or _clean(article.get("inLanguage"))
    )

    base = _first_in(tree.head, "base[href]")
    return PageMetadata(
        title=title,
        description=description,
        author=author,
        date=date,
        language=language,
        base_url=None if base is None else _clean(base.attributes.get("href")),
    )
