"""semantic_search over your own notes and documents, offline: one SQLite index per host."""

from ._cli import index_command
from ._index import Hit, IndexProgress, IndexReport, SourceIndex, SourceReport, index_sources
from ._search import RETRIEVAL_VALUE, semantic_search
from ._settings import SourceConfig, SourcesSettings

__all__ = [
    "Hit",
    "IndexProgress",
    "IndexReport",
    "RETRIEVAL_VALUE",
    "SourceConfig",
    "SourceIndex",
    "SourceReport",
    "SourcesSettings",
    "index_command",
    "index_sources",
    "semantic_search",
]
