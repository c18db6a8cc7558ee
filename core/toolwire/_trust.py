"""Trust on two axes: how far a provider is trusted (confidence), and whether the data stays on
machines its owner runs (data security, ``self_hosted``).

A provider has a standing on both axes; a tool's ``min_provider_trust`` and a result's
``required_trust`` are requirements on both. A requirement only ever tightens, axis by axis.
Confidence levels come from a scheme, ``low < medium < high`` unless ``[trust] levels`` gives
an organisation's own, which keeps those three in that order and adds its levels around and
between them.

The scheme belongs to a host: its config's ``[trust] levels`` are in use while the host works
(:func:`levels_in_use`: its runs, its loading, its plugins' settings), in that context only, so
two hosts of one process with different schemes each read and compare levels in their own.
Outside any host the process's default applies (:func:`use_levels`).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
from collections.abc import Iterator, Sequence
from typing import ClassVar

import attrs

DEFAULT_LEVELS = ("low", "medium", "high")
"""The confidence levels of the default scheme, least trusted first."""

SELF_HOSTED = "self_hosted"
"""The data-security level: the data never leaves machines the provider's owner runs."""

_default: tuple[str, ...] = DEFAULT_LEVELS
"""The scheme outside any host (:func:`use_levels`)."""
_in_use: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar(
    "toolwire_trust_levels", default=None
)
"""The scheme of the host working in this context (None: the default)."""


@functools.cache
def _level_name() -> re.Pattern[str]:  # compiled when a scheme is checked, not at every start
    return re.compile(r"[a-z][a-z0-9_]{0,31}")


def confidence_levels() -> tuple[str, ...]:
    """The confidence levels in use, least trusted first: the ``[trust] levels`` of the host
    working in this context, else the process's default."""
    return _in_use.get() or _default


def scheme_problem(levels: Sequence[object]) -> str | None:
    """Why ``levels`` cannot be a confidence scheme, or None when it can."""
    names = list(levels)
    for name in names:
        if not isinstance(name, str) or not _level_name().fullmatch(name) or name == SELF_HOSTED:
            return (
                f"{name!r} is not a level name (a lower-case word; {SELF_HOSTED!r} is the "
                "data-security level, not a confidence level)"
            )
    if len(set(names)) != len(names):
        return "a level is named twice"
    built_in = [name for name in names if name in DEFAULT_LEVELS]
    if built_in != list(DEFAULT_LEVELS):
        return (
            "the scheme must keep 'low', 'medium' and 'high' in that order (tools and plugins "
            "ask for them) and add its own levels around and between them"
        )
    return None


def _checked(levels: Sequence[str]) -> tuple[str, ...]:
    problem = scheme_problem(levels)
    if problem is not None:
        raise ValueError(f"[trust] levels = {list(levels)!r}: {problem}")
    return tuple(levels)


def use_levels(levels: Sequence[str]) -> None:
    """Make ``levels`` the default confidence scheme of this process: the one read outside any
    host (a script's own levels, a process with one config). A host always uses its own
    config's ``[trust] levels`` (:func:`levels_in_use`), whatever the default.

    :raises ValueError: naming what is wrong with ``levels`` (see :func:`scheme_problem`).
    """
    global _default
    _default = _checked(levels)


@contextlib.contextmanager
def levels_in_use(levels: Sequence[str]) -> Iterator[None]:
    """Read and compare levels in the scheme ``levels`` (a host's ``[trust] levels``) until the
    block ends, in this context alone: the current task, the tasks it starts and the threads
    given its context; other tasks and hosts keep theirs.

    :raises ValueError: naming what is wrong with ``levels`` (see :func:`scheme_problem`).
    """
    if tuple(levels) == confidence_levels():
        yield
        return
    token = _in_use.set(_checked(levels))
    try:
        yield
    finally:
        _in_use.reset(token)


def declared_level(value: str | int | TrustLevel) -> TrustLevel:
    """A level as a tool declares it or a stored run wrote it, perhaps where no host's scheme
    is in use: read in the scheme in use (:meth:`TrustLevel.parse`), else, when each part is a
    level name, taken as written, for the host to check (or compare) in its own scheme.

    :raises ValueError: naming the value and the valid levels.
    """
    try:
        return TrustLevel.parse(value)
    except ValueError:
        if not isinstance(value, str):
            raise
        parts = [part.strip().lower() for part in value.split("+")]
        names = [part for part in parts if part != SELF_HOSTED]
        if len(names) != 1 or len(parts) > 2 or not _level_name().fullmatch(names[0]):
            raise
        return TrustLevel(names[0], len(parts) == 2)


