"""Approval grants: calls a person allowed ahead, for one conversation or for good."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import attrs

from .._effects import SideEffect

if TYPE_CHECKING:
    from ..config import Config
    from ..host._host import Host
    from ..loop._run import DeferredRequest
    from ..tools import Tool

GrantScope = Literal["tool", "server", "side_effect"]
"""What a grant names: one tool, every tool of one MCP server, or a side-effect class."""

GRANTS_FILE_ENV = "TOOLWIRE_GRANTS_FILE"
"""Names the file of lasting grants instead of the one beside the user's config."""

GRANTS_FILE_NAME = "grants.toml"
_SCOPES: tuple[str, ...] = get_args(GrantScope)
_LOCKED_APPROVAL = "$.policy.require_approval"
_VALUE_LIMIT = 200


class GrantError(ValueError):
    """A grant that cannot be made or read; the message names the value and what is valid."""


@attrs.frozen
class Grant:
    """One grant: ``scope`` and the name it applies to (a tool, a server, a side effect)."""

    scope: GrantScope
    value: str

    def __attrs_post_init__(self) -> None:
        if self.scope not in _SCOPES:
            raise GrantError(
                f"grant scope {self.scope!r} is not one of {', '.join(map(repr, _SCOPES))}"
            )
        value = self.value
        if (
            not isinstance(value, str)
            or not value
            or len(value) > _VALUE_LIMIT
            or not value.isprintable()
        ):
            raise GrantError(
                f"a {self.scope} grant names a printable text of 1 to {_VALUE_LIMIT} characters; "
                f"got {value!r:.80}"
            )
        if self.scope == "side_effect" and value not in SideEffect.__members__.values():
            valid = ", ".join(e.value for e in SideEffect)
            raise GrantError(f"side effect {value!r} is not one of: {valid}")

    @property
    def label(self) -> str:
        """The grant in words: ``tool write_note``, ``MCP server files``, ``writes_files``."""
        if self.scope == "tool":
            return f"tool {self.value}"
        if self.scope == "server":
            return f"MCP server {self.value}"
        return f"side effect {self.value}"

    def to_json(self) -> dict[str, str]:
        """``{"scope": …, "value": …}``."""
        return {"scope": self.scope, "value": self.value}

    @classmethod
    def from_json(cls, data: Any) -> Grant:
        """The inverse of :meth:`to_json`.

        :raises GrantError: for anything but an object with a valid scope and value.
        """
        if not isinstance(data, Mapping):
            raise GrantError(f"a grant is an object with scope and value; got {data!r:.80}")
        scope, value = data.get("scope"), data.get("value")
        if not isinstance(scope, str) or not isinstance(value, str):
            raise GrantError(f"a grant has a text scope and value; got {dict(data)!r:.120}")
        return cls(scope, value)  # type: ignore[arg-type]


def default_grants_file() -> Path:
    """``$TOOLWIRE_GRANTS_FILE``, else ``grants.toml`` beside the user's config
    (``$XDG_CONFIG_HOME/toolwire/``, else ``~/.config/toolwire/``)."""
    named = os.environ.get(GRANTS_FILE_ENV)
    if named:
        return Path(named).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolwire" / GRANTS_FILE_NAME


