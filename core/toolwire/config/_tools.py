"""``[tools]``, ``[profiles.<name>]`` and ``[surfaces.<name>]``: which tools are offered where."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .._fieldwise import record_eq, record_hash, record_repr
from ._fields import each_entry, setting, trust_level_problem

TOOLS_OWN_KEYS = frozenset(
    {"enable", "deny", "profile", "trust", "max_direct", "max_direct_bytes", "exposure"}
)
"""The keys of ``[tools]`` itself; any other table is a plugin's ``[tools.<plugin>]``."""

_EXPOSURES = ("direct", "deferred", "hidden")


def _exposure_problem(value: Any) -> str | None:
    return None if value in _EXPOSURES else "one of " + ", ".join(_EXPOSURES)


@attrs.frozen(kw_only=True, slots=False)
class ToolsConfig:
    """``[tools]``: which tools are offered, plus each plugin's own ``[tools.<plugin>]`` settings.

    ``enable`` absent means every tool of the enabled plugins. ``trust`` (``[tools.trust]``)
    raises a tool's minimum provider trust by name (``read_web_page = "high"``); it never lowers
    what the tool itself requires.
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    enable: tuple[str, ...] | None = setting(
        None,
        kind="list of tool names",
        default_text="all tools of the enabled plugins",
        help="what models are offered",
    )
    deny: tuple[str, ...] = setting(
        (), kind="list of tool names", help="never offered (deny wins over every allow)"
    )
    profile: str | None = setting(
        None,
        help="a `[profiles.<name>]` table with `allow` and `deny` lists that refines the offer",
    )
    trust: Mapping[str, str] = setting(
        factory=dict,
        check=each_entry(trust_level_problem),
        kind="table of tool name → trust level",
        help="`[tools.trust]`: raises a tool's minimum provider trust (`read_web_page = "
        '"high"`); never lowers what the tool requires',
    )
    plugin_settings: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    """The ``[tools.<plugin>]`` tables by plugin name, checked by each plugin."""
    max_direct: int | None = setting(
        None,
        bounds=(1, None),
        help="the most tools a round offers directly; past it the most relevant are offered and "
        "the rest are found through `tool_search` (see Large catalogues below)",
    )
    max_direct_bytes: int | None = setting(
        None,
        bounds=(1, None),
        help="the most bytes of JSON (name, description, parameters) the directly offered tools "
        "may take; past it, as with `max_direct`",
    )
    exposure: Mapping[str, str] = setting(
        factory=dict,
        check=each_entry(_exposure_problem),
        kind="table of tool name → `direct`, `deferred` or `hidden`",
        default_text="`{}` (all `direct`)",
        help="`[tools.exposure]`: `deferred`: found only through `tool_search`; `hidden`: never "
        "offered to a model (still runs with `toolwire tools call` and "
        "`ToolCallingLoop.call`)",
    )


@attrs.frozen(kw_only=True, slots=False)
class ProfileConfig:
    """``[profiles.<name>]``: an allow list and a deny list of tool names (deny wins; an allow
    list left out or empty allows every tool)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    allow: tuple[str, ...] | None = setting(
        None,
        kind="list of tool names",
        default_text="every tool",
        help="the tools the profile lets through; left out or empty: every tool",
    )
    deny: tuple[str, ...] = setting(
        (), kind="list of tool names", help="never offered under this profile (deny wins)"
    )


@attrs.frozen(kw_only=True, slots=False)
class SurfaceConfig:
    """``[surfaces.<name>]``: the tools one surface (``run``, ``chat``, ``web``, ``batch``,
    ``mcp-serve`` or an application's own) may offer. An allow list left out or empty allows
    every tool; deny always wins. A non-empty allow list also names the tools of a surface that
    offers none until the config names some (a hosted surface)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    allow: tuple[str, ...] = setting(
        (),
        kind="list of tool names",
        default_text="`[]` (every tool)",
        help="the tools this surface may offer, on top of `[tools] enable` and the profile",
    )
    deny: tuple[str, ...] = setting(
        (), kind="list of tool names", help="never offered on this surface"
    )
