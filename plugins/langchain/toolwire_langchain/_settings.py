"""``LangchainSettings``: the ``[tools.langchain]`` section."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from toolwire.tools import ToolPolicy

PLUGIN_NAME = "langchain"
SECTION = f"[tools.{PLUGIN_NAME}]"
_REFERENCE = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _references(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"tools = {value!r}: expected a list of 'package.module:attribute' texts")
    for item in value:
        if not _REFERENCE.fullmatch(item):
            raise ValueError(
                f"tools: {item!r} is not a 'package.module:attribute' reference, such as "
                "'my_tools.search:web_search'"
            )
    return tuple(value)


def _toml_key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else json.dumps(name)


@attrs.frozen(kw_only=True, eq=False)
class LangchainSettings:
    """``[tools.langchain]``: the LangChain tools the host offers.

    ``tools`` names each as ``"package.module:attribute"``: a tool (``@tool``, a ``BaseTool``
    instance), a ``BaseTool`` subclass or a ``BaseToolkit`` (class or instance), or a list of
    tools. ``arguments`` gives a class its constructor's keyword arguments, under the same
    reference. ``policy`` declares each tool's side effects, idempotency and other policy by
    tool name (``[tools.langchain.policy.multiply] side_effects = ["read_only"]``): LangChain
    tools declare none.

    Compared by identity: the host structures one per host, and the tools made for that host
    belong to it alone.
    """

    tools: Any = attrs.field(default=(), converter=_references)
    arguments: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    policy: dict[str, dict[str, Any]] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        unknown = sorted(set(self.arguments) - set(self.tools))
        if unknown:
            raise ValueError(
                f"arguments: {', '.join(map(repr, unknown))} is not in tools; arguments are "
                f"given under the reference of a class in tools ({', '.join(self.tools) or 'none'})"
            )

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

        path = f"$.tools.{PLUGIN_NAME}.policy.{_toml_key(name)}"
        return structure_section(table, ToolPolicy, file=None, path=path)

    @staticmethod
    def policy_key(name: str) -> str:
        """The config table where a person declares the policy of the tool ``name``."""
        return f"[tools.{PLUGIN_NAME}.policy.{_toml_key(name)}]"
