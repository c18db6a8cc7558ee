"""Model text as Markdown, turned into a small tree of allowed elements the page builds with
``createElement`` and ``textContent``: no HTML string is made here and none is parsed there.

markdown-it-py parses (CommonMark, plus tables and strikethrough) with raw HTML off, so markup
in the text stays text. Only the elements below are made; a link keeps its address only when
it is ``http``, ``https`` or ``mailto``; an image becomes a link to it (the page loads nothing
from outside). Citation markers ``[n]`` in text become ``cite`` nodes when ``n`` names one of
the run's sources.

A node is a text (a JSON string) or ``{"t": tag, "c": [children], …}`` with ``href`` (``a``),
``lang`` (``pre``), ``start`` (``ol``), ``align`` (``th``/``td``) or ``n`` (``cite``).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

Node = str | dict[str, Any]

MARKDOWN_LIMIT = 200_000
"""Characters of text rendered as Markdown; a longer text is shown as it is."""

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False, "maxNesting": 20}).enable(
    ["table", "strikethrough"]
)
_CITATION = re.compile(r"\[(\d{1,3})\]")
_LINK_SCHEMES = frozenset({"http", "https", "mailto"})
_CONTAINERS = {
    "paragraph": "p",
    "bullet_list": "ul",
    "ordered_list": "ol",
    "list_item": "li",
    "blockquote": "blockquote",
    "table": "table",
    "thead": "thead",
    "tbody": "tbody",
    "tr": "tr",
    "strong": "strong",
    "em": "em",
    "s": "del",
}


def safe_href(url: str) -> str | None:
    """``url`` when it is an ``http``, ``https`` or ``mailto`` address, else None."""
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return None
    return url.strip() if scheme in _LINK_SCHEMES else None


def markdown_tree(text: str, sources: int = 0) -> list[Node] | None:
    """The tree of ``text`` (None when it is longer than :data:`MARKDOWN_LIMIT`).

    :param sources: how many sources the answer can cite: ``[1]`` … ``[sources]`` become
        ``cite`` nodes.
    """
    if len(text) > MARKDOWN_LIMIT:
        return None
    root = SyntaxTreeNode(_MD.parse(text))
    return _children(root, sources)


def _children(node: SyntaxTreeNode, sources: int) -> list[Node]:
    out: list[Node] = []
    for child in node.children:
        out.extend(_convert(child, sources))
    return out


def _text(text: str, sources: int) -> list[Node]:
    if not sources or "[" not in text:
        return [text] if text else []
    out: list[Node] = []
    last = 0
    for match in _CITATION.finditer(text):
        number = int(match.group(1))
        if not 1 <= number <= sources:
            continue
        if match.start() > last:
            out.append(text[last : match.start()])
        out.append({"t": "cite", "n": number})
        last = match.end()
    if last < len(text):
        out.append(text[last:])
    return out


def _convert(node: SyntaxTreeNode, sources: int) -> list[Node]:
    kind = node.type
    if kind == "text":
        return _text(node.content, sources)
    if kind == "inline":
        return _children(node, sources)
    if kind == "softbreak":
        return ["\n"]
    if kind == "hardbreak":
        return [{"t": "br", "c": []}]
    if kind == "code_inline":
        return [{"t": "code", "c": [node.content]}]
    if kind in ("fence", "code_block"):
        element: dict[str, Any] = {"t": "pre", "c": [node.content]}
        lang = (node.info or "").split(maxsplit=1)[0] if kind == "fence" else ""
        if lang:
            element["lang"] = lang[:40]
        return [element]
    if kind == "hr":
        return [{"t": "hr", "c": []}]
    if kind == "heading":
        return [{"t": node.tag, "c": _children(node, sources)}]
    if kind in ("th", "td"):
        element = {"t": kind, "c": _children(node, sources)}
        style = str(node.attrs.get("style", ""))
        align = style.removeprefix("text-align:") if style.startswith("text-align:") else ""
        if align in ("left", "center", "right"):
            element["align"] = align
        return [element]
    if kind == "link":
        href = safe_href(str(node.attrs.get("href", "")))
        children = _children(node, 0)
        if href is None:
            return children
        return [{"t": "a", "href": href, "c": children}]
    if kind == "image":
        href = safe_href(str(node.attrs.get("src", "")))
        label = "".join(c for c in _children(node, 0) if isinstance(c, str)) or "image"
        if href is None:
            return [label]
        return [{"t": "a", "href": href, "c": [f"🖼 {label}"]}]
    if kind == "paragraph" and node.hidden:  # a tight list's item
        return _children(node, sources)
    tag = _CONTAINERS.get(kind)
    if tag is None:  # anything else (html_block with html off never comes): its text
        return _children(node, sources) if node.children else _text(node.content, sources)
    element = {"t": tag, "c": _children(node, sources)}
    if kind == "ordered_list":
        start = node.attrs.get("start")
        if isinstance(start, int) and start != 1:
            element["start"] = start
    return [element]
