"""The wording of config errors: :class:`ConfigError`, where a value is, and cattrs' structuring
errors turned into lines that name the file, the key path, the value and what would be valid."""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError


class ConfigError(Exception):
    """A config file that cannot be used; the message names the file, key path, value and fix."""

    def __init__(self, message: str, *, file: str | None = None, path: str | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.path = path


def where(file: str | None, path: str) -> str:
    """``file: $.key.path``, the start of every message about one value."""
    return f"{file or '<config>'}: {path}"


def refused(file: str | None, path: str, value: Any, expected: str) -> ConfigError:
    """The error for ``value`` at ``path`` of ``file``: ``… = value: expected …``."""
    return ConfigError(
        f"{where(file, path)} = {value!r}: expected {expected}", file=file, path=path
    )


LAYERED = "\x00layered"
"""The file name given to structuring merged layers; :func:`attributed` replaces it by the file
each message's key came from."""

_KEY_PARTS = r"\.([^.\[]+)|\[(\d+)\]"


def attributed(exc: ConfigError, origin_of: Callable[[str], str | None]) -> ConfigError:
    """``exc`` (raised for merged layers) with every message line naming the file its key came
    from."""

    def named(match: re.Match[str]) -> str:
        return f"{origin_of(match.group(1)) or '<defaults>'}: {match.group(1)}"

    # Compiled here, not at import: every command loads a config, and only errors need it.
    message = re.sub(re.escape(LAYERED) + r": (\$[^\s=:]*)", named, str(exc))
    message = message.replace(LAYERED, "<config>")
    file = origin_of(exc.path) if exc.path else None
    return ConfigError(message, file=file, path=exc.path)


# -- cattrs' errors ------------------------------------------------------------------------------

ABSENT = object()


def value_at(data: Any, path: str) -> Any:
    """The raw value at a ``$.a.b[2]`` path of the parsed TOML, or :data:`ABSENT`."""
    current = data
    for key, index in re.findall(_KEY_PARTS, path[1:]):
        try:
            current = current[int(index)] if index else current[key]
        except (KeyError, IndexError, TypeError):
            return ABSENT
    return current


def expected_for(cls: type, path: str) -> str | None:
    """What would be valid at ``path`` of an attrs class: the field's type or Literal choices."""
    keys = [k for k, _ in re.findall(_KEY_PARTS, path[1:]) if k]
    current: Any = cls
    field = None
    for key in keys:
        if field is not None and typing.get_origin(current) in (dict, Mapping):
            current = typing.get_args(current)[1]  # an entry of a table of settings
            continue
        if not attrs.has(current):
            return None
        field = attrs.fields_dict(current).get(key)
        if field is None:
            names = ", ".join(sorted(attrs.fields_dict(current)))
            return f"one of the keys {names}"
        current = field.type if not isinstance(field.type, str) else _resolve_type(current, key)
    return describe_type(current) if field is not None else None


def _resolve_type(cls: type, key: str) -> Any:
    return typing.get_type_hints(cls)[key]


def describe_type(tp: Any) -> str:
    """A type as a message says what would be valid (``an integer``, ``one of 'a', 'b'``)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if tp is bool:
        return "a boolean (true or false)"
    if tp is int:
        return "an integer"
    if tp is float:
        return "a number"
    if tp is str:
        return "a string"
    if origin in (tuple, list, set, frozenset):
        return "a list of " + describe_type(args[0]).removeprefix("a ").removeprefix("an ") + "s"
    if origin in (dict, Mapping) or tp is dict:
        return "a table"
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return " or ".join(describe_type(a) for a in rest) + " (or left out)"
    if attrs.has(tp):
        return "a table"
    return getattr(tp, "__name__", str(tp))


def structuring_error(
    exc: BaseException, data: Any, cls: type, *, file: str | None, base: str
) -> ConfigError:
    """cattrs' error for ``data`` (the table at ``base``) as one line per problem."""
    messages: list[str] = []
    first_path = base
    for rel_path, reason in _flatten(exc, "$"):
        full = base + rel_path[1:]
        if not messages:
            first_path = full
        value = value_at(data, rel_path)
        expected = expected_for(cls, rel_path)
        if reason.startswith("extra fields found"):
            continue
        if "not in literal" in reason:
            reason = "not a valid choice"
        shown = "" if value is ABSENT else f" = {value!r}"
        hint = f"; expected {expected}" if expected else ""
        messages.append(f"{where(file, full)}{shown}: {reason}{hint}")
    for rel_path, keys, valid in _extra_keys(exc, "$"):
        full = base + rel_path[1:]
        if not messages:
            first_path = full
        for key in keys:
            messages.append(
                f"{where(file, f'{full}.{key}')}: unknown key {key!r}; valid keys here: "
                + ", ".join(valid)
            )
    return ConfigError(
        "\n".join(messages) or f"{where(file, base)}: {exc}", file=file, path=first_path
    )


def _flatten(exc: BaseException, path: str) -> list[tuple[str, str]]:
    """Walk a cattrs exception group into (path, reason) pairs, skipping extra-key errors."""
    out: list[tuple[str, str]] = []
    if isinstance(exc, ClassValidationError | IterableValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            name = getattr(note, "name", None)
            idx = getattr(note, "index", None)
            # A table's entries are noted by key (str), a list's items by index.
            sub_path = (
                f"{path}.{name if name is not None else idx}"
                if not isinstance(idx, int)
                else f"{path}[{idx}]"
            )
            out.extend(_flatten(sub, sub_path))
        for sub in without:
            if not isinstance(sub, ForbiddenExtraKeysError):
                out.extend(_flatten(sub, path))
    elif isinstance(exc, ForbiddenExtraKeysError):
        pass
    elif isinstance(exc, KeyError):
        out.append((path, "required key is missing"))
    else:
        out.append((path, str(exc)))
    return out


def _extra_keys(exc: BaseException, path: str) -> list[tuple[str, list[str], list[str]]]:
    out: list[tuple[str, list[str], list[str]]] = []
    if isinstance(exc, ForbiddenExtraKeysError):
        valid = sorted(attrs.fields_dict(exc.cl)) if attrs.has(exc.cl) else []
        out.append((path, sorted(exc.extra_fields), valid))
    elif isinstance(exc, ClassValidationError | IterableValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            name = getattr(note, "name", None)
            idx = getattr(note, "index", None)
            out.extend(_extra_keys(sub, f"{path}.{name}" if name is not None else f"{path}[{idx}]"))
        for sub in without:
            out.extend(_extra_keys(sub, path))
    return out
