"""Rendering of an HTML subtree to Markdown and to plain text in one walk."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from urllib.parse import urljoin, urlsplit

from selectolax.lexbor import LexborNode

__all__ = ["Rendered", "escape_plain_text", "render"]

#: Markdown and plain text of one rendered piece.
Rendered = tuple[str, str]

#: Decides whether an element (given with its tag) is left out of the output.
Prune = Callable[[LexborNode, str], bool]

_BLOCK_TAGS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "caption",
        "center",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "html",
        "legend",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
_STYLE_MARKERS = {
    "b": "**",
    "strong": "**",
    "i": "*",
    "em": "*",
    "cite": "*",
    "dfn": "*",
    "s": "~~",
    "del": "~~",
    "strike": "~~",
}
_CODE_TAGS = frozenset({"code", "kbd", "samp", "tt", "var"})
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_SKIPPED_TAGS = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "head",
        "title",
        "meta",
        "link",
        "svg",
        "math",
        "canvas",
        "iframe",
        "object",
        "embed",
        "audio",
        "video",
        "source",
        "track",
        "map",
        "button",
        "input",
        "select",
        "option",
        "textarea",
        "datalist",
        "dialog",
        "-comment",
    }
)
# Elements nested deeper than this are read as plain text: every level costs the walk a few
# Python frames, and the interpreter's recursion limit is about a thousand.
_MAX_DEPTH = 180
# C0 controls other than tab and line feed, and DEL: noise from broken pages.
_CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

_WHITESPACE = re.compile(r"\s+")
_SPACES = re.compile(r"[ \t]{2,}")
_MD_SPECIAL = re.compile(r"[\\`*\[\]_<]")
_MD_ESCAPE = re.compile(r"[\\`*\[\]]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|<(?=[A-Za-z/!?])")
# Text at the start of a line that Markdown would read as a heading, list item, quote or rule.
_MD_LINE_START = re.compile(
    r"^(\s*)(#{1,6}(?:\s|$)|[-+*](?:\s|$)|>|=+\s*$|(\d{1,9})([.)])(?:\s|$))"
)
_BACKTICKS = re.compile(r"`+")
_LIST_ITEM = re.compile(r"(?:- |\d+\. )")
_CODE_LANGUAGE = re.compile(r"(?:^|\s)(?:lang(?:uage)?-|brush:\s*)([A-Za-z0-9_+#.-]+)")


def _escape(text: str) -> str:
    if _MD_SPECIAL.search(text) is None:
        return text
    return _MD_ESCAPE.sub(lambda match: "\\" + match.group(), text)


def escape_plain_text(text: str) -> str:
    """Plain text as Markdown that reads as the same words: markup characters escaped."""
    return "\n".join(_escape_line_start(_escape(line)) for line in text.split("\n"))


def _collapse(raw: str) -> str:
    """Collapse whitespace as HTML rendering does, keeping one space at each edge that had any."""
    core = " ".join(raw.split())
    if not core:
        return " "
    if raw[0].isspace():
        core = " " + core
    if raw[-1].isspace():
        core += " "
    return core


def _escape_line_start(line: str) -> str:
    match = _MD_LINE_START.match(line)
    if match is None:
        return line
    if match.group(3) is not None:
        cut = match.end(3)
        return line[:cut] + "\\" + line[cut:]
    cut = match.end(1)
    return line[:cut] + "\\" + line[cut:]


def _code_fence(code: str, minimum: int) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
    return "`" * max(minimum, longest + 1)


def _finish_lines(text: str) -> str:
    """Collapse runs of spaces and trim each line of a paragraph."""
    if "  " in text or "\t" in text:
        text = _SPACES.sub(" ", text)
    if "\n" not in text:
        return text.strip()
    lines = [line.strip() for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


class _Inline:
    """Inline content being collected, as Markdown and as plain text side by side."""

    __slots__ = ("md", "text")

    def __init__(self) -> None:
        self.md: list[str] = []
        self.text: list[str] = []

    def add(self, md: str, text: str) -> None:
        self.md.append(md)
        self.text.append(text)

    def wrap(self, before: str, inner: _Inline, after: str) -> None:
        """Add ``inner`` framed by Markdown markers, keeping its edge spaces outside them."""
        md = "".join(inner.md)
        text = "".join(inner.text)
        core = md.strip()
        if not core:
            self.add(" " if md else "", text)
            return
        lead = " " if md[:1].isspace() else ""
        trail = " " if md[-1:].isspace() else ""
        if before == after and core.startswith(before) and core.endswith(after):
            self.add(f"{lead}{core}{trail}", text)  # <b><b>x</b></b> is bold once
        else:
            self.add(f"{lead}{before}{core}{after}{trail}", text)


class _Context:
    """Blocks rendered so far in one container, plus the paragraph still being collected."""

    __slots__ = ("blocks", "inline", "phrasing")

    def __init__(self, phrasing: bool = False) -> None:
        self.blocks: list[Rendered] = []
        self.inline = _Inline()
        #: Whether this holds the content of an inline element, whose edge spaces count.
        self.phrasing = phrasing

    def flush(self) -> None:
        inline = self.inline
        if not inline.md:
            return
        text = _finish_lines("".join(inline.text))
        md = _finish_lines("".join(inline.md))
        self.inline = _Inline()
        if md:
            lines = md.split("\n")
            md = "\n".join(_escape_line_start(line) for line in lines)
            self.blocks.append((md, text))

    def finish(self) -> list[Rendered]:
        self.flush()
        return self.blocks


def _indent(text: str, first: str, rest: str) -> str:
    lines = text.split("\n")
    return "\n".join([first + lines[0]] + [(rest + line) if line else "" for line in lines[1:]])


def _join_item_blocks(blocks: list[Rendered], is_list: list[bool]) -> Rendered:
    md_parts: list[str] = []
    text_parts: list[str] = []
    for index, (md, text) in enumerate(blocks):
        if index:
            glue = "\n" if is_list[index] else "\n\n"
            md_parts.append(glue)
            text_parts.append(glue)
        md_parts.append(md)
        text_parts.append(text)
    return "".join(md_parts), "".join(text_parts)


class _Renderer:
    """One rendering run: the base URL for links and the pruning rule of the caller."""

    __slots__ = ("base_url", "origin", "prune", "scheme")

    def __init__(self, base_url: str | None, prune: Prune | None) -> None:
        self.base_url = base_url
        self.prune = prune
        self.scheme = self.origin = ""
        if base_url:
            try:
                parts = urlsplit(base_url)
            except ValueError:
                parts = None
            if parts is not None and parts.scheme in ("http", "https") and parts.netloc:
                self.scheme = parts.scheme
                self.origin = f"{parts.scheme}://{parts.netloc}"

    # -- tree walk ---------------------------------------------------------------------------

    def children(self, node: LexborNode, ctx: _Context, depth: int) -> None:
        """Render the children of ``node`` (text and elements) into ``ctx``."""
        if depth > _MAX_DEPTH:
            text = _WHITESPACE.sub(" ", node.text())
            ctx.inline.add(_escape(text), text)
            return
        for child in node.iter(include_text=True):
            tag = child.tag
            if tag == "-text":
                raw = child.text_content
                if not raw:
                    continue
                inline = ctx.inline
                if raw.isspace():
                    # Indentation between blocks, or the space between two inline elements.
                    if inline.md or ctx.phrasing:
                        inline.md.append(" ")
                        inline.text.append(" ")
                    continue
                text = _collapse(raw)
                inline.md.append(_escape(text))
                inline.text.append(text)
            elif (
                tag is not None
                and tag not in _SKIPPED_TAGS
                and (self.prune is None or not self.prune(child, tag))
            ):
                self.element(child, tag, ctx, depth + 1)

    def element(self, node: LexborNode, tag: str, ctx: _Context, depth: int) -> None:
        """Render one element into ``ctx``: inline into its paragraph, or as blocks."""
        if tag in _STYLE_MARKERS or tag == "a":
            sub = _Context(phrasing=True)
            self.children(node, sub, depth)
            if sub.blocks:
                # Blocks inside a link or emphasis (a teaser wrapped in one <a>): no markup.
                ctx.flush()
                ctx.blocks.extend(sub.finish())
            elif tag != "a":
                marker = _STYLE_MARKERS[tag]
                ctx.inline.wrap(marker, sub.inline, marker)
            else:
                target = self.resolve(node.attributes.get("href"))
                if target is None:
                    ctx.inline.md.extend(sub.inline.md)
                    ctx.inline.text.extend(sub.inline.text)
                else:
                    ctx.inline.wrap("[", sub.inline, f"]({target})")
        elif tag == "br":
            ctx.inline.add("\n", "\n")
        elif tag == "img":
            self.image(node, ctx)
        elif tag in _CODE_TAGS:
            code = _WHITESPACE.sub(" ", node.text())
            if code.strip():
                fence = _code_fence(code, 1)
                pad = " " if code.startswith("`") or code.endswith("`") else ""
                ctx.inline.add(f"{fence}{pad}{code}{pad}{fence}", code)
        elif tag not in _BLOCK_TAGS:
            self.children(node, ctx, depth)
        else:
            ctx.flush()
            self.block(node, tag, ctx, depth)
            ctx.flush()

    def block(self, node: LexborNode, tag: str, ctx: _Context, depth: int) -> None:
        level = _HEADINGS.get(tag)
        if level is not None:
            md, text = self.flat(node, depth)
            if md:
                ctx.blocks.append(("#" * level + " " + md, text))
        elif tag in ("ul", "ol", "menu", "dir"):
            rendered = self.listing(node, tag == "ol", depth)
            if rendered is not None:
                ctx.blocks.append(rendered)
        elif tag == "pre":
            self.preformatted(node, ctx)
        elif tag == "blockquote":
            inner = self.blocks_of(node, depth)
            if inner:
                md = "\n\n".join(md for md, _ in inner)
                text = "\n\n".join(text for _, text in inner)
                quoted = "\n".join(("> " + line) if line else ">" for line in md.split("\n"))
                ctx.blocks.append((quoted, text))
        elif tag == "table":
            self.table(node, ctx, depth)
        elif tag == "hr":
            ctx.blocks.append(("---", ""))
        elif tag == "dt":
            md, text = self.flat(node, depth)
            if md:
                ctx.blocks.append((f"**{md}**", text))
        else:
            self.children(node, ctx, depth)

    # -- inline pieces -----------------------------------------------------------------------

    def flat(self, node: LexborNode, depth: int) -> Rendered:
        """Render a node as one line, whatever blocks it holds (headings, table cells)."""
        blocks = self.blocks_of(node, depth)
        md = " ".join(md.replace("\n", " ") for md, _ in blocks)
        text = " ".join(text.replace("\n", " ") for _, text in blocks)
        return md, text

    def resolve(self, href: str | None) -> str | None:
        """The absolute address of a link or picture, or None for one that leads nowhere."""
        if not href:
            return None
        href = href.strip()
        if not href or href.startswith("#"):
            return None
        lowered = href[:11].lower()
        if lowered.startswith(("javascript:", "data:", "vbscript:")):
            return None
        if lowered.startswith(("http://", "https://")) or not self.base_url:
            pass  # absolute already, or nothing to resolve against
        elif self.origin and href.startswith("//"):
            href = f"{self.scheme}:{href}"
        elif self.origin and href.startswith("/") and "/." not in href:
            href = self.origin + href
        else:
            try:
                href = urljoin(self.base_url, href)
            except ValueError:
                return None
        return href.replace(" ", "%20").replace("(", "%28").replace(")", "%29")

    def image(self, node: LexborNode, ctx: _Context) -> None:
        attributes = node.attributes
        # Lazy-loaded pictures keep the real address in a data- attribute and a placeholder
        # in src.
        source = self.resolve(
            attributes.get("data-src")
            or attributes.get("data-lazy-src")
            or attributes.get("data-original")
            or attributes.get("src")
        )
        if source is None:
            return
        alt = _escape(_WHITESPACE.sub(" ", attributes.get("alt") or "").strip())
        ctx.inline.add(f"![{alt}]({source})", "")

    # -- blocks ------------------------------------------------------------------------------

    def blocks_of(self, node: LexborNode, depth: int) -> list[Rendered]:
        """Render the content of ``node`` as blocks of its own."""
        sub = _Context()
        self.children(node, sub, depth)
        return sub.finish()

    def listing(self, node: LexborNode, ordered: bool, depth: int) -> Rendered | None:
        """Render a list as one block, nested lists indented under their items."""
        number = 1
        if ordered:
            start = (node.attributes.get("start") or "").strip()
            number = int(start) if start.isdigit() else 1
        items: list[Rendered] = []
        loose = _Context()
        for child in node.iter(include_text=True):
            tag = child.tag
            if tag == "-text":
                raw = child.text_content
                if raw and raw.strip():
                    text = _WHITESPACE.sub(" ", raw)
                    loose.inline.add(_escape(text), text)
                continue
            if tag is None or tag in _SKIPPED_TAGS:
                continue
            if self.prune is not None and self.prune(child, tag):
                continue
            if tag != "li":
                self.element(child, tag, loose, depth + 1)
                continue
            blocks = self.item_blocks(child, loose, depth + 1)
            if not blocks:
                continue
            is_list = [_LIST_ITEM.match(md) is not None for md, _ in blocks]
            md, text = _join_item_blocks(blocks, is_list)
            marker = f"{number}. " if ordered else "- "
            number += 1
            pad = " " * len(marker)
            items.append((_indent(md, marker, pad), _indent(text, marker, pad)))
        if loose.inline.md or loose.blocks:
            for md, text in loose.finish():
                items.append((_indent(md, "- ", "  "), _indent(text, "- ", "  ")))
        if not items:
            return None
        return "\n".join(md for md, _ in items), "\n".join(text for _, text in items)

    def item_blocks(self, item: LexborNode, loose: _Context, depth: int) -> list[Rendered]:
        if loose.inline.md or loose.blocks:
            # Content stray between items of a list joins the list as items of its own.
            blocks = loose.finish()
            loose.blocks = []
            loose.inline = _Inline()
            return blocks + self.blocks_of(item, depth)
        return self.blocks_of(item, depth)

    def preformatted(self, node: LexborNode, ctx: _Context) -> None:
        code = node.text().strip("\n")
        if not code.strip():
            return
        classes = node.attributes.get("class") or ""
        inner = node.css_first("code")
        if inner is not None:
            classes += " " + (inner.attributes.get("class") or "")
        match = _CODE_LANGUAGE.search(classes)
        language = match.group(1) if match else ""
        fence = _code_fence(code, 3)
        ctx.blocks.append((f"{fence}{language}\n{code}\n{fence}", code))

    def table(self, node: LexborNode, ctx: _Context, depth: int) -> None:
        rows = list(self.table_rows(node))
        if not rows:
            return
        width = max(sum(_span(cell) for cell in cells) for cells in rows)
        if width < 2 or _is_layout_table(node):
            # The first row is the header of a Markdown table; a layout table is no table.
            for cells in rows:
                for cell in cells:
                    self.children(cell, ctx, depth + 1)
                    ctx.flush()
            return
        md_rows: list[list[str]] = []
        text_rows: list[str] = []
        for cells in rows:
            md_cells: list[str] = []
            text_cells: list[str] = []
            for cell in cells:
                md, text = self.flat(cell, depth + 1)
                md_cells.append(md.replace("|", "\\|"))
                text_cells.append(text)
                md_cells.extend([""] * (_span(cell) - 1))
            if any(text_cells):
                md_rows.append(md_cells + [""] * (width - len(md_cells)))
                text_rows.append("\t".join(text_cells))
        if not md_rows:
            return
        lines = ["| " + " | ".join(md_rows[0]) + " |", "|" + " --- |" * width]
        lines.extend("| " + " | ".join(cells) + " |" for cells in md_rows[1:])
        ctx.blocks.append(("\n".join(lines), "\n".join(text_rows)))

    def table_rows(self, table: LexborNode) -> Iterable[list[LexborNode]]:
        """Yield the cells of each row of ``table``, not those of tables nested in it."""
        for section in table.iter():
            tag = section.tag
            if tag in ("thead", "tbody", "tfoot"):
                rows = [row for row in section.iter() if row.tag == "tr"]
            elif tag == "tr":
                rows = [section]
            else:
                continue
            for row in rows:
                cells = [cell for cell in row.iter() if cell.tag in ("td", "th")]
                if cells:
                    yield cells


def _span(cell: LexborNode) -> int:
    value = (cell.attributes.get("colspan") or "1").strip()
    return min(int(value), 50) if value.isdigit() and value != "0" else 1


def _is_layout_table(table: LexborNode) -> bool:
    """Tell a table used for page layout from a table of data."""
    if table.css_first("td table, th table") is not None:
        return True
    return any(len(block.text()) > 400 for block in table.css("td > p, td > div, th > div"))


def render(
    nodes: Iterable[LexborNode], *, base_url: str | None = None, prune: Prune | None = None
) -> Rendered:
    """Render elements (in the order given) to Markdown and to plain text.

    :param nodes: the elements to render, typically the main content of a page.
    :param base_url: URL that relative links and image sources are resolved against.
    :param prune: called with each element inside ``nodes`` and its tag; True leaves the
        element out.
    :returns: the Markdown and the plain text (same content, no URLs, no markup).
    """
    renderer = _Renderer(base_url, prune)
    ctx = _Context()
    for node in nodes:
        tag = node.tag
        if tag is not None and tag not in _SKIPPED_TAGS:
            renderer.element(node, tag, ctx, 0)
    blocks = ctx.finish()
    markdown = "\n\n".join(md for md, _ in blocks)
    if _CONTROL_CHARACTERS.search(markdown):
        blocks = [
            (_CONTROL_CHARACTERS.sub("", md), _CONTROL_CHARACTERS.sub("", text))
            for md, text in blocks
        ]
        blocks = [(md, text) for md, text in blocks if md.strip()]
        markdown = "\n\n".join(md for md, _ in blocks)
    text = "\n\n".join(text for _, text in blocks if text)
    return markdown, text
