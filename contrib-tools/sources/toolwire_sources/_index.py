"""The index of a host's data sources: one SQLite file with FTS5 (BM25) and embeddings.

Lexical search is FTS5's BM25. Semantic search compares unit-length WordLlama vectors; once a
source has more than ``_CELL_THRESHOLD`` passages its vectors are grouped into cells around
k-means centroids, and a query reads only the cells nearest to it (an inverted-file index), so
its cost grows with the square root of the source, not with the source. Hybrid search fuses the
two rankings by reciprocal rank.
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import attrs
import numpy as np
import numpy.typing as npt

from toolwire.sqlite import use_wal
from toolwire.utf8 import utf8_text

from ._documents import Document, DocumentSkipped, read_document, split_passages
from ._embedding import DIMENSIONS, MODEL, embed
from ._files import Listed, list_files, read_listed
from ._settings import SourceConfig, SourcesSettings

SearchMode = Literal["lexical", "semantic", "hybrid"]
_SCHEMA_VERSION = "1"
_BUSY_TIMEOUT = 30.0  # seconds a write (or the switch to WAL) waits for another process
_CELL_THRESHOLD = 4096
_EMBED_BATCH = 512
_PROBES = 12
_RRF_K = 60
_CANDIDATES = 50
# Below this cosine similarity a passage is not a semantic match at all.
_MIN_SIMILARITY = 0.2
_WORD = re.compile(r"\w+", re.UNICODE)
# Words too common to say anything lexically; an OR query over them would match everything.
_STOPWORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "how",
        "i", "in", "is", "it", "its", "my", "of", "on", "or", "our", "that", "the", "their",
        "this", "to", "was", "what", "when", "where", "which", "who", "why", "will", "with",
        "you", "your",
    }
)  # fmt: skip
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    title TEXT,
    kind TEXT NOT NULL,
    UNIQUE (source, path)
);
CREATE TABLE IF NOT EXISTS passages (
    id INTEGER PRIMARY KEY,
    document INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    source TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    cell INTEGER NOT NULL DEFAULT 0,
    vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS passages_by_cell ON passages (source, cell);
CREATE INDEX IF NOT EXISTS passages_by_document ON passages (document);
CREATE TABLE IF NOT EXISTS cells (
    source TEXT NOT NULL,
    cell INTEGER NOT NULL,
    centroid BLOB NOT NULL,
    PRIMARY KEY (source, cell)
);
CREATE TABLE IF NOT EXISTS trained (source TEXT PRIMARY KEY, passages INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5 (
    text, source, content='passages', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS passages_ai AFTER INSERT ON passages BEGIN
    INSERT INTO passages_fts (rowid, text, source) VALUES (new.id, new.text, new.source);
END;
CREATE TRIGGER IF NOT EXISTS passages_ad AFTER DELETE ON passages BEGIN
    INSERT INTO passages_fts (passages_fts, rowid, text, source)
    VALUES ('delete', old.id, old.text, old.source);
END;
"""


@attrs.frozen(kw_only=True)
class Hit:
    """One passage found by a search."""

    passage_id: int
    source: str
    path: str
    title: str | None
    ordinal: int
    text: str
    score: float


@attrs.frozen(kw_only=True)
class IndexProgress:
    """How far indexing got: ``done`` of ``total`` files of ``source``, ``path`` the latest."""

    source: str
    done: int
    total: int
    path: str


@attrs.frozen(kw_only=True)
class SourceReport:
    """What indexing did to one source."""

    source: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    passages: int = 0
    bytes_read: int = 0
    skipped: tuple[tuple[str, str], ...] = ()
    cut: tuple[str, ...] = ()
    error: str | None = None

    def summary(self) -> str:
        """One line for people."""
        if self.error is not None:
            return f"{self.source}: not indexed: {self.error}"
        parts = [
            f"{self.added} added",
            f"{self.updated} updated",
            f"{self.unchanged} unchanged",
            f"{self.removed} removed",
        ]
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped")
        if self.cut:
            parts.append(f"{len(self.cut)} cut to max_document_chars")
        return f"{self.source}: " + ", ".join(parts)


