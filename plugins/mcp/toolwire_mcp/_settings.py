"""``McpSettings``: the ``[tools.mcp]`` section, one :class:`ServerSettings` per server."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import attrs

from toolwire import SideEffect, TrustLevel
from toolwire.tools import ToolDefinitionError, ToolPolicy, tool_name_problems

SECTION = "[tools.mcp.servers]"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HTTP_URL = re.compile(r"https?://[^\s/?#@\\]+(?:/[^\s\\]*)?", re.IGNORECASE)
_SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")


def _positive(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"{attribute.name} = {value!r}: expected a number of seconds above 0")


def _approval(value: Any) -> bool | tuple[str, ...]:
    if isinstance(value, bool):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(
        f"require_approval = {value!r}: expected true, false, or a list of the server's tool names"
    )


def _optional_names(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"include = {value!r}: expected a list of the server's tool names")


def _prefixes(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list | tuple) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise ValueError(
        f"error_prefix = {value!r}: expected the text a plain-text error starts with, such as "
        "'Error:', or a list of such texts"
    )


def _optional_positive_int(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise ValueError(f"{attribute.name} = {value!r}: expected a whole number above 0")


def _side_effects(value: Any) -> frozenset[SideEffect] | None:
    if value is None:
        return None
    if not isinstance(value, str | list | tuple):
        raise ValueError(f"side_effects = {value!r}: expected a list such as ['read_only']")
    try:  # the tool model's own reading of side effects
        return ToolPolicy(side_effects=value).side_effects
    except ToolDefinitionError as exc:
        raise ValueError(f"side_effects: {exc}") from None


@attrs.frozen(kw_only=True)
class ToolOverride:
    """What the config says about one of a server's tools, over the server's own hints.

    ``side_effects`` and ``idempotent`` replace what the tool's annotations
    (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``) imply.
    """

    side_effects: Any = attrs.field(default=None, converter=_side_effects)
    idempotent: bool | None = None


def _prefixes_or_empty(value: Any) -> tuple[str, ...]:
    return () if value in ((), []) else _prefixes(value)


def _non_negative_int(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{attribute.name} = {value!r}: expected a whole number, 0 or more")


def _trust(instance: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None:
        try:
            TrustLevel.parse(value)
        except ValueError as exc:
            raise ValueError(f"trust = {value!r}: {exc}") from None


def _env_names(instance: object, attribute: attrs.Attribute[Any], value: Mapping[str, str]) -> None:
    for header, variable in value.items():
        if not isinstance(variable, str) or not _ENV_NAME.fullmatch(variable):
            raise ValueError(
                f"headers_env.{header} = {variable!r}: expected the name of an environment "
                "variable holding the header's value, such as 'SEARCH_TOKEN'"
            )


@attrs.frozen(kw_only=True)
class ServerSettings:
    """One MCP server: a command to run over stdio, or a streamable-HTTP ``url``.

    ``prefix`` names its tools ``<prefix><name>`` (None: ``"<server>_"``, ``""``: no prefix);
    ``include``/``exclude`` pick tools by the server's names (exclude wins);
    ``require_approval`` is ``true`` or a list of the server's tool names; ``trust`` is the
    provider trust its results require; ``timeout`` bounds each call and ``startup_timeout``
    the start and the tool listing, in seconds. ``headers_env`` maps a header to the environment
    variable holding its value, read when the server is connected and never logged.

    ``max_result_bytes`` caps each result of the server (default ``[policy]
    max_untrusted_result_bytes``); ``error_prefix`` marks a text result that starts with it as
    an error (for servers that report failures as plain text); ``tools`` sets side effects and
    idempotency per tool of the server, by its own name, over its annotations;
    ``max_schema_bytes``, ``max_schema_depth`` and ``max_schema_properties`` bound each listed
    tool's input schema (a tool over a bound is left out and reported). ``oauth`` signs in to a
    streamable-HTTP server with OAuth 2.1 (``toolwire mcp login NAME``); ``max_reconnects``
    bounds how often a server that died or lost its session is started again in a row.
    """

    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = attrs.field(factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers_env: dict[str, str] = attrs.field(factory=dict, validator=_env_names)
    prefix: str | None = None
    include: Any = attrs.field(default=None, converter=_optional_names)
    exclude: tuple[str, ...] = ()
    require_approval: Any = attrs.field(default=False, converter=_approval)
    trust: str | None = attrs.field(default=None, validator=_trust)
    timeout: float = attrs.field(default=60.0, validator=_positive)
    startup_timeout: float = attrs.field(default=20.0, validator=_positive)
    max_result_bytes: int | None = attrs.field(default=None, validator=_optional_positive_int)
    error_prefix: Any = attrs.field(default=(), converter=_prefixes_or_empty)
    tools: dict[str, ToolOverride] = attrs.field(factory=dict)
    max_schema_bytes: int = attrs.field(default=65_536, validator=_optional_positive_int)
    max_schema_depth: int = attrs.field(default=32, validator=_optional_positive_int)
    max_schema_properties: int = attrs.field(default=512, validator=_optional_positive_int)
    oauth: bool = False
    oauth_scopes: tuple[str, ...] = ()
    max_reconnects: int = attrs.field(default=3, validator=_non_negative_int)

    def __attrs_post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                "give either command (a stdio server) or url (a streamable-HTTP server); "
                f"got command={self.command!r}, url={self.url!r}"
            )
        if self.url is not None and not _HTTP_URL.fullmatch(self.url.strip()):
            raise ValueError(
                f"url = {self.url!r}: expected an http:// or https:// URL such as "
                "'http://127.0.0.1:8931/mcp'"
            )
        if self.command is not None and not self.command.strip():
            raise ValueError("command = '': expected the program that starts the server")
        if self.oauth and self.url is None:
            raise ValueError("oauth = true: OAuth signs in to a streamable-HTTP server (url)")

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"

    def prefix_for(self, server: str) -> str:
        """The prefix of this server's tool names (the default one when none is set)."""
        return f"{server.replace('-', '_')}_" if self.prefix is None else self.prefix

    def command_line(self, base_dir: str | None) -> list[str]:
        """The command and its arguments as run, a relative command path (one with a ``/``)
        taken from ``base_dir``, the config file's folder; the URL of an HTTP server."""
        if self.command is None:
            return [str(self.url)]
        command = os.path.expanduser(self.command)
        if base_dir is not None and os.sep in command and not os.path.isabs(command):
            command = os.path.normpath(os.path.join(base_dir, command))
        return [command, *self.args]

    def working_dir(self, base_dir: str | None) -> str | None:
        """Where a stdio server runs: ``cwd`` (a relative one taken from ``base_dir``, the
        config file's folder), else that folder, else the current directory (None)."""
        if self.cwd is None:
            return base_dir
        cwd = os.path.expanduser(self.cwd)
        if base_dir is not None and not os.path.isabs(cwd):
            cwd = os.path.normpath(os.path.join(base_dir, cwd))
        return cwd


@attrs.frozen(kw_only=True, eq=False)
class McpSettings:
    """``[tools.mcp]``: the MCP servers whose tools the host offers, by server name.

    Compared by identity: the host structures one per host, and the servers started for it
    belong to that host alone.
    """

    servers: dict[str, ServerSettings] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        for name, server in self.servers.items():
            if not _SERVER_NAME.fullmatch(name):
                raise ValueError(
                    f"{SECTION} {name!r}: a server name is letters, digits, '_' and '-'"
                )
            prefix = server.prefix_for(name)
            if prefix and tool_name_problems(prefix + "x"):
                problems = "; ".join(tool_name_problems(prefix + "x"))
                raise ValueError(
                    f"{SECTION}.{name} prefix = {prefix!r}: it does not make valid tool names "
                    f"({problems}); set prefix to letters, digits and '_'"
                )
