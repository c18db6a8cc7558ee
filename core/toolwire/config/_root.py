"""``Config``, the whole configuration, and the table of its sections."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import attrs

from .._fieldwise import record_eq, record_hash, record_repr
from .._surface import Surface
from .._trust import levels_in_use
from ..usage import ModelPrice
from ._convert import structure_section
from ._errors import LAYERED, ConfigError, attributed
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
    TraceConfig,
    TrustConfig,
)
from ._tools import ProfileConfig, SurfaceConfig, ToolsConfig

T = TypeVar("T")


@attrs.frozen(kw_only=True, slots=False)
class Config:
    """The whole configuration. ``source`` is the file it came from (None = defaults)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    plugins: PluginsConfig = PluginsConfig()
    provider: ProviderConfig = ProviderConfig()
    named_providers: Mapping[str, ProviderConfig] = attrs.field(factory=dict)
    """``[provider.<name>]`` tables: each is ``[provider]`` with the keys it sets changed, chosen
    for one command with ``toolwire run --provider NAME`` (:meth:`with_provider`)."""
    providers: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    loop: LoopConfig = LoopConfig()
    tools: ToolsConfig = ToolsConfig()
    profiles: Mapping[str, ProfileConfig] = attrs.field(factory=dict)
    surfaces: Mapping[str, SurfaceConfig] = attrs.field(factory=dict)
    policy: PolicyConfig = PolicyConfig()
    trust: TrustConfig = TrustConfig()
    ledger: LedgerConfig = LedgerConfig()
    trace: TraceConfig = TraceConfig()
    batch: BatchConfig = BatchConfig()
    i18n: I18nConfig = I18nConfig()
    artifacts: ArtifactsConfig = ArtifactsConfig()
    limits: LimitsConfig = LimitsConfig()
    run: RunConfig = RunConfig()
    prices: Mapping[str, ModelPrice] = attrs.field(factory=dict)
    """``[prices."<model>"]``: per million tokens, ``input``, ``output`` and optionally
    ``cached_input`` and ``cache_write``; a run's cost counts each answer at the price of the
    model that gave it (as the answer names it, else as configured)."""
    source: str | None = None
    enabled_from: str | None = None
    """Where ``plugins.enable`` came from when not from ``source`` (``$TOOLWIRE_PLUGINS``)."""
    layers: tuple[str, ...] = ()
    """The files merged into this config, first to last (system, user, project)."""
    origins: Mapping[str, str] = attrs.field(factory=dict)
    """The file each set key came from, by key path (``$.loop.max_rounds``); empty when the
    config was not loaded from files (then ``source``, if any, is every key's file)."""
    locked: Mapping[str, str] = attrs.field(factory=dict)
    """Locked key paths (``$.policy.deny``) and the file that locked them."""
    surface: Surface | None = None
    """Where the host's runs happen (``Host.load(surface=…)``, set by each ``toolwire``
    command); None for a host that names none. Not read from a file."""

    def origin_of(self, path: str) -> str | None:
        """The file the value at ``path`` (``$.tools.web.private_hosts``) came from: the file
        of that key, of the table holding it, or of the last file that set a key inside it
        (None when it is a default)."""
        if not self.origins:
            return self.source
        probe = path
        while True:
            if probe in self.origins:
                return self.origins[probe]
            cut = max(probe.rfind("."), probe.rfind("["))
            if cut <= 1:
                break
            probe = probe[:cut]
        inner = [file for key, file in self.origins.items() if key.startswith(path + ".")]
        return inner[-1] if inner else self.source

    def structure(self, data: Any, cls: type[T], *, path: str) -> T:
        """``data`` (the table at ``path`` of this config) structured into ``cls``; an error
        names the file each bad value came from. Trust levels in it are read in this config's
        ``[trust] levels``."""
        with levels_in_use(self.trust.levels):
            if not self.origins:
                return structure_section(data, cls, file=self.source, path=path)
            try:
                return structure_section(data, cls, file=LAYERED, path=path)
            except ConfigError as exc:
                raise attributed(exc, self.origin_of) from None

    def with_provider(self, name: str) -> Config:
        """This config with ``[provider.<name>]`` as its provider.

        :raises ConfigError: for a name no ``[provider.<name>]`` table has, listing those that
            exist.
        """
        chosen = self.named_providers.get(name)
        if chosen is None:
            known = ", ".join(sorted(self.named_providers)) or "none are defined"
            raise ConfigError(
                f"--provider {name!r}: no [provider.{name}] table in the config; named "
                f"providers: {known}"
            )
        return attrs.evolve(self, provider=chosen)

    def with_enabled(self, names: tuple[str, ...], *, origin: str | None = None) -> Config:
        """This config with a different list of enabled plugins, which came from ``origin``
        (None: from the config itself); errors about the list name it."""
        return attrs.evolve(
            self, plugins=attrs.evolve(self.plugins, enable=names), enabled_from=origin
        )


SECTIONS: dict[str, type] = {
    "plugins": PluginsConfig,
    "provider": ProviderConfig,
    "loop": LoopConfig,
    "policy": PolicyConfig,
    "trust": TrustConfig,
    "ledger": LedgerConfig,
    "trace": TraceConfig,
    "batch": BatchConfig,
    "artifacts": ArtifactsConfig,
    "limits": LimitsConfig,
    "run": RunConfig,
}
"""The top-level tables that are one section each, structured on their own."""

TABLES_OF_TABLES = ("i18n", "prices", "profiles", "providers", "surfaces", "tools")
"""The top-level tables made of named tables, structured apart from :data:`SECTIONS`."""
