"""Which registered tools a run may offer: the selection (enabled, denied, the profile) and the
checks against the provider and adapter (trust, name length), each with its reason.

The offer (``loop/_offer.py``) and ``Host.why_not_offered`` both ask these, so the two cannot
disagree about why a tool is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from ._trust import TrustLevel
from .config import Config

if TYPE_CHECKING:
    from .tools import Tool


class Selection(NamedTuple):
    """The candidate tools of a run before per-round checks: selected by ``[tools] enable`` or the
    run's ``tools=``, plus ``context`` tools, within the profile's allow list, minus deny lists."""

    enabled: frozenset[str] | None
    allow: frozenset[str] | None
    deny: frozenset[str]
    hidden: frozenset[str] = frozenset()

    @classmethod
    def from_config(
        cls, config: Config, tools: tuple[str, ...] | None, profile: str | None
    ) -> Selection:
        """The selection for a run; ``tools`` (the run's option) overrides ``[tools] enable``."""
        enabled = tools if tools is not None else config.tools.enable
        deny = set(config.tools.deny)
        allow: frozenset[str] | None = None
        profile_name = profile if profile is not None else config.tools.profile
        if profile_name is not None:
            chosen = config.profiles.get(profile_name)
            if chosen is None:
                known = ", ".join(sorted(config.profiles)) or "none are defined"
                raise ValueError(
                    f"profile {profile_name!r} is not defined; defined profiles: {known}"
                )
            if chosen.allow is not None:
                allow = frozenset(chosen.allow)
            deny.update(chosen.deny)
        return cls(
            enabled=frozenset(enabled) if enabled is not None else None,
            allow=allow,
            deny=frozenset(deny),
            hidden=frozenset(
                name for name, exposure in config.tools.exposure.items() if exposure == "hidden"
            ),
        )

    def candidates(self, registered: Mapping[str, Tool]) -> list[Tool]:
        """The registered tools this selection lets through, sorted by name."""
        return [
            registered[name] for name in sorted(registered) if self.reason(registered[name]) is None
        ]

    def reason(self, tool: Tool) -> str | None:
        """Why this selection leaves ``tool`` out, or None when it lets it through. The checks
        run in the offer's order: not enabled, denied, outside the profile's allow list, hidden."""
        name = tool.name
        if self.enabled is not None and name not in self.enabled and tool.activation != "context":
            return "it is not enabled ([tools] enable, or the run's tools=, does not name it)"
        if name in self.deny:
            return "it is denied ([tools] deny, or the profile's deny list, names it)"
        if self.allow is not None and name not in self.allow:
            return "it is not in the profile's allow list"
        if name in self.hidden:
            return "its exposure is hidden ([tools.exposure])"
        return None


def unfit(tool: Tool, trust: TrustLevel, max_name: int, api: str) -> str | None:
    """Why ``tool`` cannot be offered to this adapter and provider at all, or None: the
    provider's trust first, then the adapter's name limit."""
    needed = tool.min_provider_trust
    if needed is not None and TrustLevel.parse(needed) > trust:
        return (
            "it needs a provider trusted at least "
            f"{TrustLevel.parse(needed).label!r}; the provider is {trust.label!r}"
        )
    if len(tool.name) > max_name:
        return (
            f"its name is {len(tool.name)} characters long; the {api} "
            f"adapter accepts at most {max_name}"
        )
    return None


def first_reason(
    selection: Selection, tool: Tool, trust: TrustLevel, max_name: int, api: str
) -> str | None:
    """The first of the offer's checks before resolution that leaves ``tool`` out, or None:
    not enabled, denied, the profile's allow list, the provider's trust, the name length."""
    return selection.reason(tool) or unfit(tool, trust, max_name, api)
