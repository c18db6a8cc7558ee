"""Structuring one parsed table into its typed section with cattrs: exact types (no ``"3"``
read as 3), unknown keys refused, every problem turned into a :class:`ConfigError`."""

from __future__ import annotations

import typing
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)

from ._errors import ConfigError, structuring_error, where

T = TypeVar("T")


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)

    def exact(kind: type | tuple[type, ...], convert: Any = None) -> Any:
        def hook(value: Any, _: type) -> Any:
            if isinstance(value, kind) and not (isinstance(value, bool) and bool not in _kinds):
                return convert(value) if convert else value
            raise TypeError(f"wrong type ({type(value).__name__})")

        _kinds = kind if isinstance(kind, tuple) else (kind,)
        return hook

    conv.register_structure_hook(bool, exact(bool))
    conv.register_structure_hook(int, exact(int))
    conv.register_structure_hook(float, exact((int, float), float))
    conv.register_structure_hook(str, exact(str))

    def string_list(value: Any, _: type) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise TypeError(f"wrong type ({type(value).__name__})")
        for item in value:
            if not isinstance(item, str):
                raise TypeError(f"wrong type of item {item!r} ({type(item).__name__})")
        return tuple(value)

    conv.register_structure_hook_func(lambda t: t == tuple[str, ...], string_list)

    # Any other list-like setting (`allowed_ports: tuple[int, ...]`) takes a TOML array only:
    # cattrs would iterate a string, reading "80" as the items '8' and '0'.
    def array_only(tp: Any) -> Any:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        element = args[0] if args else Any
        kind: Any = tuple if origin is tuple else origin

        def hook(value: Any, _: type) -> Any:
            if not isinstance(value, list):
                raise TypeError(f"wrong type ({type(value).__name__})")
            items: list[Any] = []
            errors: list[Exception] = []
            for index, item in enumerate(value):
                try:
                    items.append(conv.structure(item, element))
                except Exception as exc:
                    # The note is how a problem's path gets its index ($.allowed_ports[1]).
                    exc.__notes__ = [
                        *getattr(exc, "__notes__", []),
                        IterableValidationNote(f"@ index {index}", index, element),
                    ]
                    errors.append(exc)
            if errors:
                raise IterableValidationError(f"while structuring {tp!r}", errors, tp)
            return kind(items)

        return hook

    def is_array_setting(tp: Any) -> bool:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is tuple:
            return len(args) == 2 and args[1] is Ellipsis and tp != tuple[str, ...]
        return origin in (list, set, frozenset)

    conv.register_structure_hook_factory(is_array_setting, array_only)
    return conv


CONVERTER = _make_converter()
"""The converter every section of the config, and every plugin's settings, is structured with."""


def structure_section(
    data: Any,
    cls: type[T],
    *,
    file: str | None,
    path: str,
    converter: cattrs.Converter | None = None,
) -> T:
    """Structure one config table into ``cls``, turning cattrs errors into a ``ConfigError``.

    The message names the file, the key path (``$.loop.max_rounds``), the value that was found and
    what would be valid. Unknown keys are refused (they are almost always typos).
    """
    if converter is None and type(data) is dict and not data and all_defaults(cls):
        # A table left out or empty is the class's defaults: cattrs would generate and compile
        # a structuring function for the class only to call it without arguments.
        try:
            return cls()
        except Exception:  # reported below, as cattrs reports it
            pass
    conv = converter or CONVERTER
    try:
        return conv.structure(data, cls)
    except (ClassValidationError, IterableValidationError, ForbiddenExtraKeysError) as exc:
        raise structuring_error(exc, data, cls, file=file, base=path) from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(where(file, path) + f": {exc}", file=file, path=path) from None


def all_defaults(cls: type) -> bool:
    """True for an attrs class every argument of whose ``__init__`` has a default."""
    return attrs.has(cls) and all(
        not field.init or field.default is not attrs.NOTHING for field in attrs.fields(cls)
    )