class GrantStore:
    """The lasting grants, in one TOML file (``[[grant]]`` tables of ``scope`` and ``value``).

    The file is read on every :meth:`grants` (another chat may have changed it) and written
    whole to a temporary file renamed into place, owner-only.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_grants_file()

    def grants(self) -> list[Grant]:
        """The grants in the file (none when it does not exist).

        :raises GrantError: naming the file when it cannot be read.
        """
        try:
            data = tomllib.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise GrantError(f"cannot read the grants in {self.path}: {exc}") from None
        entries = data.get("grant", [])
        if not isinstance(entries, list):
            raise GrantError(f"{self.path}: 'grant' must be an array of tables ([[grant]])")
        try:
            return list(dict.fromkeys(Grant.from_json(entry) for entry in entries))
        except GrantError as exc:
            raise GrantError(f"{self.path}: {exc}") from None

    def add(self, grant: Grant) -> None:
        """Keep ``grant`` (once)."""
        current = self.grants()
        if grant not in current:
            self._write([*current, grant])

    def remove(self, grant: Grant) -> bool:
        """Drop ``grant``; False when the file did not have it."""
        current = self.grants()
        if grant not in current:
            return False
        self._write([g for g in current if g != grant])
        return True

    def _write(self, grants: Sequence[Grant]) -> None:
        lines = [
            '# Calls toolwire\'s chats run without asking, kept by "always allow".',
            "# Revoke one in a chat's settings, or delete its [[grant]] table here.",
        ]
        for grant in grants:
            lines += ["", "[[grant]]", f"scope = {_toml_string(grant.scope)}"]
            lines.append(f"value = {_toml_string(grant.value)}")
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".grants-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write("\n".join(lines) + "\n")
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def _toml_string(text: str) -> str:
    # A JSON string of printable text is a TOML basic string (grants hold printable text only).
    return json.dumps(text, ensure_ascii=False)


def tool_server(host: Host, tool: Tool) -> str | None:
    """The MCP server a tool comes from (None for any other tool, or without ``toolwire-mcp``).

    Asks ``toolwire_mcp.server_of`` when that plugin is loaded; the core never imports it.
    """
    if tool.plugin != "mcp":
        return None
    find = getattr(sys.modules.get("toolwire_mcp"), "server_of", None)
    if not callable(find):
        return None
    server = find(host, tool.name)
    return server if isinstance(server, str) else None


def _locked_effects(config: Config | None) -> frozenset[str]:
    """Side effects the system file locks under ``[policy] require_approval``: no grant
    answers for them."""
    if config is None or _LOCKED_APPROVAL not in config.locked:
        return frozenset()
    return frozenset(config.policy.require_approval)


class Grants:
    """The grants one conversation runs with: its own (``conversation``) and the lasting ones.

    :param store: the lasting grants (None: this conversation's only).
    :param conversation: grants made for this conversation so far.
    :param config: the host's config: side effects its system file locks under
        ``[policy] require_approval`` are never answered by a grant.
    """

    def __init__(
        self,
        store: GrantStore | None,
        conversation: Iterable[Grant] = (),
        *,
        config: Config | None = None,
    ) -> None:
        self.store = store
        self.conversation: list[Grant] = list(dict.fromkeys(conversation))
        self._locked = _locked_effects(config)

    @classmethod
    def restore(
        cls,
        store: GrantStore | None,
        kept: Iterable[tuple[str, str]],
        *,
        config: Config | None = None,
    ) -> Grants:
        """The grants of a conversation kept as ``(scope, value)`` pairs (a pair no grant can be
        made of, written by hand or by another version, grants nothing)."""
        conversation: list[Grant] = []
        for scope, value in kept:
            try:
                conversation.append(Grant.from_json({"scope": scope, "value": value}))
            except GrantError:
                continue
        return cls(store, conversation, config=config)

    def pairs(self) -> list[tuple[str, str]]:
        """This conversation's own grants as ``(scope, value)`` pairs, to keep with it."""
        return [(g.scope, g.value) for g in self.conversation]

    def lasting(self) -> list[Grant]:
        """The lasting grants (none when the store cannot be read: nothing is granted then)."""
        if self.store is None:
            return []
        try:
            return self.store.grants()
        except GrantError:
            return []

    def covering(
        self, request: DeferredRequest, tool: Tool | None, server: str | None = None
    ) -> tuple[Grant, bool] | None:
        """The grant that answers ``request`` and whether it is a lasting one, or None.

        Only a call that asks for approval is answered. A side-effect grant answers a tool
        whose declared side effects are all granted (``writes_files`` alone does not answer a
        tool that also declares ``destructive``).
        """
        if request.reason != "approval" or tool is None:
            return None
        effects = {str(e) for e in tool.policy.side_effects or ()}
        if effects & self._locked:
            return None
        lasting = self.lasting()
        for grants, is_lasting in ((self.conversation, False), (lasting, True)):
            for grant in grants:
                if (grant.scope == "tool" and grant.value == tool.name) or (
                    grant.scope == "server" and server is not None and grant.value == server
                ):
                    return grant, is_lasting
        classes = [(g, False) for g in self.conversation if g.scope == "side_effect"]
        classes += [(g, True) for g in lasting if g.scope == "side_effect"]
        granted = {g.value for g, _ in classes}
        if effects and effects <= granted:
            grant, is_lasting = next((g, lasting_) for g, lasting_ in classes if g.value in effects)
            return grant, is_lasting
        return None

    def allow(self, grant: Grant, *, lasting: bool) -> None:
        """Grant for this conversation, or for good (``lasting``).

        :raises GrantError: for a lasting grant without a store, or one the config locks.
        """
        if grant.scope == "side_effect" and grant.value in self._locked:
            raise GrantError(
                f"{grant.value} calls always ask: the system config locks [policy] require_approval"
            )
        if lasting:
            if self.store is None:
                raise GrantError("this chat keeps no lasting grants")
            self.store.add(grant)
        elif grant not in self.conversation:
            self.conversation.append(grant)

    def revoke(self, grant: Grant, *, lasting: bool) -> bool:
        """Withdraw a grant; False when there was no such grant."""
        if lasting:
            return self.store.remove(grant) if self.store is not None else False
        if grant in self.conversation:
            self.conversation.remove(grant)
            return True
        return False

    def listing(self) -> list[dict[str, Any]]:
        """Every grant for a settings list: scope, value, label, ``lasting``."""
        return [
            {**grant.to_json(), "label": grant.label, "lasting": lasting}
            for grants, lasting in ((self.conversation, False), (self.lasting(), True))
            for grant in grants
        ]
