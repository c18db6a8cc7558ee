"""The entry points of one group, read from the installed metadata once and kept while nothing
installed changed.

Reading them costs the ``importlib.metadata`` import (with ``email``, ``zipfile`` and ``csv``)
and a parse of every distribution's metadata, about a tenth of a CLI start. The answer depends
only on what is installed where the interpreter looks, so it is kept in a small JSON file under
the user's cache directory, stamped with the distributions' metadata folders in each
``sys.path`` folder and the size and time of each one's ``entry_points.txt`` (an entry that is no
folder, a zip file, by its own time). Installing, upgrading or removing a distribution (or
editing its entry points) changes the stamp, and the metadata is read again; other files coming
and going in a folder (a script's own folder, a busy current directory) do not. A time younger
than two seconds is not trusted (a file system with coarse times could hide a change made within
the same tick), and a cache file that cannot be read or written is ignored. The file's name is an
FNV-1a hash of the interpreter, the group and the search path: a few lines of Python, where
``zlib`` or ``hashlib`` would add the load of an extension module to every start.

``TOOLWIRE_CACHE_DIR`` sets the directory; set to an empty value it turns the cache off.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import Any, Final, NamedTuple

CACHE_DIR_ENV: Final = "TOOLWIRE_CACHE_DIR"
_FORMAT: Final = 2
_RACY_SECONDS: Final = 2.0
_METADATA_SUFFIXES: Final = (".dist-info", ".egg-info")


class PluginEntryPoint(NamedTuple):
    """One entry point of the group: its name, its ``module:attribute`` value, and the
    distribution that declares it."""

    name: str
    value: str
    distribution: str | None = None
    version: str | None = None

    def load(self) -> object:
        """Import the module and return the object the value names (the module itself when the
        value has no ``:attribute``), as ``importlib.metadata.EntryPoint.load`` does."""
        import importlib

        target = self.value.split("[", 1)[0]
        module_name, _, attribute = target.partition(":")
        obj: object = importlib.import_module(module_name.strip())
        for part in attribute.strip().split("."):
            if part:
                obj = getattr(obj, part)
        return obj


def entry_points_of(group: str) -> list[PluginEntryPoint]:
    """The entry points of ``group`` in the installed distributions, in metadata order."""
    stamp = _stamp()
    path = _cache_file(group)
    if path is not None:
        cached = _read(path, group, stamp)
        if cached is not None:
            return cached
    found = _from_metadata(group)
    if path is not None and not _racy(stamp):
        _write(path, group, stamp, found)
    return found


def _from_metadata(group: str) -> list[PluginEntryPoint]:
    from importlib.metadata import entry_points

    out: list[PluginEntryPoint] = []
    for ep in entry_points(group=group):
        dist = ep.dist
        out.append(
            PluginEntryPoint(
                name=ep.name,
                value=ep.value,
                distribution=dist.name if dist is not None else None,
                version=dist.version if dist is not None else None,
            )
        )
    return out


def _stamp() -> list[Any]:
    """What the installed metadata on ``sys.path`` looks like now, cheaply: each folder with
    its distributions' metadata folders and their ``entry_points.txt`` size and time; each entry
    that cannot be listed (a zip file) with its own time."""
    stamp: list[Any] = [sys.executable]
    for entry in sys.path:
        folder = entry or "."
        try:
            names = sorted(os.listdir(folder))
        except OSError:  # a zip file, a missing or unreadable entry: its own time stands for it
            try:
                stamp.append([entry, os.stat(folder).st_mtime_ns])
            except OSError:
                stamp.append([entry, None])
            continue
        dists: list[Any] = []
        for name in names:
            if name.endswith(_METADATA_SUFFIXES):
                try:
                    info = os.stat(os.path.join(folder, name, "entry_points.txt"))
                except OSError:
                    dists.append([name])
                    continue
                dists.append([name, info.st_size, info.st_mtime_ns])
        stamp.append([entry, dists])
    return stamp


def _racy(stamp: list[Any]) -> bool:
    """True when a time in ``stamp`` is too recent to prove that nothing changes within it."""
    newest = time.time_ns() - int(_RACY_SECONDS * 1e9)
    for _, found in stamp[1:]:
        if isinstance(found, int) and found > newest:
            return True
        for dist in found if isinstance(found, list) else ():
            if len(dist) == 3 and dist[2] > newest:
                return True
    return False


def _fnv1a(data: bytes) -> int:
    """The 64-bit FNV-1a hash of ``data``."""
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def _cache_file(group: str) -> str | None:
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured is not None:
        if not configured:
            return None
        folder = configured
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "toolwire")
    # One file per interpreter and search path; the file holds the full stamp it was made for.
    key = "\0".join([sys.executable, group, *sys.path]).encode("utf-8", "surrogatepass")
    return os.path.join(folder, f"entry-points-{_fnv1a(key):016x}.json")


def _read(path: str, group: str, stamp: list[Any]) -> list[PluginEntryPoint] | None:
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except (OSError, ValueError):
        return None
    if (
        not isinstance(data, dict)
        or data.get("format") != _FORMAT
        or data.get("group") != group
        or data.get("stamp") != stamp
        or not isinstance(data.get("entry_points"), list)
    ):
        return None
    out: list[PluginEntryPoint] = []
    for item in data["entry_points"]:
        if not isinstance(item, dict):
            return None
        name, value = item.get("name"), item.get("value")
        distribution, version = item.get("distribution"), item.get("version")
        if not isinstance(name, str) or not isinstance(value, str):
            return None
        if not isinstance(distribution, str | None) or not isinstance(version, str | None):
            return None
        out.append(
            PluginEntryPoint(name=name, value=value, distribution=distribution, version=version)
        )
    return out


def _write(path: str, group: str, stamp: list[Any], found: list[PluginEntryPoint]) -> None:
    data = {
        "format": _FORMAT,
        "group": group,
        "stamp": stamp,
        "entry_points": [ep._asdict() for ep in found],
    }
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump(data, file)
        os.replace(temporary, path)  # readers see the old file or the whole new one
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
