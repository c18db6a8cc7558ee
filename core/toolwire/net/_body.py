"""What a response may contain (text, not binary) and reading its body within a size cap."""

from __future__ import annotations

import zlib

TEXT_MEDIA_TYPES = frozenset(
    {
        "application/csv",
        "application/ecmascript",
        "application/javascript",
        "application/json",
        "application/markdown",
        "application/toml",
        "application/x-javascript",
        "application/x-ndjson",
        "application/x-yaml",
        "application/xml",
        "application/yaml",
    }
)
_TEXT_SUFFIXES = ("+json", "+xml", "+yaml")
_ALLOWED_SUMMARY = "text/*, JSON, XML, YAML, CSV and Markdown"


def media_type_refusal(media_type: str | None) -> str | None:
    """Say why a response of ``media_type`` is not read, or return None when it is text.

    An allowlist: ``text/*``, JSON, XML, YAML, CSV, Markdown, JavaScript and the ``application``
    types with a ``+json``, ``+xml`` or ``+yaml`` suffix. Everything else (PDF, images including
    SVG, audio, video, archives, fonts, ``application/octet-stream``) is refused, and so is a
    response without a Content-Type (RFC 9110 lets a recipient treat it as octet-stream).
    """
    if not media_type:
        return f"the response has no Content-Type; only {_ALLOWED_SUMMARY} responses are read"
    if media_type.startswith("text/") or media_type in TEXT_MEDIA_TYPES:
        return None
    if media_type.startswith("application/") and media_type.endswith(_TEXT_SUFFIXES):
        return None
    return (
        f"content type {media_type} is binary or not text; only {_ALLOWED_SUMMARY} "
        "responses are read"
    )


class UnsupportedEncoding(ValueError):
    """A Content-Encoding the reader does not decode."""


def _is_zlib_header(first: int, second: int) -> bool:
    # RFC 1950: compression method 8 in the low nibble, and the two bytes a multiple of 31.
    return first & 0x0F == 8 and ((first << 8) | second) % 31 == 0


class BodyReader:
    """Collects a body, decoding gzip or deflate, and stops at ``limit`` decoded bytes.

    Decoding is bounded per call (``max_length``), so a small compressed body that expands to
    gigabytes (a decompression bomb) never produces more than ``limit + 1`` bytes in memory.
    Corrupt compressed data raises ``zlib.error``.
    """

    def __init__(self, content_encoding: str, limit: int) -> None:
        encoding = content_encoding.strip().lower()
        self._limit = limit
        self._size = 0
        self._chunks: list[bytes] = []
        self._pending = b""
        self.truncated = False
        self._decoder: zlib._Decompress | None = None
        self._deflate = encoding == "deflate"
        if encoding in ("gzip", "x-gzip"):
            self._decoder = zlib.decompressobj(wbits=zlib.MAX_WBITS | 32)
        elif encoding not in ("", "identity", "deflate"):
            raise UnsupportedEncoding(
                f"Content-Encoding {content_encoding!r} is not supported (gzip and deflate are)"
            )

    def feed(self, data: bytes) -> bool:
        """Add a chunk as received; return True once the limit is reached (stop reading)."""
        if self._deflate and self._decoder is None:
            # RFC 9110 says deflate is zlib-wrapped; some servers send it raw. The first two
            # bytes tell which.
            data = self._pending + data
            if len(data) < 2:
                self._pending = data
                return False
            self._pending = b""
            wrapped = _is_zlib_header(data[0], data[1])
            self._decoder = zlib.decompressobj(wbits=zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        if self._decoder is not None:
            data = self._decoder.decompress(data, self._limit - self._size + 1)
        return self._keep(data)

    def _keep(self, data: bytes) -> bool:
        room = self._limit - self._size
        if len(data) > room:
            data = data[:room]
            self.truncated = True
        if data:
            self._chunks.append(data)
            self._size += len(data)
        return self.truncated

    def finish(self) -> bytes:
        """The body read so far (decoded), at most ``limit`` bytes."""
        if not self.truncated:
            if self._pending:
                self._keep(zlib.decompress(self._pending, wbits=-zlib.MAX_WBITS))
            elif self._decoder is not None:
                self._keep(self._decoder.flush())
        return b"".join(self._chunks)
