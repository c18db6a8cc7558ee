"""A parsed config table structured into :class:`Config`: each section on its own, the tables
of named tables (profiles, surfaces, plugin settings, locales), then every value checked."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from typing import Any

import attrs

from .._surface import is_surface_name
from .._trust import levels_in_use, scheme_problem
from ..usage import ModelPrice
from ._convert import structure_section
from ._errors import ConfigError, refused, where
from ._fields import check_section
from ._provider import PROVIDER_TABLES, ProviderConfig, check_provider
from ._root import SECTIONS, TABLES_OF_TABLES, Config
from ._sections import I18nConfig, ToolTexts
from ._toml import check_raw
from ._tools import TOOLS_OWN_KEYS, ProfileConfig, SurfaceConfig, ToolsConfig


def config_from_dict(raw: Mapping[str, Any], *, file: str | None = None) -> Config:
    """Structure an already-parsed config table (as ``tomllib`` returns it)."""
    check_raw(raw, file)
    data = dict(raw)
    tools_own, plugin_tables = _split_tools(data.pop("tools", {}), file)
    providers_raw = data.pop("providers", {})
    if not isinstance(providers_raw, dict) or any(
        not isinstance(v, dict) for v in providers_raw.values()
    ):
        raise ConfigError(
            f"{where(file, '$.providers')}: expected [providers.<plugin>] tables",
            file=file,
            path="$.providers",
        )
    profiles_raw = data.pop("profiles", {})
    if not isinstance(profiles_raw, dict):
        raise refused(file, "$.profiles", profiles_raw, "[profiles.<name>] tables")
    profiles = {
        name: structure_section(table, ProfileConfig, file=file, path=f"$.profiles.{name}")
        for name, table in profiles_raw.items()
    }
    surfaces = _structure_surfaces(data.pop("surfaces", {}), file)
    prices = _structure_prices(data.pop("prices", {}), file)
    i18n = _structure_i18n(data.pop("i18n", {}), file)
    provider_raw, named_raw = _named_providers(data.get("provider"))
    if provider_raw is not None:
        data["provider"] = provider_raw
    config = _structure_sections(data, file)
    problem = scheme_problem(config.trust.levels)
    if problem is not None:
        raise refused(file, "$.trust.levels", list(config.trust.levels), problem)
    with levels_in_use(config.trust.levels):  # the scheme this config's levels are read in
        named_providers = {
            name: structure_section(
                {**(provider_raw or {}), **table},
                ProviderConfig,
                file=file,
                path=f"$.provider.{name}",
            )
            for name, table in named_raw.items()
        }
        for name, named in named_providers.items():
            check_provider(named, f"$.provider.{name}", file)
        tools = structure_section(tools_own, ToolsConfig, file=file, path="$.tools")
        tools = attrs.evolve(tools, plugin_settings=plugin_tables)
        config = attrs.evolve(config, tools=tools, profiles=profiles, prices=prices)
        _check_values(config, file)
    return attrs.evolve(
        config,
        named_providers=named_providers,
        providers=dict(providers_raw),
        surfaces=surfaces,
        i18n=i18n,
        source=file,
    )


def _split_tools(raw: Any, file: str | None) -> tuple[dict[str, Any], dict[str, Mapping[str, Any]]]:
    """``[tools]``'s own keys, and its ``[tools.<plugin>]`` tables by plugin."""
    if not isinstance(raw, dict):
        raise refused(file, "$.tools", raw, "a table")
    own = {k: v for k, v in raw.items() if k in TOOLS_OWN_KEYS}
    plugin_tables: dict[str, Mapping[str, Any]] = {}
    for key, value in raw.items():
        if key in TOOLS_OWN_KEYS:
            continue
        if not isinstance(value, dict):
            raise ConfigError(
                f"{where(file, f'$.tools.{key}')} = {value!r}: unknown key {key!r}; [tools] takes "
                "enable, deny, profile, max_direct, max_direct_bytes, [tools.trust], "
                "[tools.exposure], and [tools.<plugin>] tables of plugin "
                "settings",
                file=file,
                path=f"$.tools.{key}",
            )
        plugin_tables[key] = value
    return own, plugin_tables


def _named_providers(raw: Any) -> tuple[Any, dict[str, dict[str, Any]]]:
    """``[provider]`` without its ``[provider.<name>]`` tables, and those tables by name."""
    if not isinstance(raw, dict):
        return raw, {}
    named = {
        key: value
        for key, value in raw.items()
        if isinstance(value, dict) and key not in PROVIDER_TABLES
    }
    return {key: value for key, value in raw.items() if key not in named}, named


def _structure_prices(raw: Any, file: str | None) -> dict[str, ModelPrice]:
    """``[prices."<model>"]`` tables, each a :class:`ModelPrice`."""
    if not isinstance(raw, dict) or any(not isinstance(v, dict) for v in raw.values()):
        raise ConfigError(
            f'{where(file, "$.prices")}: expected [prices."<model>"] tables of input and output '
            "prices per million tokens",
            file=file,
            path="$.prices",
        )
    return {
        model: structure_section(table, ModelPrice, file=file, path=f"$.prices.{model}")
        for model, table in raw.items()
    }