@attrs.frozen(kw_only=True)
class IndexReport:
    """What one indexing pass did, per source, and the sources no longer configured."""

    sources: tuple[SourceReport, ...]
    dropped_sources: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def documents(self) -> int:
        """Documents read (added or updated)."""
        return sum(r.added + r.updated for r in self.sources)

    @property
    def bytes_read(self) -> int:
        """Bytes of the documents read."""
        return sum(r.bytes_read for r in self.sources)


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=_BUSY_TIMEOUT, isolation_level=None)
    try:
        use_wal(connection, timeout=_BUSY_TIMEOUT)
        connection.execute("PRAGMA foreign_keys=ON")
        connection.execute("PRAGMA synchronous=NORMAL")
    except BaseException:  # a file that is no database, an index locked past the timeout
        connection.close()
        raise
    return connection


class SourceIndex:
    """The SQLite index of a host's data sources (``[tools.sources] index_path``).

    One instance per thread: SQLite connections are not shared between threads. Close it with
    :meth:`close` (or use it as a context manager).
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._db = _connect(self.path)
        try:
            self._prepare()
        except BaseException:
            self._db.close()
            raise

    def _prepare(self) -> None:
        """Create the schema, and refuse an index built with another embedding model."""
        self._db.executescript(_SCHEMA)
        row = self._db.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
        if row is None:
            self._db.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [("model", MODEL), ("schema", _SCHEMA_VERSION)],
            )
        elif row[0] != MODEL:
            raise ValueError(
                f"the index {self.path} was built with the embedding model {row[0]!r}, not "
                f"{MODEL!r}: delete it and index again"
            )

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __enter__(self) -> SourceIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading -----------------------------------------------------------------------------

    def sources(self) -> dict[str, int]:
        """The indexed sources and their passage counts."""
        rows = self._db.execute("SELECT source, COUNT(*) FROM passages GROUP BY source")
        counts = dict(rows.fetchall())
        for (source,) in self._db.execute("SELECT DISTINCT source FROM documents"):
            counts.setdefault(source, 0)
        return counts

    def passage_count(self, source: str) -> int:
        """How many passages ``source`` has in the index."""
        row = self._db.execute("SELECT COUNT(*) FROM passages WHERE source = ?", (source,))
        return int(row.fetchone()[0])

    def has_source(self, source: str) -> bool:
        """True once ``source`` was indexed (even when it holds no document)."""
        row = self._db.execute("SELECT 1 FROM trained WHERE source = ?", (source,)).fetchone()
        return row is not None

    def search(
        self, source: str, query: str, *, limit: int, mode: SearchMode = "hybrid"
    ) -> list[Hit]:
        """The best ``limit`` passages of ``source`` for ``query``, best first."""
        if limit < 1:
            return []
        if mode == "lexical":
            ranked = self._lexical(source, query, limit)
        elif mode == "semantic":
            ranked = self._semantic(source, query, limit)
        elif mode == "hybrid":
            depth = max(limit, _CANDIDATES)
            ranked = _fuse(
                self._lexical(source, query, depth), self._semantic(source, query, depth)
            )[:limit]
        else:
            raise ValueError(f"search mode {mode!r}: expected 'lexical', 'semantic' or 'hybrid'")
        return self._hits(source, ranked)

    def _lexical(self, source: str, query: str, limit: int) -> list[tuple[int, float]]:
        words = [w for w in _WORD.findall(query.lower()) if w not in _STOPWORDS]
        if not words:
            words = _WORD.findall(query.lower())
        if not words:
            return []
        terms = " OR ".join('"' + w.replace('"', "") + '"' for w in dict.fromkeys(words))
        match = f'text : ({terms}) AND source : "{source}"'
        rows = self._db.execute(
            "SELECT rowid, bm25(passages_fts, 1.0, 0.0) AS score FROM passages_fts "
            "WHERE passages_fts MATCH ? ORDER BY score LIMIT ?",
            (match, limit),
        )
        return [(int(rowid), -float(score)) for rowid, score in rows]

    def _semantic(self, source: str, query: str, limit: int) -> list[tuple[int, float]]:
        vector = embed([query])[0]
        if not vector.any():
            return []
        centroids = self._db.execute(
            "SELECT cell, centroid FROM cells WHERE source = ? ORDER BY cell", (source,)
        ).fetchall()
        if centroids:
            matrix = np.stack([_vector(blob) for _, blob in centroids])
            nearest = np.argsort(-np.einsum("ij,j->i", matrix, vector))[:_PROBES]
            cells = [int(centroids[i][0]) for i in nearest]
            marks = ",".join("?" * len(cells))
            rows = self._db.execute(
                f"SELECT id, vector FROM passages WHERE source = ? AND cell IN ({marks})",
                (source, *cells),
            ).fetchall()
        else:
            rows = self._db.execute(
                "SELECT id, vector FROM passages WHERE source = ?", (source,)
            ).fetchall()
        if not rows:
            return []
        ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        vectors = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float16).reshape(
            len(rows), DIMENSIONS
        )
        # einsum rather than BLAS: a thread pool per small product costs more than it saves.
        scores = np.einsum("ij,j->i", vectors.astype(np.float32), vector)
        count = min(limit, len(rows))
        top = np.argpartition(-scores, count - 1)[:count]
        top = top[np.argsort(-scores[top])]
        return [(int(ids[i]), float(scores[i])) for i in top if scores[i] >= _MIN_SIMILARITY]

    def _hits(self, source: str, ranked: list[tuple[int, float]]) -> list[Hit]:
        if not ranked:
            return []
        marks = ",".join("?" * len(ranked))
        rows = self._db.execute(
            "SELECT p.id, d.path, d.title, p.ordinal, p.text FROM passages p "
            f"JOIN documents d ON d.id = p.document WHERE p.id IN ({marks})",
            [pid for pid, _ in ranked],
        ).fetchall()
        by_id = {row[0]: row for row in rows}
        hits = []
        for pid, score in ranked:
            row = by_id.get(pid)
            if row is not None:
                hits.append(
                    Hit(
                        passage_id=pid,
                        source=source,
                        path=row[1],
                        title=row[2],
                        ordinal=row[3],
                        text=row[4],
                        score=score,
                    )
                )
        return hits

    # -- writing -----------------------------------------------------------------------------

    def index_source(
        self,
        source: str,
        config: SourceConfig,
        settings: SourcesSettings,
        progress: Callable[[IndexProgress], None] | None = None,
    ) -> SourceReport:
        """Bring ``source`` up to date with its files: read new and changed ones (by SHA-256),
        skip unchanged ones, remove deleted ones. A file that cannot be read is reported in
        ``skipped`` and costs only itself; its earlier passages are removed."""
        root = config.root
        if config.kind == "file":
            if not root.is_file():
                return SourceReport(source=source, error=f"the file {root} does not exist")
            files = [Listed(root)]
        else:
            if not root.is_dir():
                return SourceReport(source=source, error=f"the folder {root} does not exist")
            files = sorted(list_files(root, config.include), key=lambda listed: listed.path)
        known = {
            path: (doc_id, digest)
            for doc_id, path, digest in self._db.execute(
                "SELECT id, path, sha256 FROM documents WHERE source = ?", (source,)
            )
        }
        added = updated = unchanged = passages = bytes_read = 0
        skipped: list[tuple[str, str]] = []
        cut: list[str] = []
        seen: set[str] = set()
        # Documents are embedded in batches: the tokenizer costs much less per text in bulk.
        pending: list[_Pending] = []
        pending_passages = 0
        for number, listed in enumerate(files, start=1):
            file = listed.path
            # A name that is not UTF-8 is kept (and shown) with its odd bytes written \xNN.
            shown = file.name if config.kind == "file" else file.relative_to(root).as_posix()
            name = utf8_text(shown)
            if progress is not None:
                progress(IndexProgress(source=source, done=number, total=len(files), path=name))
            if name in seen:
                skipped.append((name, "another file's name reads the same once written as UTF-8"))
                continue
            seen.add(name)
            previous = known.get(name)
            try:
                data = read_listed(listed, settings.max_file_bytes)
                size = len(data)
            except OSError as exc:
                self._forget(previous)
                skipped.append((name, f"cannot be read ({exc.strerror or exc})"))
                continue
            except DocumentSkipped as exc:
                self._forget(previous)
                skipped.append((name, str(exc)))
                continue
            digest = hashlib.sha256(data).hexdigest()
            if previous is not None and previous[1] == digest:
                unchanged += 1
                continue
            try:
                document = read_document(file, data, max_chars=settings.max_document_chars)
            except DocumentSkipped as exc:
                self._forget(previous)
                skipped.append((name, str(exc)))
                continue
            chunks = split_passages(document.text, settings.passage_chars)
            pending.append(_Pending(name, previous, digest, size, document, chunks))
            pending_passages += len(chunks)
            passages += len(chunks)
            bytes_read += size
            if document.cut:
                cut.append(name)
            if previous is None:
                added += 1
            else:
                updated += 1
            if pending_passages >= _EMBED_BATCH:
                self._write(source, pending)
                pending, pending_passages = [], 0
        self._write(source, pending)
        removed = 0
        for name, (doc_id, _) in known.items():
            if name not in seen:
                self._forget((doc_id, ""))
                removed += 1
        self._train(source)
        return SourceReport(
            source=source,
            added=added,
            updated=updated,
            unchanged=unchanged,
            removed=removed,
            passages=passages,
            bytes_read=bytes_read,
            skipped=tuple(skipped),
            cut=tuple(cut),
        )

    def _write(self, source: str, pending: list[_Pending]) -> None:
        """Embed the passages of ``pending`` documents at once, then store each document (and
        remove what it replaces) in its own transaction."""
        if not pending:
            return
        texts = [
            f"{item.document.title}\n{chunk}" if item.document.title else chunk
            for item in pending
            for chunk in item.chunks
        ]
        vectors = embed(texts)
        start = 0
        for item in pending:
            mine = vectors[start : start + len(item.chunks)]
            start += len(item.chunks)
            with self._transaction():
                self._forget(item.previous)
                cursor = self._db.execute(
                    "INSERT INTO documents (source, path, sha256, size, title, kind) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        source,
                        item.name,
                        item.digest,
                        item.size,
                        item.document.title,
                        item.document.kind,
                    ),
                )
                doc_id = cursor.lastrowid
                cells = self._assign(source, mine)
                self._db.executemany(
                    "INSERT INTO passages (document, source, ordinal, text, cell, vector) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (doc_id, source, i, text, cells[i], _blob(mine[i]))
                        for i, text in enumerate(item.chunks)
                    ],
                )

    def drop_source(self, source: str) -> None:
        """Remove everything of ``source`` from the index."""
        with self._transaction():
            self._db.execute("DELETE FROM passages WHERE source = ?", (source,))
            self._db.execute("DELETE FROM documents WHERE source = ?", (source,))
            self._db.execute("DELETE FROM cells WHERE source = ?", (source,))
            self._db.execute("DELETE FROM trained WHERE source = ?", (source,))

    def _forget(self, previous: tuple[int, str] | None) -> None:
        if previous is None:
            return
        self._db.execute("DELETE FROM passages WHERE document = ?", (previous[0],))
        self._db.execute("DELETE FROM documents WHERE id = ?", (previous[0],))

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _assign(self, source: str, vectors: npt.NDArray[np.float32]) -> list[int]:
        rows = self._db.execute(
            "SELECT cell, centroid FROM cells WHERE source = ? ORDER BY cell", (source,)
        ).fetchall()
        if not rows or not len(vectors):
            return [0] * len(vectors)
        matrix = np.stack([_vector(blob) for _, blob in rows])
        nearest = np.argmax(vectors @ matrix.T, axis=1)
        return [int(rows[i][0]) for i in nearest]

    def _train(self, source: str) -> None:
        """(Re)build the cells of a source that grew past the threshold or doubled since."""
        count = self.passage_count(source)
        row = self._db.execute("SELECT passages FROM trained WHERE source = ?", (source,))
        found = row.fetchone()
        trained_at = int(found[0]) if found else 0
        has_cells = self._db.execute(
            "SELECT 1 FROM cells WHERE source = ? LIMIT 1", (source,)
        ).fetchone()
        retrain = count > _CELL_THRESHOLD and (not has_cells or count > 2 * trained_at)
        drop = count <= _CELL_THRESHOLD // 2 and has_cells
        with self._transaction():
            if retrain:
                ids, vectors = self._all_vectors(source)
                centroids = _kmeans(vectors, int(math.sqrt(count)))
                cells = np.argmax(vectors @ centroids.T, axis=1)
                self._db.execute("DELETE FROM cells WHERE source = ?", (source,))
                self._db.executemany(
                    "INSERT INTO cells (source, cell, centroid) VALUES (?, ?, ?)",
                    [(source, i, _blob(c)) for i, c in enumerate(centroids)],
                )
                self._db.executemany(
                    "UPDATE passages SET cell = ? WHERE id = ?",
                    [(int(c), int(i)) for c, i in zip(cells, ids, strict=True)],
                )
                trained_at = count
            elif drop:
                self._db.execute("DELETE FROM cells WHERE source = ?", (source,))
                self._db.execute("UPDATE passages SET cell = 0 WHERE source = ?", (source,))
            self._db.execute(
                "INSERT OR REPLACE INTO trained (source, passages) VALUES (?, ?)",
                (source, trained_at if retrain or (has_cells and not drop) else 0),
            )

    def _all_vectors(self, source: str) -> tuple[list[int], npt.NDArray[np.float32]]:
        rows = self._db.execute(
            "SELECT id, vector FROM passages WHERE source = ?", (source,)
        ).fetchall()
        vectors = np.stack([_vector(blob) for _, blob in rows])
        return [row[0] for row in rows], vectors


@attrs.frozen
class _Pending:
    """A document read and split, waiting for its embeddings."""

    name: str
    previous: tuple[int, str] | None
    digest: str
    size: int
    document: Document
    chunks: list[str]


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *rest: object) -> None:
        self._db.execute("ROLLBACK" if kind is not None else "COMMIT")


def _blob(vector: npt.NDArray[np.float32]) -> bytes:
    return np.asarray(vector, dtype=np.float16).tobytes()


def _vector(blob: bytes) -> npt.NDArray[np.float32]:
    return np.frombuffer(blob, dtype=np.float16).astype(np.float32)


def _kmeans(vectors: npt.NDArray[np.float32], k: int, rounds: int = 8) -> npt.NDArray[np.float32]:
    """Spherical k-means (seeded, so the same corpus gives the same cells)."""
    generator = np.random.default_rng(0)
    sample = vectors
    if len(vectors) > 64 * k:
        sample = vectors[generator.choice(len(vectors), 64 * k, replace=False)]
    centroids = sample[generator.choice(len(sample), k, replace=False)].copy()
    for _ in range(rounds):
        labels = np.argmax(sample @ centroids.T, axis=1)
        for cell in range(k):
            members = sample[labels == cell]
            if len(members):
                mean = members.sum(axis=0)
                norm = np.linalg.norm(mean)
                if norm:
                    centroids[cell] = mean / norm
    return centroids


def _fuse(
    lexical: list[tuple[int, float]], semantic: list[tuple[int, float]]
) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion: each ranking adds 1 / (60 + rank) to a passage's score.

    Equal scores (first in one ranking, first in the other) go to the better semantic rank: the
    embeddings also see paraphrases, which the words alone miss.
    """
    scores: dict[int, float] = {}
    semantic_rank: dict[int, int] = {}
    for rank, (pid, _) in enumerate(lexical, start=1):
        scores[pid] = scores.get(pid, 0.0) + 1.0 / (_RRF_K + rank)
    for rank, (pid, _) in enumerate(semantic, start=1):
        scores[pid] = scores.get(pid, 0.0) + 1.0 / (_RRF_K + rank)
        semantic_rank[pid] = rank
    last = len(semantic) + 1
    return sorted(
        scores.items(), key=lambda item: (-item[1], semantic_rank.get(item[0], last), item[0])
    )


