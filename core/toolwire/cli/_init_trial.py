"""Which installed plugins cannot start on their own defaults, for ``toolwire init``."""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import Iterable, Mapping


def plugins_needing_settings(names: Iterable[str]) -> dict[str, str]:
    """The plugins of ``names`` that fail when enabled alone with no settings, each with the
    failure the host reports (what they need, as the plugin words it).

    Each plugin is loaded into a host of its own with a config that enables it and sets nothing
    else, and its tools are collected: a settings class with a required field, a plugin that
    cannot be imported and one whose tools cannot be made without settings (a toolbox whose
    constructor needs an argument) all show here as they would on the first real command.
    """
    from ..config import Config, ConfigError
    from ..host._host import Host

    failing: dict[str, str] = {}
    for name in names:
        try:
            host = Host.load(Config().with_enabled((name,), origin="toolwire init"))
        except ConfigError as exc:
            failing[name] = str(exc)
            continue
        try:
            host.tools  # noqa: B018 - collecting the tools reports what registering them needs
            info = host.plugin_info(name)
            if info is not None and info.error:
                failing[name] = info.error
        finally:
            asyncio.run(host.aclose())
    return failing


def left_out_comment(needing: Mapping[str, str]) -> list[str]:
    """Config comment lines naming each plugin of ``needing`` and what it needs."""
    if not needing:
        return []
    lines = ["# Installed, left out until configured (then add them to enable):"]
    for name, need in needing.items():
        lines += textwrap.wrap(
            f"{json.dumps(name)}: {' '.join(need.split())}",
            96,
            initial_indent="# ",
            subsequent_indent="#   ",
            break_long_words=False,
            break_on_hyphens=False,
        )
    return lines
