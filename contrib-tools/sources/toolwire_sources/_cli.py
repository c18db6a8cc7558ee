"""``toolwire sources index`` (and ``python -m toolwire_sources index``): build the index."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from toolwire.cli import inert

from ._index import IndexProgress, index_sources
from ._settings import SourcesSettings

_BAR = 30


class _ProgressBar:
    """A one-line progress bar on a terminal; on anything else, one line per source."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._tty = stream.isatty()
        self._source: str | None = None

    def __call__(self, progress: IndexProgress) -> None:
        if not self._tty:
            if progress.source != self._source:
                self._source = progress.source
                line = f"indexing {progress.source}: {progress.total} file(s)"
                print(inert(line, one_line=True), file=self._stream)
            return
        filled = _BAR * progress.done // max(progress.total, 1)
        path = inert(progress.path, one_line=True)
        name = path if len(path) <= 40 else "…" + path[-39:]
        self._stream.write(
            f"\r{inert(progress.source, one_line=True)} [{'#' * filled}{'.' * (_BAR - filled)}] "
            f"{progress.done}/{progress.total} {name:<40}"
        )
        if progress.done == progress.total:
            self._stream.write("\n")
        self._stream.flush()


def index_command(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run ``index [--config FILE] [--source ID ...]``; return the exit status.

    This is the whole command: a host CLI hooks it up as ``toolwire sources index`` by passing
    the arguments after ``sources``. Exit status 0 when every source was indexed, 1 when a
    source could not be (its folder is missing), 2 for a bad config or bad arguments.
    """
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    parser = argparse.ArgumentParser(
        prog="toolwire sources", description="Index the data sources of [tools.sources]."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    index = commands.add_parser("index", help="build or update the index, incrementally")
    index.add_argument("--config", help="the toolwire.toml to read (default: the usual search)")
    add_index_arguments(index)
    try:
        options = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    import toolwire

    try:
        config = toolwire.load_config(options.config)
        settings = SourcesSettings.coerce(config.tools.plugin_settings.get("sources"))
    except (toolwire.ConfigError, ValueError, TypeError) as exc:
        print(f"error: {exc}", file=err)
        return 2
    return index_and_report(settings, options.sources, out=out, err=err)


def add_index_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``index``: which sources to index (default: every configured one)."""
    parser.add_argument(
        "--source", action="append", dest="sources", metavar="ID", help="index only this source"
    )


def index_and_report(
    settings: SourcesSettings,
    sources: Sequence[str] | None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Index ``sources`` (None: all) of ``settings``, report each, and return the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    if not settings.sources:
        print(
            "error: no data source is configured; add one under [tools.sources.sources.<id>] "
            'with a path, for example [tools.sources.sources.notes] path = "~/notes"',
            file=err,
        )
        return 2
    try:
        report = index_sources(
            settings,
            only=tuple(sources) if sources else None,
            progress=_ProgressBar(err),
        )
    except ValueError as exc:
        print(f"error: {exc}", file=err)
        return 2
    for source in report.sources:
        print(inert(source.summary()), file=out)
        for name, reason in source.skipped:
            print(inert(f"  skipped {name}: {reason}", one_line=True), file=out)
        for name in source.cut:
            print(inert(f"  cut {name}: longer than max_document_chars", one_line=True), file=out)
    for dropped in report.dropped_sources:
        print(inert(f"{dropped}: removed from the index (no longer configured)"), file=out)
    print(f"index: {settings.index_file} ({report.seconds:.1f} s)", file=out)
    return 1 if any(s.error for s in report.sources) else 0


def main() -> None:
    """The ``toolwire-sources`` script and ``python -m toolwire_sources``."""
    raise SystemExit(index_command())
