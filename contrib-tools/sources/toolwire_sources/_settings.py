"""``SourcesSettings``: the ``[tools.sources]`` section, with one ``SourceConfig`` per source."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from toolwire import TrustLevel

SECTION = "[tools.sources]"
SOURCE_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
DEFAULT_PATTERNS = ("*.txt", "*.text", "*.md", "*.markdown", "*.html", "*.htm", "*.pdf")


def _at_least(minimum: int, section: str = SECTION) -> Any:
    def check(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(
                f"{section} {attribute.name} = {value!r}: expected a whole number of at least "
                f"{minimum}"
            )

    return check


def _trust(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    try:
        TrustLevel.parse(value)
    except ValueError as exc:
        raise ValueError(f"{SECTION} source {attribute.name} = {value!r}: {exc}") from None


def _patterns(instance: object, attribute: attrs.Attribute[Any], value: tuple[str, ...]) -> None:
    if not value or any(not isinstance(p, str) or not p.strip() for p in value):
        raise ValueError(
            f"{SECTION} source {attribute.name} = {list(value)!r}: expected a non-empty list of "
            "file-name patterns such as ['*.md', '*.pdf']"
        )


def _not_blank(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not value.strip():
        raise ValueError(
            f"{SECTION} source {attribute.name} is empty: give the folder or file to search, "
            "such as '~/notes'"
        )


@attrs.frozen(kw_only=True)
class SourceConfig:
    """One data source (``[tools.sources.sources.<id>]``).

    :param path: the folder (``kind = "folder"``, searched recursively) or the one file
        (``kind = "file"``); ``~`` is expanded.
    :param kind: ``folder`` or ``file``.
    :param name: the name shown to the model (default: the id).
    :param description: what the source holds, for the model (shortened to 500 characters and
        filtered as untrusted content before it is shown).
    :param page_size: passages of this source per result page.
    :param min_trust: the provider trust level this source's passages need (``low``, ``medium``,
        ``high``, ``self_hosted``); a provider trusted less never sees the source.
    :param include: file-name patterns indexed in a folder.
    """

    path: str = attrs.field(validator=_not_blank)
    kind: Literal["folder", "file"] = attrs.field(
        default="folder", validator=attrs.validators.in_(("folder", "file"))
    )
    name: str | None = None
    description: str = ""
    page_size: int = attrs.field(default=5, validator=_at_least(1, f"{SECTION} source"))
    min_trust: str = attrs.field(default="medium", validator=_trust)
    include: tuple[str, ...] = attrs.field(default=DEFAULT_PATTERNS, validator=_patterns)

    @property
    def root(self) -> Path:
        """The configured path, ``~`` expanded."""
        return Path(os.path.expanduser(self.path))

    @property
    def trust(self) -> TrustLevel:
        """``min_trust`` as a level."""
        return TrustLevel.parse(self.min_trust)


def _default_index() -> str:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join("~", ".local", "share")
    return os.path.join(base, "toolwire", "sources.sqlite3")


def _check_ids(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    for source_id in value:
        if not isinstance(source_id, str) or not SOURCE_ID.fullmatch(source_id):
            raise ValueError(
                f"{SECTION} sources.{source_id}: a source id is 1 to 64 lowercase letters, digits, "
                "'-' or '_', starting with a letter or digit (such as 'notes' or 'work-docs')"
            )


@attrs.frozen(kw_only=True)
class SourcesSettings:
    """The settings of the ``sources`` plugin (``[tools.sources]`` in ``toolwire.toml``).

    :param sources: the data sources by id.
    :param index_path: the SQLite index of this host (``~`` expanded).
    :param retrieval: ``tool`` (default): offer ``semantic_search`` and let the model search when
        a question calls for it; ``classic``: search with every user message and add the
        passages to the request. ``tool`` falls back to classic whenever the tool cannot be
        offered.
    :param prompted: offer ``semantic_search`` to models that call tools through the prompted
        path (default True); False searches classically for them instead.
    :param max_pages: the deepest result page served.
    :param budget_chars: the characters of passages one search may return.
    :param classic_passages: passages added to a request in classic retrieval.
    :param passage_chars: the target length of an indexed passage.
    :param max_file_bytes: files larger than this are not indexed (and reported).
    :param max_document_chars: the text of one document indexed at most; the rest is cut (and
        reported).
    """

    sources: dict[str, SourceConfig] = attrs.field(factory=dict, validator=_check_ids)
    index_path: str = attrs.field(factory=_default_index, validator=_not_blank)
    retrieval: Literal["tool", "classic"] = attrs.field(
        default="tool", validator=attrs.validators.in_(("tool", "classic"))
    )
    prompted: bool = True
    max_pages: int = attrs.field(default=5, validator=_at_least(1))
    budget_chars: int = attrs.field(default=100_000, validator=_at_least(1000))
    classic_passages: int = attrs.field(default=8, validator=_at_least(1))
    passage_chars: int = attrs.field(default=1200, validator=_at_least(200))
    max_file_bytes: int = attrs.field(default=50 * 1024 * 1024, validator=_at_least(1024))
    max_document_chars: int = attrs.field(default=2_000_000, validator=_at_least(1000))

    @property
    def index_file(self) -> Path:
        """``index_path``, ``~`` expanded."""
        return Path(os.path.expanduser(self.index_path))

    @classmethod
    def coerce(cls, value: Any) -> SourcesSettings:
        """Settings from what the host passed: these settings, a plain mapping, or None.

        :raises ValueError: naming the key and value that do not fit, and what would.
        """
        if isinstance(value, SourcesSettings):
            return value
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise TypeError(f"{SECTION} must be a table; got {type(value).__name__}")
        import cattrs

        converter = cattrs.Converter(forbid_extra_keys=True)
        try:
            return converter.structure(dict(value), cls)
        except Exception as exc:
            details = "; ".join(
                cattrs.transform_error(exc, path="$.tools.sources", format_exception=_reason)
            )
            raise ValueError(f"{SECTION}: {details}") from None


def _reason(exc: BaseException, type_: Any) -> str:
    # A validator's own message already names the key, the value and what would be valid.
    if isinstance(exc, ValueError) and str(exc):
        return str(exc)
    from cattrs.v import format_exception

    return format_exception(exc, type_)
