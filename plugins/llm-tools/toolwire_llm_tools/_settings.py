"""``LlmToolsSettings``: the ``[tools.llm-tools]`` section."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from toolwire.tools import ToolPolicy

PLUGIN_NAME = "llm-tools"
SECTION = f"[tools.{PLUGIN_NAME}]"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _optional_names(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    return _names(value)


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"{value!r}: expected a list of names")


def _positive(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"{attribute.name} = {value!r}: expected a number of seconds above 0")


def toml_key(name: str) -> str:
    """``name`` as a TOML key: bare when it can be, else quoted."""
    return name if _BARE_KEY.fullmatch(name) else json.dumps(name)


@attrs.frozen(kw_only=True, eq=False)
class LlmToolsSettings:
    """``[tools.llm-tools]``: which of llm's tool plugins the host offers, and how.

    ``packages`` names the distributions whose ``register_tools`` hook is read (None: every
    installed distribution named ``llm-tools-*``). ``include`` and ``exclude`` pick tools by
    name (exclude wins). ``toolboxes`` gives each ``llm.Toolbox`` its constructor's keyword
    arguments, by the toolbox's name (``[tools.llm-tools.toolboxes.SQLite] path = "…"``).
    ``policy`` declares each tool's side effects, idempotency and other policy by tool name
    (``[tools.llm-tools.policy.simple_eval] side_effects = ["read_only"]``): llm's tools
    declare none. A text result starting with ``error_prefix`` is an error result (an empty
    prefix turns that off). ``startup_timeout`` bounds the making of each toolbox, in seconds.

    Compared by identity: the host structures one per host, and the toolboxes made for that
    host, with their threads, belong to it alone.
    """

    packages: Any = attrs.field(default=None, converter=_optional_names)
    include: Any = attrs.field(default=None, converter=_optional_names)
    exclude: Any = attrs.field(default=(), converter=_names)
    toolboxes: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    policy: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    error_prefix: str = "Error:"
    startup_timeout: float = attrs.field(default=30.0, validator=_positive)

    def wanted(self, name: str) -> bool:
        """Whether the tool ``name`` passes ``include`` and ``exclude``."""
        return name not in self.exclude and (self.include is None or name in self.include)

    def policy_of(self, name: str) -> ToolPolicy | None:
        """The policy ``policy`` declares for the tool ``name`` (None when it declares none).

        :raises ConfigError: naming the key and value when the table does not fit
            ``toolwire.ToolPolicy``.
        """
        table = self.policy.get(name)
        if table is None:
            return None
        from toolwire.config import structure_section
        from toolwire.tools import ToolPolicy

        path = f"$.tools.{PLUGIN_NAME}.policy.{toml_key(name)}"
        return structure_section(table, ToolPolicy, file=None, path=path)

    @staticmethod
    def policy_key(name: str) -> str:
        """The config table where a person declares the policy of the tool ``name``."""
        return f"[tools.{PLUGIN_NAME}.policy.{toml_key(name)}]"

    @staticmethod
    def toolbox_key(name: str) -> str:
        """The config table holding the constructor arguments of the toolbox ``name``."""
        return f"[tools.{PLUGIN_NAME}.toolboxes.{toml_key(name)}]"
