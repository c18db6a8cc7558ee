"""The small sections: ``[plugins]``, ``[trust]``, ``[ledger]``, ``[trace]``, ``[artifacts]``,
``[batch]`` and ``[i18n]``."""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

from .._fieldwise import record_eq, record_hash, record_repr
from .._trust import DEFAULT_LEVELS
from ._fields import WEEK, Refusal, setting, whole
from ._secrets import without_password


@attrs.frozen(kw_only=True, slots=False)
class PluginsConfig:
    """``[plugins]``: which installed plugins are enabled (None = none enabled)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    enable: tuple[str, ...] = setting(
        (),
        kind="list of plugin names",
        help="plugins to import and register; a name that is not installed is an error",
    )


@attrs.frozen(kw_only=True, slots=False)
class TrustConfig:
    """``[trust]``: the confidence levels providers, tools and results are graded on, least
    trusted first. An organisation adds its own around and between ``low``, ``medium`` and
    ``high`` (``levels = ["public", "low", "medium", "internal", "high", "secret"]``); the
    data-security level ``self_hosted`` is a separate axis. One scheme per process: the last
    config loaded that sets it."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    levels: tuple[str, ...] = setting(
        DEFAULT_LEVELS,
        kind="list of level names",
        help="the confidence levels, least trusted first; keeps `low`, `medium`, `high` in that "
        "order and may add levels around and between them (see Trust)",
    )


def _postgres_url(url: str) -> Refusal | None:
    if re.match(r"postgres(ql)?://", url):
        return None
    return "", without_password(url), "a 'postgresql://…' URL (or leave it out for SQLite)"


@attrs.frozen(kw_only=True, slots=False)
class LedgerConfig:
    """``[ledger]``: the tool-effect ledger: a SQLite file (None path = under the user data
    dir), or a shared PostgreSQL database when ``url`` is set (``postgresql://…``; needs
    ``toolwire[postgres]``)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    enabled: bool = setting(
        True, help="record tool effects in SQLite (`started` before a tool runs, `settled` after)"
    )
    path: str | None = setting(
        None, default_text="`$XDG_DATA_HOME/toolwire/ledger.sqlite3`", help="where"
    )
    url: str | None = setting(
        None,
        check=_postgres_url,
        help="a shared ledger on PostgreSQL instead (`postgresql://…`, needs "
        "`toolwire[postgres]`); see [ledger.md](ledger.md)",
    )


@attrs.frozen(kw_only=True, slots=False)
class TraceConfig:
    """``[trace]``: a JSONL trace of every event (None path = no trace).

    ``request_bodies`` adds every provider request body to the events (a ``request_body``
    event per request, the API key and sensitive argument values redacted), so the trace shows
    exactly what was sent.
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    path: str | None = setting(None, help="write every event of every run as JSON lines")
    request_bodies: bool = setting(
        False,
        help="add every provider request body to the trace, as a `request_body` event after the "
        "round's `request_sent`: the JSON exactly as sent, with the API key and the values of "
        'sensitive arguments replaced by `"[redacted]"`. Needs `trace.path`; `toolwire run '
        "--show-wire` prints the same bodies to stderr without a trace",
    )


@attrs.frozen(kw_only=True, slots=False)
class ArtifactsConfig:
    """``[artifacts]``: a directory where the artifacts of tool results are written (None = kept
    in memory on the result only). Each result that has artifacts gets their references
    (``metadata["artifacts"]``: name, path, bytes, sha256), which the run record and the ledger
    keep; ``max_bytes`` caps one artifact (a larger one is referenced with an error, not
    written)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    dir: str | None = setting(
        None,
        kind="path",
        help="where the artifacts of tool results are written; none keeps them in memory on the "
        "result only",
    )
    max_bytes: int = setting(
        50_000_000,
        bounds=(1, None),
        help="the largest artifact written; a larger one is referenced with an error",
    )


def _executor_problem(name: str) -> str | None:
    if re.fullmatch(r"[a-z][a-z0-9_-]{0,63}", name):
        return None
    return "an executor name such as 'local' or 'ray'"


@attrs.frozen(kw_only=True, slots=False)
class BatchConfig:
    """``[batch]``: defaults of ``toolwire batch``.

    ``concurrency`` runs at a time; ``run_deadline_seconds`` bounds each run (None = only
    ``[loop] deadline_seconds``); ``executor`` names the executor (``local``, or one a plugin
    registers, such as ``ray``).
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    concurrency: int = setting(
        4,
        bounds=(1, 1024),
        help="runs at a time (over every worker of a distributed executor)",
    )
    run_deadline_seconds: float | None = setting(
        600.0,
        bounds=(0.001, WEEK),
        unit="seconds",
        help="each run's deadline (the shorter of this and `[loop] deadline_seconds`)",
    )
    executor: str = setting(
        "local",
        check=whole(_executor_problem),
        help="`local`, or an executor a plugin adds (`ray`)",
    )


@attrs.frozen(kw_only=True, slots=False)
class ToolTexts:
    """What people read about one tool in one language (``[i18n.<locale>.<tool>]``)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    title: str | None = setting(None, help="the tool's title as people read it")
    description: str | None = setting(None, help="the tool's description as people read it")


@attrs.frozen(kw_only=True, slots=False)
class I18nConfig:
    """``[i18n]``: the locale people read in, and per locale the titles and descriptions of
    tools as people see them (``[i18n.fr.read_web_page] title = "Lire une page"``). Never what a
    model reads. ``locale`` None means the environment's (``LC_ALL``, ``LC_MESSAGES``,
    ``LANG``)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    locale: str | None = setting(
        None,
        kind="a language tag (`fr`, `pt-BR`)",
        default_text="the environment's (`LC_ALL`, `LC_MESSAGES`, `LANG`)",
        help="the language people read tool titles and descriptions in",
    )
    texts: Mapping[str, Mapping[str, ToolTexts]] = attrs.field(factory=dict)
    """The ``[i18n.<locale>.<tool>]`` tables, by normalised locale and tool name."""
