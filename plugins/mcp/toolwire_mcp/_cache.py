"""The tool lists of MCP servers, kept on disk so listing tools starts no server.

One JSON file per server, named by a hash of what identifies the server: its transport, its
command line as run (program, arguments, environment, working directory) or URL, and the size
and time of the program's file (a reinstalled or upgraded server is a new file). The file holds
the server's listing as sent (after the plugin's checks) and the name and version the server
gave at its handshake. When the server starts for a call and reports another version or another
listing, or announces ``notifications/tools/list_changed``, the file is written again;
``toolwire mcp servers --refresh`` starts every server and rewrites every file.

The folder is ``$TOOLWIRE_CACHE_DIR/mcp-tools`` (set empty, it turns the cache off), else
``$XDG_CACHE_HOME/toolwire/mcp-tools`` or ``~/.cache/toolwire/mcp-tools``. A file that cannot
be read or written is ignored: the server is then started to list its tools.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

_FORMAT = 1
CACHE_DIR_ENV = "TOOLWIRE_CACHE_DIR"


def cache_dir() -> str | None:
    """The folder of the tool-list files, or None when the cache is turned off."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured is not None:
        return os.path.join(configured, "mcp-tools") if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "toolwire", "mcp-tools")


@attrs.frozen
class Listing:
    """A server's cached listing: its tools as sent, the version it gave, the tools left out."""

    tools: tuple[dict[str, Any], ...]
    server: str | None = None
    version: str | None = None
    problems: tuple[str, ...] = ()
    """The tools of the listing that were left out, each with its reason."""


def identity(
    *,
    url: str | None,
    command_line: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
) -> list[Any]:
    """What names one server's listing: its URL, or its command line, the environment its
    entry sets, its working directory, and the path, size and time of its program's file (as
    found on ``PATH``)."""
    if url is not None:
        return ["http", url]
    program = command_line[0] if command_line else ""
    found = shutil.which(program, path=env.get("PATH", os.environ.get("PATH"))) if program else None
    stamp: list[Any] = [found]
    if found is not None:
        with contextlib.suppress(OSError):
            info = os.stat(found)
            stamp += [info.st_size, info.st_mtime_ns]
    key = ["stdio", list(command_line), sorted(env.items()), cwd, stamp]
    return list(json.loads(json.dumps(key)))  # as it reads back from the file


def _path(key: list[Any]) -> str | None:
    folder = cache_dir()
    if folder is None:
        return None
    digest = hashlib.sha256(json.dumps(key, ensure_ascii=False).encode("utf-8", "replace"))
    return os.path.join(folder, f"{digest.hexdigest()[:32]}.json")


def load(key: list[Any]) -> Listing | None:
    """The cached listing of the server ``key`` names, or None."""
    path = _path(key)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("format") != _FORMAT or data.get("key") != key:
        return None
    tools = data.get("tools")
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        return None
    server, version = data.get("server"), data.get("version")
    problems = data.get("problems")
    return Listing(
        tools=tuple(tools),
        server=server if isinstance(server, str) else None,
        version=version if isinstance(version, str) else None,
        problems=tuple(p for p in problems if isinstance(p, str))
        if isinstance(problems, list)
        else (),
    )


def store(key: list[Any], listing: Listing) -> None:
    """Keep ``listing`` for the server ``key`` names (quietly nothing when it cannot)."""
    path = _path(key)
    if path is None:
        return
    data = {
        "format": _FORMAT,
        "key": key,
        "server": listing.server,
        "version": listing.version,
        "tools": list(listing.tools),
        "problems": list(listing.problems),
    }
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump(data, file, ensure_ascii=False)
        os.replace(temporary, path)  # readers see the old file or the whole new one
    except (OSError, ValueError, RecursionError):
        with contextlib.suppress(OSError):
            os.unlink(temporary)
