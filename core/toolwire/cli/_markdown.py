"""Markdown of a model's answer, styled for a terminal one line at a time.

A streamed answer is written as it arrives; each line, once complete, is styled (headings bold,
list bullets, quotes, fenced code, ``**strong**``, ``*emphasis*``, ``code`` and links as
"text (address)"). Inline Markdown is parsed by markdown-it-py when it is installed (the
``toolwire[chat]`` extra brings it); without it lines are shown as written. Text passed here is
already :func:`~toolwire.cli._text.inert`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Paint = Callable[[str, str], str]

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^(\s*)(\d{1,9})[.)]\s+(.*)$")
_QUOTE = re.compile(r"^\s{0,3}>\s?(.*)$")
_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_SYNTAX = re.compile(r"[*_`#>\[|~]|^\s*([-+]|\d+[.)])\s")

_parser: Any = None


def _inline_parser() -> Any:
    global _parser
    if _parser is None:
        try:
            from markdown_it import MarkdownIt
        except ImportError:
            _parser = False
        else:
            _parser = MarkdownIt("commonmark", {"html": False}).enable("strikethrough")
    return _parser


def has_markdown(line: str) -> bool:
    """True when ``line`` may look different styled (a cheap test before styling it)."""
    return bool(_SYNTAX.search(line))


class LineStyler:
    """Styles the lines of one answer in order (it remembers whether a code fence is open)."""

    def __init__(self, paint: Paint) -> None:
        self._paint = paint
        self._fence: str | None = None

    def reset(self) -> None:
        """A new answer starts."""
        self._fence = None

    def style(self, line: str) -> str:
        """``line`` as it should show (its text kept, the Markdown syntax turned into style)."""
        paint = self._paint
        fence = _FENCE.match(line)
        if self._fence is not None:
            if (
                fence
                and fence.group(1)[0] == self._fence[0]
                and len(fence.group(1)) >= len(self._fence)
            ):
                self._fence = None
                return paint("dim", line)
            return paint("tool", line)
        if fence:
            self._fence = fence.group(1)
            return paint("dim", line)
        if _RULE.match(line):
            return paint("dim", "─" * 20)
        if _TABLE_RULE.match(line) and "|" in line:
            return paint("dim", line)
        match = _HEADING.match(line)
        if match:
            return paint("bold", self._inline(match.group(2)))
        match = _QUOTE.match(line)
        if match:
            return paint("dim", "│ ") + self._inline(match.group(1))
        match = _BULLET.match(line)
        if match:
            return f"{match.group(1)}• {self._inline(match.group(2))}"
        match = _NUMBERED.match(line)
        if match:
            return f"{match.group(1)}{match.group(2)}. {self._inline(match.group(3))}"
        return self._inline(line)

    def _inline(self, text: str) -> str:
        parser = _inline_parser()
        if not parser or not has_markdown(text):
            return text
        tokens = parser.parseInline(text)
        if not tokens or not tokens[0].children:
            return text
        out: list[str] = []
        styles: list[str] = []
        links: list[str] = []
        for token in tokens[0].children:
            kind = token.type
            if kind in ("strong_open", "em_open", "s_open"):
                styles.append({"strong_open": "bold", "em_open": "italic", "s_open": "dim"}[kind])
            elif kind in ("strong_close", "em_close", "s_close"):
                if styles:
                    styles.pop()
            elif kind == "link_open":
                links.append(str(token.attrs.get("href", "")))
                styles.append("underline")
            elif kind == "link_close":
                if styles:
                    styles.pop()
                href = links.pop() if links else ""
                if href:
                    out.append(self._paint("dim", f" ({href})"))
            elif kind == "code_inline":
                out.append(self._paint("tool", token.content))
            elif kind == "softbreak" or kind == "hardbreak":
                out.append(" ")
            elif kind == "image":
                out.append(f"[image: {token.content}]")
            else:
                text_piece = token.content
                for style in styles:
                    text_piece = self._paint(style, text_piece)
                out.append(text_piece)
        return "".join(out)
