"""A config key declared beside its field: its help text, its bounds and its check.

A section class spells each key as ``name: type = setting(default, help=…, bounds=…)``;
:func:`check_section` is the one loop that checks every declared key of a structured section,
and the reference (``toolwire config reference``) is rendered from the same declarations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import attrs

from .._trust import TrustLevel
from ._errors import refused

Refusal = tuple[str, Any, str]
"""What a check finds wrong: the path below the key (``""``, ``"[2]"``, ``".name"``), the value
to show, and what would be valid."""

Check = Callable[[Any], Refusal | None]

_SETTING = "toolwire.setting"

WEEK = 7 * 24 * 3600.0
"""The longest any timeout or deadline may be, in seconds."""


class Setting(NamedTuple):
    """What one key declares: what it means (``help``, one line of the reference), the range
    a number must lie in (``bounds``, inclusive; ``None`` as the top: no upper bound), what the
    bounds count (``unit``: ``seconds``, ``bytes``; else an integer or a number), a ``check``
    of anything else, and how the reference spells its type (``kind``) and default
    (``default_text``) when the annotation and the default value do not say it well."""

    help: str
    bounds: tuple[float, float | None] | None = None
    unit: str | None = None
    check: Check | None = None
    kind: str | None = None
    default_text: str | None = None

    def expected(self) -> str:
        """The valid values of a bounded key, as an error says them."""
        assert self.bounds is not None
        low, high = self.bounds
        what = self.unit or ("an integer" if isinstance(low, int) else "a number")
        if high is None:
            return f"{what} of at least {number(low)}"
        return f"{what} from {number(low)} to {number(high)}"


def setting(
    default: Any = attrs.NOTHING,
    *,
    factory: Callable[[], Any] | None = None,
    help: str,
    bounds: tuple[float, float | None] | None = None,
    unit: str | None = None,
    check: Check | None = None,
    kind: str | None = None,
    default_text: str | None = None,
) -> Any:
    """An attrs field declaring one config key (see :class:`Setting`)."""
    declared = Setting(
        help=help,
        bounds=bounds,
        unit=unit,
        check=check,
        kind=kind,
        default_text=default_text,
    )
    if factory is not None:
        return attrs.field(factory=factory, metadata={_SETTING: declared})
    return attrs.field(default=default, metadata={_SETTING: declared})


def declared(field: attrs.Attribute[Any]) -> Setting | None:
    """The declaration of a field (None for a field that is not a config key)."""
    found: Setting | None = field.metadata.get(_SETTING)
    return found


def check_section(section: Any, base: str, file: str | None) -> None:
    """Refuse the first declared key of ``section`` (at key path ``base`` of ``file``) whose
    value is out of its bounds or fails its check.

    :raises ConfigError: naming the key, the value and what would be valid.
    """
    for field in attrs.fields(type(section)):
        spec = declared(field)
        if spec is None:
            continue
        value = getattr(section, field.name)
        if value is None:
            continue
        path = f"{base}.{field.name}"
        if spec.bounds is not None:
            low, high = spec.bounds
            if not low <= value <= (high if high is not None else value):
                optional = ", or leave it out" if field.default is None else ""
                raise refused(file, path, value, spec.expected() + optional)
        if spec.check is not None:
            problem = spec.check(value)
            if problem is not None:
                below, shown, expected = problem
                raise refused(file, path + below, shown, expected)


def each_item(problem: Callable[[Any], str | None]) -> Check:
    """A check of every item of a list: ``problem(item)`` says what would be valid, or None."""

    def check(items: Any) -> Refusal | None:
        for index, item in enumerate(items):
            expected = problem(item)
            if expected is not None:
                return f"[{index}]", item, expected
        return None

    return check


def each_entry(problem: Callable[[Any], str | None]) -> Check:
    """A check of every value of a table, reported at ``.<its key>``."""

    def check(table: Mapping[str, Any]) -> Refusal | None:
        for key, value in table.items():
            expected = problem(value)
            if expected is not None:
                return f".{key}", value, expected
        return None

    return check


def whole(problem: Callable[[Any], str | None]) -> Check:
    """A check of the value itself."""

    def check(value: Any) -> Refusal | None:
        expected = problem(value)
        return None if expected is None else ("", value, expected)

    return check


def number(value: float) -> str:
    """A bound as messages and the reference write it: ``1024``, ``0.001``, ``604800``."""
    if isinstance(value, int) or value.is_integer():
        return str(int(value))
    return f"{value:g}"


def trust_level_problem(level: Any) -> str | None:
    """What a trust level would be, when ``level`` is none of the scheme's (None when it is)."""
    try:
        TrustLevel.parse(level)
    except ValueError:
        return "one of " + ", ".join(TrustLevel.levels())
    return None
