"""Where the config comes from: the system, user and project files, merged key by key, the
system files' ``[locked] keys``, the file each key came from, and ``$TOOLWIRE_PLUGINS``."""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ._errors import LAYERED, ConfigError, attributed
from ._root import SECTIONS, TABLES_OF_TABLES, Config
from ._structure import config_from_dict
from ._toml import read_toml

CONFIG_FILE_NAME = "toolwire.toml"
CONFIG_ENV = "TOOLWIRE_CONFIG"
PLUGINS_ENV = "TOOLWIRE_PLUGINS"
SYSTEM_CONFIG_ENV = "TOOLWIRE_SYSTEM_CONFIG"
"""Names an administrator's file read after ``/etc/toolwire/toolwire.toml``, never instead of
it (empty: none)."""
SYSTEM_CONFIG_FILE = Path("/etc/toolwire") / CONFIG_FILE_NAME


def system_config_files() -> list[Path]:
    """The administrator's files, first to last: ``/etc/toolwire/toolwire.toml`` when it
    exists, whatever the environment says, then the file ``$TOOLWIRE_SYSTEM_CONFIG`` names
    (unset or empty: none; a named file that is missing is an error). Both may lock keys; the
    second may not set a key the first locks, so the machine's locks hold for every process."""
    files = [SYSTEM_CONFIG_FILE] if SYSTEM_CONFIG_FILE.is_file() else []
    env = os.environ.get(SYSTEM_CONFIG_ENV)
    if env:
        path = Path(env)
        if not path.is_file():
            raise ConfigError(
                f"system config file {env!r} (from ${SYSTEM_CONFIG_ENV}) does not exist"
            )
        if not files or path.resolve() != files[0].resolve():
            files.append(path)
    return files


