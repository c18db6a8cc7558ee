"""The budget a page must fit before it is parsed as a tree, and the plain text it degrades to.

Deep nesting makes HTML tree building itself slow (each element opened checks the stack of
open elements), so a page is measured on its raw markup, in one linear scan, before the parser
sees it. A page over the budget is read as plain text, which costs one pass whatever the markup.
"""

from __future__ import annotations

import html
import re
from itertools import accumulate, islice
from operator import sub
from typing import Final

__all__ = ["MAX_DEPTH", "MAX_ELEMENTS", "over_budget", "plain_text"]

MAX_DEPTH: Final = 400
"""Deepest nesting of elements read as a tree; real pages stay well under a hundred."""
MAX_ELEMENTS: Final = 150_000
"""Most elements read as a tree; a 2 MiB page of ordinary markup holds about 40 000."""

# Elements that never hold others, and those whose end tag is optional (the parser closes
# them at the next sibling): neither makes the tree deeper.
_FLAT: Final = (
    *("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"),
    *("track", "wbr", "param", "keygen", "p", "li", "dt", "dd", "tr", "td", "th", "option"),
    *("optgroup", "rt", "rp", "thead", "tbody", "tfoot", "colgroup", "caption"),
)
# A tag that opens or closes a level: the "/" of a closing tag, or "" for an opening one.
_LEVEL_TAG: Final = re.compile(rf"<(/?)(?!(?:{'|'.join(_FLAT)})[\s/>])[A-Za-z]", re.IGNORECASE)
_OPENING_TAG: Final = re.compile(r"<[A-Za-z]")
_STEP: Final = {"": 1, "/": -1}
_RAW_TEXT: Final = ("script", "style", "textarea", "template", "xmp", "noscript", "title")
_RAW_TEXT_OPEN: Final = re.compile(rf"<(?:({'|'.join(_RAW_TEXT)})(?![A-Za-z0-9-])|!--)", re.I)
_RAW_TEXT_CLOSE: Final = {
    name: re.compile(rf"</{name}(?![A-Za-z0-9-])[^<>]*>?", re.I) for name in _RAW_TEXT
}
_ANY_TAG: Final = re.compile(r"<[^<>]*>")
_BLOCK_BREAK: Final = re.compile(
    r"</?(?:p|div|br|li|ul|ol|h[1-6]|tr|table|section|article|blockquote|pre|hr|dd|dt)\b[^<>]*>",
    re.IGNORECASE,
)
_SPACES: Final = re.compile(r"[ \t\f\v\u00a0]+")
_BLANK_LINES: Final = re.compile(r"\n\s*\n\s*")


def over_budget(markup: str) -> str | None:
    """Tell why ``markup`` is too deep or too large to be read as a tree, or None when it fits.

    The depth is estimated from the tags as written, outside comments, scripts and styles:
    opening tags of elements that hold others count one level, closing tags take one back
    (never below the top). It errs on the deep side for sloppy markup, which only ever means
    reading a page as plain text. The scan runs in C but for one pass over the raw elements.
    """
    visible = _drop_raw_text(markup)
    if len(_OPENING_TAG.findall(visible)) > MAX_ELEMENTS:
        return f"more than {MAX_ELEMENTS} elements"
    steps = list(accumulate(map(_STEP.__getitem__, _LEVEL_TAG.findall(visible))))
    # The depth after each tag, closing tags never taking it below zero, is the running sum
    # less the lowest running sum so far (or zero).
    lowest = islice(accumulate(steps, min, initial=0), 1, None)
    if max(map(sub, steps, lowest), default=0) > MAX_DEPTH:
        return f"elements nested more than {MAX_DEPTH} deep"
    return None


def _drop_raw_text(markup: str) -> str:
    """``markup`` without comments and the contents of scripts, styles and similar elements.

    Every search starts where the previous one ended, so the scan is linear; an element left
    open runs to the end of the page, as it does for a browser.
    """
    pieces = []
    position = 0
    while True:
        found = _RAW_TEXT_OPEN.search(markup, position)
        if found is None:
            pieces.append(markup[position:])
            break
        pieces.append(markup[position : found.start()])
        name = found.group(1)
        if name is None:
            end = markup.find("-->", found.end())
            if end < 0:
                break
            position = end + 3
        else:
            closing = _RAW_TEXT_CLOSE[name.lower()].search(markup, found.end())
            if closing is None:
                break
            position = closing.end()
    return " ".join(pieces)


def plain_text(markup: str) -> str:
    """The visible text of ``markup``, paragraphs kept apart, in time linear in its length.

    Used for pages over the budget: no tree is built, so nothing about the markup can make it
    slow. Scripts, styles and comments are left out; character references are decoded.
    """
    visible = _drop_raw_text(markup)
    visible = _BLOCK_BREAK.sub("\n\n", visible)
    visible = _ANY_TAG.sub(" ", visible)
    visible = html.unescape(visible)
    lines = (_SPACES.sub(" ", line).strip() for line in visible.split("\n"))
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
