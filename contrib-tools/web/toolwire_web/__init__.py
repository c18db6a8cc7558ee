"""Web tools for toolwire."""

from ._read import read_web_page
from ._search import web_search
from ._settings import WebSettings

__all__ = ["WebSettings", "read_web_page", "web_search"]