def user_config_file() -> Path | None:
    """The user's file, ``$XDG_CONFIG_HOME/toolwire/toolwire.toml`` (``~/.config/…`` when the
    variable is unset or empty), when it exists."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    path = Path(base) / "toolwire" / CONFIG_FILE_NAME
    return path if path.is_file() else None


def find_config_file(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """The config file to use: ``explicit``, else ``$TOOLWIRE_CONFIG``, else ``./toolwire.toml``.

    An explicit path or the environment variable naming a missing file is an error; a missing
    ``./toolwire.toml`` means defaults.
    """
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"config file {str(path)!r} (given with --config) does not exist")
        return path
    env = os.environ.get(CONFIG_ENV)
    if env:
        path = Path(env)
        if not path.is_file():
            raise ConfigError(f"config file {env!r} (from ${CONFIG_ENV}) does not exist")
        return path
    path = Path.cwd() / CONFIG_FILE_NAME
    return path if path.is_file() else None


def load_config(path: str | os.PathLike[str] | None = None, *, search: bool = True) -> Config:
    """Read, merge and structure the config files, or defaults when there are none.

    The layers, first to last: the system files (:func:`system_config_files`), the user file
    (:func:`user_config_file`) and the project file (:func:`find_config_file`). A later layer
    wins key by key; tables merge, and any other value (a list too) replaces the earlier one.
    ``[locked] keys`` of a system file names keys no later layer may set. With
    ``search=False`` and no ``path``, no file is read at all.

    ``$TOOLWIRE_PLUGINS`` (comma-separated names) overrides ``[plugins] enable``, unless the
    system file locks that key.
    """
    project = find_config_file(path) if (path is not None or search) else None
    files: list[Path] = []
    systems = 0
    if path is not None or search:
        files = system_config_files()
        systems = len(files)
        user = user_config_file()
        if user is not None and user not in files:
            files.append(user)
    if project is not None and all(project.resolve() != f.resolve() for f in files):
        files.append(project)
    layers = [(str(file), read_toml(file)) for file in files]
    config = _layered_config(layers, systems=systems)
    env = os.environ.get(PLUGINS_ENV)
    if env is not None:
        for key in ("$.plugins.enable", "$.plugins"):
            if key in config.locked:
                raise ConfigError(
                    f"${PLUGINS_ENV} = {env!r}: {key} is locked by {config.locked[key]} "
                    "([locked] keys); unset the variable",
                    file=config.locked[key],
                    path=key,
                )
        names = tuple(n.strip() for n in env.split(",") if n.strip())
        config = config.with_enabled(names, origin=f"${PLUGINS_ENV}")
    return config


def _locked_keys(raw: dict[str, Any], file: str, *, system: bool) -> dict[str, str]:
    """The ``[locked] keys`` of one layer (taken out of ``raw``), as ``$.a.b`` paths."""
    if "locked" not in raw:
        return {}
    table = raw.pop("locked")
    if not system:
        raise ConfigError(
            f"{file}: $.locked: only the system files ({SYSTEM_CONFIG_FILE} and "
            f"${SYSTEM_CONFIG_ENV}) may lock keys; remove [locked] from this file",
            file=file,
            path="$.locked",
        )
    if not isinstance(table, dict) or set(table) - {"keys"}:
        raise ConfigError(
            f"{file}: $.locked = {table!r}: expected a table [locked] with one key, keys "
            '(a list of key paths such as "policy.deny")',
            file=file,
            path="$.locked",
        )
    keys = table.get("keys", [])
    if not isinstance(keys, list):
        raise ConfigError(
            f'{file}: $.locked.keys = {keys!r}: expected a list of key paths such as "policy.deny"',
            file=file,
            path="$.locked.keys",
        )
    valid = {*SECTIONS, *TABLES_OF_TABLES}
    for i, key in enumerate(keys):
        if (
            not isinstance(key, str)
            or not re.fullmatch(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*", key)
            or key.split(".")[0] not in valid
        ):
            raise ConfigError(
                f"{file}: $.locked.keys[{i}] = {key!r}: expected a key path such as "
                f'"policy.deny" whose first part is one of {", ".join(sorted(valid))}',
                file=file,
                path=f"$.locked.keys[{i}]",
            )
    return {f"$.{key}": file for key in keys}


def _leaf_paths(raw: Mapping[str, Any], base: str = "$") -> list[str]:
    """The key path of every value of a parsed table that is not itself a table."""
    out: list[str] = []
    for key, value in raw.items():
        path = f"{base}.{key}"
        if isinstance(value, dict) and value:
            out.extend(_leaf_paths(value, path))
        else:
            out.append(path)
    return out


def _merge_into(
    merged: dict[str, Any], raw: Mapping[str, Any], origins: dict[str, str], file: str, base: str
) -> None:
    """``raw`` over ``merged``: tables merge key by key, anything else replaces."""
    for key, value in raw.items():
        path = f"{base}.{key}"
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            _merge_into(merged[key], value, origins, file, path)
            continue
        for known in [k for k in origins if k == path or k.startswith(path + ".")]:
            del origins[known]
        merged[key] = copy.deepcopy(value)
        if isinstance(value, dict) and value:
            origins.update(dict.fromkeys(_leaf_paths(value, path), file))
        else:
            origins[path] = file


def _layered_config(layers: list[tuple[str, dict[str, Any]]], *, systems: int) -> Config:
    """The config of the parsed ``(file, table)`` layers, first to last (the first
    ``systems`` are the administrator's, which may lock keys)."""
    if not layers:
        return Config()
    locked: dict[str, str] = {}
    merged: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for index, (file, raw) in enumerate(layers):
        locked_here = _locked_keys(raw, file, system=index < systems)
        for path in _leaf_paths(raw):
            for key, by in locked.items():
                if path == key or path.startswith(key + ".") or key.startswith(path + "."):
                    raise ConfigError(
                        f"{file}: {path}: the key {key[2:]} is locked by {by} ([locked] keys) "
                        f"and may not be set here; remove it from {file}",
                        file=file,
                        path=path,
                    )
        locked.update(locked_here)
        _merge_into(merged, raw, origins, file, "$")
    project = layers[-1][0]
    if len(layers) == 1:
        config = config_from_dict(merged, file=project)
        return attrs.evolve(config, layers=(project,), origins=origins, locked=locked)
    try:
        config = config_from_dict(merged, file=LAYERED)
    except ConfigError as exc:
        raise attributed(exc, Config(origins=origins, source=None).origin_of) from None
    return attrs.evolve(
        config,
        source=project,
        layers=tuple(file for file, _ in layers),
        origins=origins,
        locked=locked,
    )