def _rank(confidence: str | None) -> int:
    if confidence is None:
        return -1
    try:
        return confidence_levels().index(confidence)
    except ValueError:
        raise ValueError(_unknown(confidence)) from None


def _unknown(value: object) -> str:
    valid = ", ".join((*confidence_levels(), SELF_HOSTED))
    return f"unknown trust level {value!r}; valid levels: {valid} (and 'LEVEL+{SELF_HOSTED}')"


@attrs.frozen
class TrustLevel:
    """A provider's standing, or what a tool or a result requires of providers, on two axes.

    ``confidence`` is a level of the scheme (None: no confidence asked for); ``self_hosted``
    is the data-security axis. Written ``"high"``, ``"self_hosted"`` (self-hosted, any
    confidence) or ``"medium+self_hosted"``. A provider :meth:`satisfies` a requirement when it
    is trusted at least as much on each axis; :meth:`strictest` joins two requirements.
    """

    confidence: str | None = None
    self_hosted: bool = False

    LOW: ClassVar[TrustLevel]
    MEDIUM: ClassVar[TrustLevel]
    HIGH: ClassVar[TrustLevel]
    SELF_HOSTED: ClassVar[TrustLevel]

    @classmethod
    def parse(cls, value: str | int | TrustLevel) -> TrustLevel:
        """Read a level: a confidence level of the scheme, ``"self_hosted"``, the two joined
        with ``+`` (``"high+self_hosted"``), a level itself, or the number of one of the four
        levels earlier versions knew (1 to 4: low, medium, high, self_hosted).

        :raises ValueError: naming the value and the valid levels.
        """
        if isinstance(value, TrustLevel):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            if 1 <= value <= len(_NUMBERED):
                return _NUMBERED[value - 1]
            raise ValueError(_unknown(value))
        if not isinstance(value, str):
            raise ValueError(_unknown(value))
        parts = [part.strip().lower() for part in value.split("+")]
        confidence: str | None = None
        self_hosted = False
        for part in parts:
            if part == SELF_HOSTED and not self_hosted:
                self_hosted = True
            elif part in confidence_levels() and confidence is None:
                confidence = part
            else:
                raise ValueError(_unknown(value))
        return cls(confidence, self_hosted)

    @classmethod
    def levels(cls) -> tuple[str, ...]:
        """Every level name a setting may hold: the confidence levels, then ``self_hosted``."""
        return (*confidence_levels(), SELF_HOSTED)

    @classmethod
    def highest(cls) -> TrustLevel:
        """The most trusted standing: the top confidence level, self-hosted (a person's own
        call, or a provider configured ``trust = "self_hosted"``)."""
        return cls(confidence_levels()[-1], True)

    @property
    def label(self) -> str:
        """How the level is written in the config and in stored runs."""
        if self.confidence is None:
            return SELF_HOSTED if self.self_hosted else "none"
        return f"{self.confidence}+{SELF_HOSTED}" if self.self_hosted else self.confidence

    def satisfies(self, required: TrustLevel | None) -> bool:
        """Whether a provider with this standing may see what needs ``required``."""
        if required is None:
            return True
        if required.self_hosted and not self.self_hosted:
            return False
        return _rank(self.confidence) >= _rank(required.confidence)

    def strictest(self, other: TrustLevel | None) -> TrustLevel:
        """The requirement both this one and ``other`` make: each axis at its stricter."""
        if other is None or other == self:
            return self
        higher = max(self.confidence, other.confidence, key=_rank)
        return TrustLevel(higher, self.self_hosted or other.self_hosted)

    def __str__(self) -> str:
        return self.label


TrustLevel.LOW = TrustLevel("low")
TrustLevel.MEDIUM = TrustLevel("medium")
TrustLevel.HIGH = TrustLevel("high")
TrustLevel.SELF_HOSTED = TrustLevel(None, True)
_NUMBERED = (TrustLevel.LOW, TrustLevel.MEDIUM, TrustLevel.HIGH, TrustLevel.SELF_HOSTED)


def strictest(*levels: TrustLevel | None) -> TrustLevel | None:
    """The requirement all of ``levels`` make together (None when none makes one)."""
    joined: TrustLevel | None = None
    for level in levels:
        if level is not None:
            joined = level.strictest(joined)
    return joined
