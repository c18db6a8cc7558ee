"""The config reference, rendered from the keys' declarations: one Markdown table per section
(``toolwire config reference``), and the same tables kept in a document between markers.

A table in a document sits between ``<!-- config-reference: [loop] -->`` and
``<!-- end config-reference -->``; :func:`update_document` rewrites what lies between them.
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from ._fields import Setting, declared, number
from ._loop import LoopConfig
from ._policy import PolicyConfig
from ._provider import ProviderConfig
from ._run import LimitsConfig, RunConfig
from ._sections import (
    ArtifactsConfig,
    BatchConfig,
    I18nConfig,
    LedgerConfig,
    PluginsConfig,
    ToolTexts,
    TraceConfig,
    TrustConfig,
)
from ._tools import ProfileConfig, SurfaceConfig, ToolsConfig

TABLES: dict[str, type] = {
    "[plugins]": PluginsConfig,
    "[provider]": ProviderConfig,
    "[loop]": LoopConfig,
    "[tools]": ToolsConfig,
    "[profiles.<name>]": ProfileConfig,
    "[surfaces.<name>]": SurfaceConfig,
    "[policy]": PolicyConfig,
    "[trust]": TrustConfig,
    "[artifacts]": ArtifactsConfig,
    "[ledger]": LedgerConfig,
    "[trace]": TraceConfig,
    "[batch]": BatchConfig,
    "[limits]": LimitsConfig,
    "[run]": RunConfig,
    "[i18n]": I18nConfig,
    "[i18n.<locale>.<tool>]": ToolTexts,
}
"""Every table of toolwire's own keys, by the header a file writes, in the reference's order."""

_START = "<!-- config-reference: {} -->"
_END = "<!-- end config-reference -->"


def key_table(cls: type) -> str:
    """The Markdown table of a section's declared keys: key, type, default, meaning."""
    hints = typing.get_type_hints(cls)
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for field in attrs.fields(cls):
        spec = declared(field)
        if spec is None:
            continue
        cells = (
            f"`{field.name}`",
            _kind(spec, hints[field.name]),
            spec.default_text or default_text(field.default),
            spec.help,
        )
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def reference() -> str:
    """The whole reference: a heading and a table per section."""
    parts = [f"### `{header}`\n\n{key_table(cls)}" for header, cls in TABLES.items()]
    return "\n".join(parts)


def update_document(text: str) -> str:
    """``text`` with the table between each pair of markers rendered afresh.

    :raises ValueError: for a marker naming no section, or one left open.
    """
    pattern = re.escape(_START).replace(r"\{\}", "(.+?)") + r"\n(.*?)" + re.escape(_END)

    def fresh(match: re.Match[str]) -> str:
        header = match.group(1)
        if header not in TABLES:
            raise ValueError(f"config-reference marker for {header}: no such section")
        return f"{_START.format(header)}\n{key_table(TABLES[header])}{_END}"

    updated = re.sub(pattern, fresh, text, flags=re.DOTALL)
    if updated.count(_END) != updated.count(_START.split("{}")[0]):
        raise ValueError("a config-reference marker is left open")
    return updated


def documented(text: str) -> list[str]:
    """The sections whose tables ``text`` holds between markers, in order."""
    return re.findall(re.escape(_START).replace(r"\{\}", "(.+?)"), text)


def default_text(default: Any) -> str:
    """A field's default as the reference writes it."""
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        default = default.factory()
    if default is None:
        return "none"
    if isinstance(default, tuple):
        default = list(default)
    if isinstance(default, str):
        return f"`{default}`"
    if isinstance(default, float):
        return f"`{number(default)}`"
    return f"`{json.dumps(default, ensure_ascii=False)}`"


def _kind(spec: Setting, annotation: Any) -> str:
    kind = spec.kind or spec.unit or _type_words(annotation)
    if spec.bounds is None:
        return kind
    low, high = spec.bounds
    if high is None:
        return f"{kind} ≥ {number(low)}"
    return f"{kind}, {number(low)} to {number(high)}"


def _type_words(tp: Any) -> str:
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    origin = typing.get_origin(tp)
    if origin is Literal:
        return ", ".join(f"`{a}`" for a in typing.get_args(tp))
    if tp is bool:
        return "bool"
    if tp is int:
        return "integer"
    if tp is float:
        return "number"
    if tp is str:
        return "string"
    if origin is tuple:
        return "list of strings" if args[0] is str else "list"
    if origin in (dict, Mapping):
        return "table"
    if len(args) == 1:  # X | None
        return _type_words(args[0])
    return getattr(tp, "__name__", str(tp))