def index_sources(
    settings: SourcesSettings,
    *,
    only: tuple[str, ...] | None = None,
    progress: Callable[[IndexProgress], None] | None = None,
) -> IndexReport:
    """Bring the index of ``settings`` up to date with the configured sources.

    Unchanged files are skipped by hash, changed ones read again, deleted ones removed; sources
    no longer configured are dropped from the index. A source whose folder is missing is
    reported and keeps what it had.

    :param settings: the ``[tools.sources]`` settings.
    :param only: index only these source ids (all configured ones by default).
    :param progress: called before each file with how far indexing got.
    :raises ValueError: when ``only`` names a source that is not configured.
    """
    started = time.perf_counter()
    wanted = tuple(settings.sources) if only is None else only
    unknown = [s for s in wanted if s not in settings.sources]
    if unknown:
        known = ", ".join(sorted(settings.sources)) or "none are configured"
        raise ValueError(
            f"source(s) {', '.join(unknown)} are not configured in [tools.sources.sources]; "
            f"configured: {known}"
        )
    reports = []
    with SourceIndex(settings.index_file) as index:
        dropped = tuple(sorted(set(index.sources()) - set(settings.sources)))
        if only is None:
            for source in dropped:
                index.drop_source(source)
        for source in wanted:
            reports.append(index.index_source(source, settings.sources[source], settings, progress))
    return IndexReport(
        sources=tuple(reports),
        dropped_sources=dropped if only is None else (),
        seconds=time.perf_counter() - started,
    )
