"""``toolwire mcp add NAME -- COMMAND …``: a server written into ``toolwire.toml``.

The file is edited with tomlkit, so its comments, order and layout stay as they were: the new
``[tools.mcp.servers.NAME]`` table goes at its end (or into an existing ``[tools.mcp.servers]``
table), and ``"mcp"`` is added to ``[plugins] enable`` when it is missing. A server of that
name already there is refused unless ``--force`` replaces it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._settings import McpSettings, ServerSettings


class AddRefused(Exception):
    """The server cannot be added; the message says why and what to do."""


def add_server(
    path: Path,
    name: str,
    *,
    command: Sequence[str] = (),
    url: str | None = None,
    env: Mapping[str, str] | None = None,
    force: bool = False,
) -> str:
    """Write server ``name`` into the config file at ``path`` (made when missing); returns a
    line saying what was done.

    :raises AddRefused: for a bad name or entry, a file that is not TOML, or a server of that
        name already there (without ``force``).
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    entry: dict[str, Any] = {}
    if url is not None:
        entry["url"] = url
    elif command:
        entry["command"] = command[0]
        if len(command) > 1:
            entry["args"] = list(command[1:])
    if env:
        entry["env"] = dict(env)
    try:  # the same checks as loading the config
        McpSettings(servers={name: ServerSettings(**_structured(entry))})
    except (TypeError, ValueError) as exc:
        raise AddRefused(f"cannot add MCP server {name!r}: {exc}") from None
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        document = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise AddRefused(f"{path} is not valid TOML ({exc}); fix it first") from None
    tools = document.setdefault("tools", tomlkit.table(is_super_table=True))
    mcp = tools.setdefault("mcp", tomlkit.table(is_super_table=True))
    servers = mcp.setdefault("servers", tomlkit.table(is_super_table=True))
    if name in servers and not force:
        raise AddRefused(
            f"{path} already has an MCP server {name!r}; use --force to replace it, or another name"
        )
    table = tomlkit.table()
    for key, value in entry.items():
        table[key] = tomlkit.inline_table() if isinstance(value, dict) else value
        if isinstance(value, dict):
            table[key].update(value)
    servers[name] = table
    plugins = document.setdefault("plugins", tomlkit.table())
    enable = plugins.setdefault("enable", tomlkit.array())
    enabled = ""
    if "mcp" not in [str(v) for v in enable]:
        enable.append("mcp")
        enabled = ' and enabled the plugin "mcp"'
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(tomlkit.dumps(document), encoding="utf-8")
    os.replace(temporary, path)
    shown = url if url is not None else " ".join(command)
    return f"added MCP server {name!r} ({shown}) to {path}{enabled}"


def _structured(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in entry.items()}
