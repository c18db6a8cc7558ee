"""Reading one file of a data source into text: plain text, Markdown, HTML and PDF."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

KINDS = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
}
_MAX_PDF_PAGES = 2000
# The extractor's cost grows with the square of the nesting depth (100,000 nested <div>s take
# minutes); no real document nests this deep.
MAX_HTML_DEPTH = 1024
_TAG = re.compile(rb"<(/?)([a-zA-Z][a-zA-Z0-9-]*)[^>]*?(/?)>")
# Elements that never hold content, or whose end tag may be left out: they do not nest.
_FLAT = frozenset(
    b"area base br col embed hr img input link meta source track wbr p li dt dd option "
    b"optgroup tr td th thead tbody tfoot colgroup caption rb rt rtc rp html head body".split()
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
# Control characters other than tab, newline and carriage return: text files have almost none.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class DocumentSkipped(Exception):
    """A file that cannot be indexed; the message says why, for the index report."""


@attrs.frozen(kw_only=True)
class Document:
    """The text of one file and what is known about it."""

    kind: str
    text: str
    title: str | None = None
    cut: bool = False


def document_kind(path: Path) -> str | None:
    """The kind of document a file name says it holds, or None for an unsupported type."""
    return KINDS.get(path.suffix.lower())


def read_document(path: Path, data: bytes, *, max_chars: int) -> Document:
    """Turn the bytes of ``path`` into text, at most ``max_chars`` of it.

    :raises DocumentSkipped: for an unsupported type, binary content under a text name, a PDF
        that cannot be read, or HTML the extractor cannot handle.
    """
    kind = document_kind(path)
    if kind is None:
        raise DocumentSkipped(f"unsupported file type {path.suffix or '(none)'!r}")
    if kind == "pdf":
        return _cut(_read_pdf(data), max_chars)
    if _looks_binary(data):
        raise DocumentSkipped(
            f"binary content under a {kind} file name (NUL bytes or control characters)"
        )
    if kind == "html":
        return _cut(_read_html(data), max_chars)
    from toolwire_web.extraction import normalize_text_document

    text = normalize_text_document(data.decode("utf-8", errors="replace"))
    title = None
    if kind == "markdown":
        heading = _HEADING.search(text)
        title = heading.group(1).strip() if heading else None
    return _cut(Document(kind=kind, text=text, title=title), max_chars)


def _looks_binary(data: bytes) -> bool:
    head = data[:8192]
    if b"\x00" in head:
        return True
    text = head.decode("utf-8", errors="replace")
    if not text:
        return False
    odd = len(_CONTROL.findall(text)) + text.count("\ufffd")
    return odd / len(text) > 0.05


def html_depth(data: bytes, limit: int = MAX_HTML_DEPTH) -> int:
    """How deep the elements of an HTML document nest, counted up to just past ``limit``."""
    depth = deepest = 0
    for match in _TAG.finditer(data):
        closing, name, self_closing = match.groups()
        if name.lower() in _FLAT or self_closing:
            continue
        if closing:
            depth = max(0, depth - 1)
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                break
    return deepest


def _read_html(data: bytes) -> Document:
    from toolwire_web.extraction import extract_page

    depth = html_depth(data)
    if depth > MAX_HTML_DEPTH:
        raise DocumentSkipped(
            f"HTML nested more than {MAX_HTML_DEPTH} elements deep: not extracted"
        )
    try:
        page = extract_page(data)
    except RecursionError:
        raise DocumentSkipped("HTML nested too deeply to extract") from None
    except Exception as exc:
        raise DocumentSkipped(
            f"HTML could not be extracted ({type(exc).__name__}: {exc})"
        ) from None
    return Document(kind="html", text=page.markdown, title=page.title)


def _read_pdf(data: bytes) -> Document:
    import io

    import pypdf

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise DocumentSkipped("the PDF is encrypted")
        pages = []
        for number, page in enumerate(reader.pages):
            if number >= _MAX_PDF_PAGES:
                break
            pages.append(page.extract_text() or "")
        title = None
        metadata = reader.metadata
        if metadata is not None and metadata.title:
            title = str(metadata.title).strip() or None
    except DocumentSkipped:
        raise
    except Exception as exc:
        raise DocumentSkipped(f"the PDF could not be read ({type(exc).__name__}: {exc})") from None
    return Document(kind="pdf", text="\n\n".join(pages), title=title)


def _cut(document: Document, max_chars: int) -> Document:
    if len(document.text) <= max_chars:
        return document
    return attrs.evolve(document, text=document.text[:max_chars], cut=True)


def split_passages(text: str, size: int) -> list[str]:
    """Split text into passages of about ``size`` characters, at paragraph breaks where possible.

    A paragraph longer than ``size`` is split at the last sentence end or space before the
    limit; blank passages are dropped.
    """
    passages: list[str] = []
    current: list[str] = []
    length = 0
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        while len(paragraph) > size:
            head, paragraph = _split_long(paragraph, size)
            if current:
                passages.append("\n\n".join(current))
                current, length = [], 0
            passages.append(head)
        if length and length + len(paragraph) + 2 > size:
            passages.append("\n\n".join(current))
            current, length = [], 0
        current.append(paragraph)
        length += len(paragraph) + 2
    if current:
        passages.append("\n\n".join(current))
    return passages


def _split_long(paragraph: str, size: int) -> tuple[str, str]:
    window = paragraph[:size]
    cut = max(window.rfind(". "), window.rfind("! "), window.rfind("? "))
    if cut < size // 2:
        cut = window.rfind(" ")
    if cut < size // 2:
        cut = size - 1
    return paragraph[: cut + 1].strip(), paragraph[cut + 1 :].strip()
