"""Sizes of every element's text, counted bottom-up in one walk of the tree.

Measuring an element by reading its subtree again (``node.text()``, ``node.css("a")``) costs
the size of the subtree each time, so measuring every element of nested lists or tables costs
the square of the page. Counted once, children before parents, every measure is a lookup.
"""

from __future__ import annotations

from typing import Final

from selectolax.lexbor import LexborNode

__all__ = ["TreeCounts", "count_commas"]

_COMMAS: Final = (",", "，", "、", "،")


def count_commas(text: str) -> int:
    """Commas in ``text``, in the scripts that write them differently."""
    return sum(text.count(comma) for comma in _COMMAS)


class TreeCounts:
    """Per-element counts of a subtree, keyed by ``mem_id``, taken when it is built.

    Counts go stale when the tree changes: build them again after removing elements.

    :ivar text: characters of text, each text node stripped (as ``node.text(strip=True)``).
    :ivar pieces: text nodes, so that ``node.text(separator=" ", strip=True)`` is
        ``text + pieces - 1`` characters long.
    :ivar links: characters of text inside links (the element itself included when a link).
    :ivar commas: commas of the text, in the scripts that write them differently.
    :ivar elements: elements in the subtree, the element itself included.
    :ivar has: flags of the flagged tags found inside each element (see :meth:`holds`).
    :ivar depth: the deepest nesting below the root of the walk.
    """

    __slots__ = (
        "_bits",
        "_order",
        "commas",
        "depth",
        "elements",
        "has",
        "links",
        "pieces",
        "text",
    )

    def __init__(self, root: LexborNode, *, flagged: frozenset[str] = frozenset()) -> None:
        """Walk the subtree of ``root`` once.

        :param flagged: tags whose presence inside an element :meth:`holds` can tell.
        """
        bits = {tag: 1 << number for number, tag in enumerate(sorted(flagged))}
        text: dict[int, int] = {}
        pieces: dict[int, int] = {}
        commas: dict[int, int] = {}
        links: dict[int, int] = {}
        elements: dict[int, int] = {}
        has: dict[int, int] = {}
        level: dict[int, int] = {}
        # Elements in document order: (id, parent id, is a link, own flag bit).
        order: list[tuple[int, int | None, bool, int]] = []
        root_id = root.mem_id
        deepest = 0
        for node in root.traverse(include_text=True):
            key = node.mem_id
            tag = node.tag
            if tag == "-text":
                # Text nodes are leaves: their counts go straight to the element holding them.
                parent = node.parent
                if parent is None:
                    continue
                holder = parent.mem_id
                stripped = (node.text_content or "").strip()
                pieces[holder] += 1
                if stripped:
                    text[holder] += len(stripped)
                    commas[holder] += count_commas(stripped)
                continue
            parent = None if key == root_id else node.parent
            parent_key = None if parent is None else parent.mem_id
            text[key] = pieces[key] = commas[key] = links[key] = has[key] = 0
            elements[key] = 1
            depth = 0 if parent_key is None else level.get(parent_key, -1) + 1
            level[key] = depth
            if depth > deepest:
                deepest = depth
            order.append((key, parent_key, tag == "a", bits.get(tag or "", 0)))
        for key, parent_key, is_link, bit in reversed(order):
            if is_link:
                links[key] = text[key]
            if parent_key is None or parent_key not in text:
                continue
            text[parent_key] += text[key]
            pieces[parent_key] += pieces[key]
            links[parent_key] += links[key]
            commas[parent_key] += commas[key]
            elements[parent_key] += elements[key]
            has[parent_key] |= has[key] | bit
        self.text = text
        self.pieces = pieces
        self.links = links
        self.commas = commas
        self.elements = elements
        self.has = has
        self.depth = deepest
        self._bits = bits
        #: Elements in document order, each with its parent's id.
        self._order = [(key, parent_key) for key, parent_key, _, _ in order]

    def sum_up(self, own: dict[int, float]) -> dict[int, float]:
        """Each element's own amount plus those of every element inside it, in one pass."""
        total = dict(own)
        for key, parent_key in reversed(self._order):
            amount = total.get(key)
            if amount and parent_key is not None:
                total[parent_key] = total.get(parent_key, 0.0) + amount
        return total

    def text_length(self, node: LexborNode) -> int:
        """Characters of text in ``node``, whitespace at the ends of each text node left out."""
        return self.text.get(node.mem_id, 0)

    def joined_length(self, node: LexborNode) -> int:
        """Length of ``node.text(separator=" ", strip=True)``."""
        key = node.mem_id
        return self.text.get(key, 0) + max(self.pieces.get(key, 0) - 1, 0)

    def link_length(self, node: LexborNode) -> int:
        """Characters of link text in ``node`` (itself included when it is a link)."""
        return self.links.get(node.mem_id, 0)

    def holds(self, node: LexborNode, tag: str) -> bool:
        """Tell whether ``node`` is or holds an element ``tag`` (one of the flagged tags).

        The answer of ``node.css_first(tag) is not None``, which matches ``node`` itself too.
        """
        return node.tag == tag or bool(self.has.get(node.mem_id, 0) & self._bits[tag])
