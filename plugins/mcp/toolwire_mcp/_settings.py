"""``McpSettings``: the ``[tools.mcp]`` section, one :class:`ServerSettings` per server."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from toolwire import TrustLevel
from toolwire.tools import tool_name_problems

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

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"

    def prefix_for(self, server: str) -> str:
        """The prefix of this server's tool names."""
        return f"{server.replace('-', '_')}_" if self.prefix is None else self.prefix


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
