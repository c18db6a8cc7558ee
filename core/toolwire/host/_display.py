"""What people read about a tool: its title, description and icon in their language."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

from .._fieldwise import record_eq, record_hash, record_repr

if TYPE_CHECKING:
    from ..config import I18nConfig
    from ..tools import Tool

_LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")


@attrs.frozen(kw_only=True)
class ToolDisplay:
    """A tool as shown to people (cards, listings): never what a model reads.

    ``locale`` is the language the texts are in when a translation was found, else None.
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    name: str
    title: str
    description: str
    icon: str | None = None
    locale: str | None = None


def environment_locale(environ: Mapping[str, str] = os.environ) -> str | None:
    """The locale of the environment (``LC_ALL``, ``LC_MESSAGES``, ``LANG``), as ``fr-fr``;
    None for ``C``/``POSIX`` or when none is set."""
    for variable in _LOCALE_VARIABLES:
        value = environ.get(variable, "")
        tag = value.split(".", 1)[0].split("@", 1)[0]
        if tag and tag not in ("C", "POSIX"):
            return tag.replace("_", "-").lower()
    return None


def tool_display(tool: Tool, i18n: I18nConfig, locale: str | None = None) -> ToolDisplay:
    """``tool`` as people see it in ``locale`` (default: ``[i18n] locale``, else the
    environment's): the ``[i18n.<locale>.<tool>]`` texts where they exist, trying ``pt-br`` then
    ``pt``, else the tool's own title (or name) and description."""
    wanted = (locale or i18n.locale or environment_locale() or "").replace("_", "-").lower()
    candidates = [wanted, wanted.split("-", 1)[0]] if wanted else []
    for tag in dict.fromkeys(candidates):
        texts = i18n.texts.get(tag, {}).get(tool.name)
        if texts is not None:
            return ToolDisplay(
                name=tool.name,
                title=texts.title or tool.title or tool.name,
                description=texts.description or tool.description,
                icon=tool.icon,
                locale=tag,
            )
    return ToolDisplay(
        name=tool.name,
        title=tool.title or tool.name,
        description=tool.description,
        icon=tool.icon,
    )
