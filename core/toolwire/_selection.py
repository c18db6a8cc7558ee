"""Which registered tools a run may offer: the selection (enabled, denied, the profile) and the
checks against the provider and adapter (trust, name length), each with its reason.

The offer (``loop/_offer.py``) and ``Host.why_not_offered`` both ask these, so the two cannot
disagree about why a tool is left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from ._surface import Surface
from ._trust import TrustLevel
from .config import Config

if TYPE_CHECKING:
    from .tools import Tool


class Selection(NamedTuple):
    """The candidate tools of a run before per-round checks: selected by ``[tools] enable`` or the
    run's ``tools=``, plus ``context`` tools, within the allow lists of the profile and of the
    host's surface, minus every deny list (deny wins; an empty allow list allows every tool).

    ``closed`` is set when the host's surface is hosted and the config names no tools: then
    nothing is offered, and ``closed`` says why.

    A selected tool selects the tools it ``requires`` (:meth:`with_requirements`): they pass
    ``enable`` and the allow lists, never a deny list or a hidden exposure. ``required`` holds
    the tools selected that way, ``refused`` the tools left out because a tool they require is
    not registered, denied or hidden (each with its reason).
    """

    enabled: frozenset[str] | None
    allow: frozenset[str] | None
    deny: frozenset[str]
    hidden: frozenset[str] = frozenset()
    surface: str | None = None
    surface_allow: frozenset[str] | None = None
    surface_deny: frozenset[str] = frozenset()
    closed: str | None = None
    required: frozenset[str] = frozenset()
    refused: tuple[tuple[str, str], ...] = ()
    expanded: bool = False

    @classmethod
    def from_config(
        cls,
        config: Config,
        tools: tuple[str, ...] | None,
        profile: str | None,
        registered: Mapping[str, Tool] | None = None,
    ) -> Selection:
        """The selection for a run; ``tools`` (the run's option) overrides ``[tools] enable``.
        With the ``registered`` tools, their requirements are applied
        (:meth:`with_requirements`)."""
        selection = cls._from_config(config, tools, profile)
        return selection if registered is None else selection.with_requirements(registered)

    @classmethod
    def _from_config(
        cls, config: Config, tools: tuple[str, ...] | None, profile: str | None
    ) -> Selection:
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
            if chosen.allow:
                allow = frozenset(chosen.allow)
            deny.update(chosen.deny)
        surface = config.surface
        own = config.surfaces.get(surface.name) if surface is not None else None
        surface_allow = frozenset(own.allow) if own is not None and own.allow else None
        named = bool(enabled or allow or surface_allow)
        closed = _closed(surface) if surface is not None and surface.hosted and not named else None
        return cls(
            enabled=frozenset(enabled) if enabled is not None else None,
            allow=allow,
            deny=frozenset(deny),
            hidden=frozenset(
                name for name, exposure in config.tools.exposure.items() if exposure == "hidden"
            ),
            surface=surface.name if surface is not None else None,
            surface_allow=surface_allow,
            surface_deny=frozenset(own.deny) if own is not None else frozenset(),
            closed=closed,
        )

    def candidates(self, registered: Mapping[str, Tool]) -> list[Tool]:
        """The registered tools this selection lets through, with the tools they require,
        sorted by name."""
        if self.closed is not None:
            return []
        selection = self.with_requirements(registered)
        return [
            registered[name]
            for name in sorted(registered)
            if selection.reason(registered[name]) is None
        ]

    def with_requirements(self, registered: Mapping[str, Tool]) -> Selection:
        """This selection with the requirements of the ``registered`` tools applied.

        Every tool it lets through selects the tools it ``requires``, and those theirs. A tool
        whose required tool is not registered, is denied or hidden (or is itself left out for
        such a reason) is left out, and :meth:`reason` says which tool and why.
        """
        if self.expanded or self.closed is not None:
            return self
        chosen = {name for name, tool in registered.items() if self._reason(tool) is None}
        if not any(registered[name].requires for name in chosen):
            return self._replace(expanded=True)  # the common case: nothing more to select
        refused: dict[str, str] = {}
        changed = True
        while changed:  # a refusal may refuse the tools that require the refused one
            changed = False
            for name in sorted(_closure(chosen, registered, refused, self._denial)):
                if name in refused:
                    continue
                for needed in registered[name].requires:
                    problem = _missing(needed, registered, refused, self._denial)
                    if problem is not None:
                        refused[name] = f"it requires the tool {needed}, which {problem}"
                        changed = True
                        break
        kept = {name for name in chosen if name not in refused}
        required = _closure(kept, registered, refused, self._denial) - chosen
        return self._replace(
            required=frozenset(required), refused=tuple(sorted(refused.items())), expanded=True
        )

    def reason(self, tool: Tool) -> str | None:
        """Why this selection leaves ``tool`` out, or None when it lets it through. The checks
        run in the offer's order: a closed offer, not enabled, denied (by ``[tools]`` or the
        profile, then by the surface), outside the profile's or the surface's allow list,
        hidden, then a required tool that cannot be had. A tool another selected tool requires
        passes ``enable`` and the allow lists."""
        name = tool.name
        if name in self.required:
            return _as_reason(self._denial(name))
        refused = dict(self.refused).get(name) if self.refused else None
        if refused is not None and self.closed is None and self._denial(name) is None:
            return refused  # selected, or required by a selected tool, but unable to run
        return self._reason(tool)

    def _reason(self, tool: Tool) -> str | None:
        if self.closed is not None:
            return self.closed
        name = tool.name
        if self.enabled is not None and name not in self.enabled and tool.activation != "context":
            return "it is not enabled ([tools] enable, or the run's tools=, does not name it)"
        if name in self.deny or name in self.surface_deny:
            return _as_reason(self._denial(name))
        if self.allow is not None and name not in self.allow:
            return "it is not in the profile's allow list"
        if self.surface_allow is not None and name not in self.surface_allow:
            return (
                f"it is not in the allow list of the {self.surface} surface "
                f"([surfaces.{self.surface}] allow)"
            )
        return _as_reason(self._denial(name))

    def _denial(self, name: str) -> str | None:
        """Why ``name`` may never be offered, whoever selects it (``"is denied …"``,
        ``"is hidden …"``), or None."""
        if name in self.deny:
            return "is denied ([tools] deny, or the profile's deny list, names it)"
        if name in self.surface_deny:
            return f"is denied on the {self.surface} surface ([surfaces.{self.surface}] deny)"
        if name in self.hidden:
            return "is hidden ([tools.exposure])"
        return None


def _as_reason(denial: str | None) -> str | None:
    """A denial as the reason of the tool itself (``"it is denied …"``)."""
    if denial is None:
        return None
    if denial.startswith("is hidden"):
        return "its exposure is hidden ([tools.exposure])"
    return f"it {denial}"


def _missing(
    name: str,
    registered: Mapping[str, Tool],
    refused: Mapping[str, str],
    denial: Callable[[str], str | None],
) -> str | None:
    """Why the required tool ``name`` cannot be had, or None when it can."""
    if name not in registered:
        return "is not registered (no enabled plugin provides it)"
    problem = denial(name)
    if problem is not None:
        return problem
    if name in refused:
        return f"is left out: {refused[name]}"
    return None


def _closure(
    start: set[str],
    registered: Mapping[str, Tool],
    refused: Mapping[str, str],
    denial: Callable[[str], str | None],
) -> set[str]:
    """``start`` and every tool its tools require, transitively, that can be had."""
    found = set(start)
    pending = list(start)
    while pending:
        tool = registered.get(pending.pop())
        for needed in tool.requires if tool is not None else ():
            if needed not in found and _missing(needed, registered, refused, denial) is None:
                found.add(needed)
                pending.append(needed)
    return found


def closed_offer(config: Config) -> str | None:
    """Why the host's surface offers no tool at all, or None when it offers as configured.

    A hosted surface (``toolwire batch``, ``toolwire mcp serve``, a web chat on a network
    address) whose config enables plugins but names no tools (no ``[tools] enable``,
    no allow list of the profile or ``[surfaces.<name>]``) offers none: every tool of every
    enabled plugin would otherwise reach models with nobody, or strangers, watching. A run's
    own ``tools=`` names tools too. Interactive surfaces offer every tool of the enabled
    plugins, as before.
    """
    try:
        return Selection.from_config(config, None, None).closed
    except ValueError:  # an undefined profile: reported where the profile is used
        return None


def _closed(surface: Surface) -> str:
    return (
        f"the {surface.name} surface is hosted and the config names no tools, so it "
        "offers none to a run that names none itself: name them in [tools] enable or "
        f"[surfaces.{surface.name}] allow"
    )


def unfit(tool: Tool, trust: TrustLevel, max_name: int, api: str) -> str | None:
    """Why ``tool`` cannot be offered to this adapter and provider at all, or None: the
    provider's trust first, then the adapter's name limit."""
    needed = tool.min_provider_trust
    if needed is not None and not trust.satisfies(TrustLevel.parse(needed)):
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
