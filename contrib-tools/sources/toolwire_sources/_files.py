"""The files of a folder source: listed once, each read later only if it is still inside the folder.

Indexing a folder takes a while (the embeddings of earlier files are computed between one read
and the next), so what the listing saw may have changed by the time a file is read: a file or a
folder on its way may have been swapped for a link leading out. Each file is therefore opened
from a descriptor of the folder itself, one path component at a time, none of them followed if
it is a link (``O_NOFOLLOW``), and read only if what was opened is a regular file. A link inside
the folder that the listing accepted is opened by its target's path, the same way.

On a system without ``dir_fd`` opens the file is opened by its path and read only if its real
path is still inside the folder (which narrows the window instead of closing it).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import attrs

from ._documents import DocumentSkipped

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READ = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
# A FIFO swapped in would block an open without O_NONBLOCK; a regular file ignores the flag.
_FILE = _READ | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW
_FOLDER = _READ | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
_BY_DESCRIPTOR = (
    os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY")
)


@attrs.frozen
class Listed:
    """One file of a source as listed: its path, and for a folder's file the folder (resolved)
    and the path components to open from it (those of the link's target, for a link inside the
    folder). A file source has no folder: its configured path is followed."""

    path: Path
    folder: Path | None = None
    parts: tuple[str, ...] = ()


def list_files(root: Path, patterns: tuple[str, ...]) -> Iterator[Listed]:
    """The files under ``root`` matching one of ``patterns``, hidden ones and links leading out
    of the folder left out."""
    resolved_root = root.resolve()
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if not any(path.match(pattern) for pattern in patterns):
            continue
        try:
            if not path.is_file():
                continue
            target = path.resolve()
            # A symbolic link that leads out of the folder is not part of the source.
            if not target.is_relative_to(resolved_root):
                continue
        except OSError:
            continue
        yield Listed(path, resolved_root, target.relative_to(resolved_root).parts)


def read_listed(listed: Listed, max_bytes: int) -> bytes:
    """The bytes of ``listed``, read only if it is still a regular file inside its folder.

    :raises DocumentSkipped: when it (or a folder on its way) is now a link or another kind of
        file, or it is larger than ``max_bytes``.
    :raises OSError: when it cannot be opened or read (gone, no permission).
    """
    if listed.folder is None:
        return read_regular(os.open(listed.path, _FILE & ~_NOFOLLOW), max_bytes)
    try:
        fd = _open_inside(listed.folder, listed.parts)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise DocumentSkipped(
                "it, or a folder on its way, was replaced (by a link, or by another kind of "
                "file) after the folder was listed"
            ) from None
        raise
    return read_regular(fd, max_bytes)


def _open_inside(folder: Path, parts: tuple[str, ...]) -> int:
    """Open ``folder/parts…`` following no link on the way, or fail with ``ELOOP``."""
    if not _BY_DESCRIPTOR:
        path = folder.joinpath(*parts)
        fd = os.open(path, _FILE)
        if not Path(os.path.realpath(path)).is_relative_to(folder):
            os.close(fd)
            raise OSError(errno.ELOOP, "it leads out of the folder", str(path))
        return fd
    at = os.open(folder, _FOLDER)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _FOLDER, dir_fd=at)
            os.close(at)
            at = inner
        return os.open(parts[-1], _FILE, dir_fd=at)
    finally:
        os.close(at)


def read_regular(fd: int, max_bytes: int) -> bytes:
    """Read the open file ``fd`` whole and close it, refusing what is not a regular file or is
    larger than ``max_bytes`` (also when it grows while being read)."""
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise DocumentSkipped("not a regular file (it changed after the folder was listed)")
        if info.st_size > max_bytes:
            raise DocumentSkipped(f"{info.st_size} bytes is over max_file_bytes ({max_bytes})")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise DocumentSkipped(f"it grew past max_file_bytes ({max_bytes}) while it was read")
    return data
