"""``toolwire config show``: every setting of a config, its value and where it came from, with
no secret printed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cattrs

from ._root import Config
from ._secrets import secret_name, without_credentials

_BOOKKEEPING = ("source", "enabled_from", "layers", "origins", "locked", "surface")
"""The fields of :class:`Config` that are not settings."""


def effective_settings(config: Config, *, redact: bool = True) -> list[tuple[str, Any, str]]:
    """Every setting of ``config`` as ``(key path, value, where it came from)``, sorted by key.

    Where is a file, ``$TOOLWIRE_PLUGINS`` or ``default``. Lists are one value each; plugin
    tables (``[tools.<plugin>]``, ``[providers.<name>]``) show the keys they set. With
    ``redact`` (the default) each value is as :func:`shown_setting` shows it: no secrets.
    """
    data = cattrs.Converter().unstructure(config)
    for internal in _BOOKKEEPING:
        data.pop(internal)
    base = data["provider"]
    for name, named in data.pop("named_providers").items():
        # a named block shows what it changes of [provider]
        base[name] = {key: value for key, value in named.items() if value != base.get(key)}
    tools = data["tools"]
    tools.update(tools.pop("plugin_settings"))
    i18n = data["i18n"]
    i18n.update(i18n.pop("texts"))
    out: list[tuple[str, Any, str]] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict) and value:
            for key in sorted(value):
                walk(value[key], f"{path}.{key}")
            return
        if path == "$.plugins.enable" and config.enabled_from:
            where: str | None = config.enabled_from
        elif config.origins:
            where = config.origin_of(path) if _set_in(config.origins, path) else None
        else:  # structured from a table, not loaded from files: no record per key
            where = config.source
        key = path[2:]
        out.append((key, shown_setting(key, value) if redact else value, where or "default"))

    walk(data, "$")
    return out


def _set_in(origins: Mapping[str, str], path: str) -> bool:
    return any(path == k or path.startswith(k + ".") for k in origins)


def shown_setting(key: str, value: Any) -> Any:
    """``value`` of the setting ``key`` (a dotted path) as ``toolwire config show`` prints it:
    a value under a ``headers`` table (export headers carry credentials), a string setting whose
    name says it is secret (``token``, ``password``, ``api_key``; not a ``*_env`` setting, which
    names a variable) as ``[redacted]``, and credentials in URLs as ``***``."""
    from .._redact import REDACTED

    parts = key.split(".")
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        if "headers" in parts[:-1]:
            return REDACTED
        last = parts[-1]
        if isinstance(value, str) and secret_name(last) and not last.endswith("_env"):
            return REDACTED
    if isinstance(value, str):
        return without_credentials(value) if "://" in value or "@" in value else value
    if isinstance(value, list):
        return [shown_setting(key, item) for item in value]
    if isinstance(value, dict):
        return {k: shown_setting(f"{key}.{k}", v) for k, v in value.items()}
    return value