def _structure_surfaces(raw: Any, file: str | None) -> dict[str, SurfaceConfig]:
    """``[surfaces.<name>]`` tables, each named like a surface."""
    if not isinstance(raw, dict):
        raise refused(file, "$.surfaces", raw, "[surfaces.<name>] tables")
    surfaces: dict[str, SurfaceConfig] = {}
    for name, table in raw.items():
        path = f"$.surfaces.{name}"
        if not is_surface_name(name):
            raise ConfigError(
                f"{where(file, path)}: {name!r} is not a surface name; expected a lower-case "
                "word such as run, chat, web, batch, mcp-serve or an application's own",
                file=file,
                path=path,
            )
        surfaces[name] = structure_section(table, SurfaceConfig, file=file, path=path)
    return surfaces


@functools.cache
def _locale_tag() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*")


def _structure_i18n(raw: Any, file: str | None) -> I18nConfig:
    """``[i18n]``: ``locale``, and ``[i18n.<locale>.<tool>]`` tables of title and description."""
    if not isinstance(raw, dict):
        raise refused(file, "$.i18n", raw, "a table [i18n]")
    locale = raw.get("locale")
    if locale is not None and (not isinstance(locale, str) or not _locale_tag().fullmatch(locale)):
        raise refused(file, "$.i18n.locale", locale, "a language tag such as 'fr' or 'pt-BR'")
    texts: dict[str, dict[str, ToolTexts]] = {}
    for name, tables in raw.items():
        if name == "locale":
            continue
        path = f"$.i18n.{name}"
        if not _locale_tag().fullmatch(name) or not isinstance(tables, dict):
            raise refused(
                file, path, tables, "locale tables such as [i18n.fr.<tool>] (or the key locale)"
            )
        texts[_normal_locale(name)] = {
            tool: structure_section(table, ToolTexts, file=file, path=f"{path}.{tool}")
            for tool, table in tables.items()
        }
    return I18nConfig(locale=_normal_locale(locale) if locale else None, texts=texts)


def _normal_locale(tag: str) -> str:
    """``pt_BR`` and ``PT-br`` as ``pt-br``: one spelling to look tags up by."""
    return tag.replace("_", "-").lower()


def _structure_sections(data: Mapping[str, Any], file: str | None) -> Config:
    """Structure each table the file has on its own: a section the file leaves out costs nothing
    (cattrs generates a structuring function per class, which is most of a small config's load
    time), and every section's problems are still reported together."""
    problems: list[tuple[str, str | None]] = []
    valid = ", ".join(sorted([*SECTIONS, *TABLES_OF_TABLES]))
    for key in sorted(set(data) - set(SECTIONS)):
        message = f"{where(file, f'$.{key}')}: unknown key {key!r}; valid keys here: {valid}"
        problems.append((message, f"$.{key}"))
    sections: dict[str, Any] = {}
    for key, cls in SECTIONS.items():
        if key not in data:
            continue
        if not isinstance(data[key], dict):
            path = f"$.{key}"
            message = f"{where(file, path)} = {data[key]!r}: expected a table [{key}]"
            problems.append((message, path))
            continue
        try:
            sections[key] = structure_section(data[key], cls, file=file, path=f"$.{key}")
        except ConfigError as exc:
            problems.append((str(exc), exc.path))
    if problems:
        message = "\n".join(text for text, _ in problems)
        raise ConfigError(message, file=file, path=problems[0][1])
    return Config(**sections)


def _check_values(config: Config, file: str | None) -> None:
    """Refuse a value its key's declaration refuses, then what depends on two keys or tables."""
    for key in [*SECTIONS, "tools"]:
        check_section(getattr(config, key), f"$.{key}", file)
    if config.trace.request_bodies and not config.trace.path:
        raise refused(
            file,
            "$.trace.request_bodies",
            True,
            "a [trace] path to write them to (request_bodies = true adds the request bodies to "
            "the trace; `toolwire run --show-wire` prints them without one)",
        )
    profile = config.tools.profile
    if profile is not None and profile not in config.profiles:
        known = ", ".join(sorted(config.profiles)) or "none are defined"
        raise refused(
            file, "$.tools.profile", profile, f"the name of a [profiles.<name>] table ({known})"
        )
    _check_budgets(config, file)


def _check_budgets(config: Config, file: str | None) -> None:
    """``[prices]``, the compaction shares of ``[loop]``, and a price for every model when
    ``[limits] max_cost`` is set."""
    for model, price in config.prices.items():
        for key in ("input", "output", "cached_input", "cache_write"):
            value = getattr(price, key)
            if value is not None and not (value >= 0 and math.isfinite(value)):
                raise refused(
                    file, f"$.prices.{model}.{key}", value, "a price of at least 0 per million"
                )
    loop = config.loop
    if not 0 < loop.compact_to < loop.compact_at <= 1:
        raise refused(
            file,
            "$.loop.compact_to",
            loop.compact_to,
            f"a share above 0 and below [loop] compact_at ({loop.compact_at:g}), at most 1",
        )
    if config.limits.max_cost is None:
        return
    providers = [("$.provider", config.provider)] + [
        (f"$.provider.fallback[{i}]", entry) for i, entry in enumerate(config.provider.fallback)
    ]
    for path, provider in providers:
        name = provider.model
        if name is not None and name not in config.prices:
            raise refused(
                file,
                f"{path}.model",
                name,
                f'a model with a price: [limits] max_cost needs [prices."{name}"] (input '
                "and output per million tokens)",
            )
