"""``__repr__``, ``__eq__`` and ``__hash__`` for attrs records, read from the fields when called.

attrs writes and compiles the source of these methods for each class it makes, close to half of
the cost of making one, and a CLI start makes dozens before it prints anything. The records on
that path (the config sections, the tool model, the host's plugin and display records, the
settings classes of the plugins in this repository) take these instead, assigned in the class
body (attrs leaves a method the class defines alone)::

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash  # frozen records only: a mutable one is left unhashable

They do what attrs' own do: the same text (``Name(field=value, ...)``, the fields with
``repr=True``, a field's own ``repr`` callable used, ``...`` for a record met again inside
itself); equal when of the very same class with equal fields (those with ``eq=True``, through
their ``eq_key``); a hash of those fields. They are slower to call than attrs' own, which no
hot path notices: no record here is compared or hashed per tool call.
"""

from __future__ import annotations

import reprlib
from typing import Any

import attrs


@reprlib.recursive_repr()
def record_repr(self: attrs.AttrsInstance) -> str:
    """``Name(field=value, ...)``, as attrs' own ``__repr__`` writes it."""
    cls = type(self)
    shown: list[str] = []
    for field in attrs.fields(cls):
        if field.repr is False:
            continue
        value = getattr(self, field.name)
        text = field.repr(value) if callable(field.repr) else repr(value)
        shown.append(f"{field.name}={text}")
    return f"{cls.__qualname__.rsplit('>.', 1)[-1]}({', '.join(shown)})"


def _compared(record: attrs.AttrsInstance) -> tuple[Any, ...]:
    """The values of the fields that take part in equality, through their ``eq_key``."""
    values: list[Any] = []
    for field in attrs.fields(type(record)):
        if field.eq:
            value = getattr(record, field.name)
            values.append(field.eq_key(value) if field.eq_key is not None else value)
    return tuple(values)


def record_eq(self: attrs.AttrsInstance, other: object) -> bool:
    """Equal to a record of the very same class whose compared fields are equal."""
    if other.__class__ is not self.__class__:
        unknown: bool = NotImplemented  # Python then asks ``other``
        return unknown
    return bool(_compared(self) == _compared(other))


def record_hash(self: attrs.AttrsInstance) -> int:
    """The hash of the class and the compared fields (equal records hash alike)."""
    return hash((type(self), *_compared(self)))


__all__ = ["record_eq", "record_hash", "record_repr"]
