"""``toolwire.toml``: finding the files, merging them, structuring them into typed sections,
checking every value and explaining what is wrong.

The package's modules, from the bottom up: ``_errors`` (:class:`ConfigError` and the wording of
every error), ``_fields`` (a key declared beside its field: help text, bounds, check), one
module per section (``_provider``, ``_loop``, ``_tools``, ``_policy``, and ``_sections`` for
the small ones), ``_root`` (:class:`Config`), ``_toml`` (reading a file), ``_structure``
(:func:`config_from_dict`), ``_layers`` (system, user and project files, ``[locked]``,
:func:`load_config`), ``_show`` (``toolwire config show``) and ``_reference`` (the reference
rendered from the declarations).
"""

from __future__ import annotations

from ._convert import structure_section
from ._errors import ConfigError
from ._layers import load_config
from ._loop import LoopConfig
from ._policy import PolicyConfig
from ._provider import ProviderConfig
from ._root import Config
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
from ._structure import config_from_dict
from ._tools import ProfileConfig, SurfaceConfig, ToolsConfig

__all__ = [
    "ArtifactsConfig",
    "BatchConfig",
    "Config",
    "ConfigError",
    "I18nConfig",
    "LedgerConfig",
    "LimitsConfig",
    "LoopConfig",
    "PluginsConfig",
    "PolicyConfig",
    "ProfileConfig",
    "ProviderConfig",
    "RunConfig",
    "SurfaceConfig",
    "ToolTexts",
    "ToolsConfig",
    "TraceConfig",
    "TrustConfig",
    "config_from_dict",
    "load_config",
    "structure_section",
]
