"""Main content of web pages as Markdown, and normalisation of plain-text documents."""

from ._extract import ExtractedPage, extract_page
from ._text import normalize_text_document

__all__ = ["ExtractedPage", "extract_page", "normalize_text_document"]
