"""Trust levels of providers, ordered from least to most trusted."""

from __future__ import annotations

import enum


class TrustLevel(enum.IntEnum):
    """How far a provider is trusted with data; higher is more trusted.

    A tool declares ``min_provider_trust`` and a result may require a level from every later
    provider of the run (the requirement only ever tightens).
    """

    LOW = 1
    MEDIUM = 2
    HIGH = 3
    SELF_HOSTED = 4

    @classmethod
    def parse(cls, value: str | int | TrustLevel) -> TrustLevel:
        """Read a level from its config name (``"self_hosted"``), its number or a level."""
        if isinstance(value, TrustLevel):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            try:
                return cls(value)
            except ValueError:
                pass
        elif isinstance(value, str):
            try:
                return cls[value.strip().upper()]
            except KeyError:
                pass
        valid = ", ".join(level.name.lower() for level in cls)
        raise ValueError(f"unknown trust level {value!r}; valid levels: {valid}")

    @property
    def label(self) -> str:
        """The config name of the level."""
        return self.name.lower()
