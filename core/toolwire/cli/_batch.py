"""``toolwire batch INPUT.jsonl --out OUTPUT.jsonl``: arguments, progress line, summary.

The module is imported for ``toolwire --help``: it imports only what the parser needs.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, Any, TextIO

from ..usage import describe_usage

if TYPE_CHECKING:
    from ..batch import BadLine, BatchProgress, BatchSummary
    from ..config import Config

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

PLAIN_PROGRESS_EVERY = 1.0
"""Seconds between progress lines when stderr is not a terminal."""


def add_batch_parser(sub: Any) -> None:
    """Add ``batch`` to the ``toolwire`` sub-commands."""
    p = sub.add_parser(
        "batch",
        help="run many conversations from a JSONL file, resumable",
        description=(
            "Run every line of INPUT (a JSON object with id and prompt or messages) as a "
            "conversation and append one JSON line per run to --out as it ends. Running the "
            "same command again skips the ids already written and resumes crashed runs from "
            "the ledger."
        ),
    )
    p.add_argument("input", metavar="INPUT.jsonl", help="one conversation per line")
    p.add_argument("--out", required=True, metavar="OUTPUT.jsonl", help="where records go")
    p.add_argument("--concurrency", type=int, metavar="N", help="runs at a time (default: [batch])")
    p.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="per-run deadline (default: [batch] run_deadline_seconds)",
    )
    p.add_argument(
        "--executor", metavar="NAME", help="where runs go: local, or a plugin's (default: [batch])"
    )
    p.add_argument(
        "--address", metavar="ADDRESS", help="the executor's cluster (for ray: auto, ray://…)"
    )
    p.add_argument("--workers", type=int, metavar="N", help="workers of a distributed executor")
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--approve-all",
        action="store_true",
        help="approve calls needing approval, guarded side effects included ([policy] guarded)",
    )
    group.add_argument("--deny-all", action="store_true", help="deny calls needing approval")
    p.add_argument(
        "--unattended",
        action="store_true",
        help="nobody watches: refuse calls of tools not marked background_safe ([policy])",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")


def batch_config(config: Config, args: argparse.Namespace) -> Config:
    """The config with ``[batch]`` overridden by the arguments, validated like the file.

    The per-run deadline becomes ``[loop] deadline_seconds`` (the shorter one wins), so the loop
    itself stops a slow run with stop reason ``deadline``.

    :raises ConfigError: naming the argument, its value and what would be valid.
    """
    import attrs

    from ..config import ConfigError

    batch = config.batch
    changes: dict[str, Any] = {}
    if args.concurrency is not None:
        if not 1 <= args.concurrency <= 1024:
            raise ConfigError(
                f"--concurrency {args.concurrency}: expected an integer from 1 to 1024"
            )
        changes["concurrency"] = args.concurrency
    if args.deadline is not None:
        if not 0.001 <= args.deadline <= 7 * 24 * 3600:
            raise ConfigError(
                f"--deadline {args.deadline:g}: expected seconds from 0.001 to 604800"
            )
        changes["run_deadline_seconds"] = args.deadline
    if args.executor is not None:
        changes["executor"] = args.executor
    if args.workers is not None and not 1 <= args.workers <= 4096:
        raise ConfigError(f"--workers {args.workers}: expected an integer from 1 to 4096")
    batch = attrs.evolve(batch, **changes)
    if batch.executor == "local":
        for flag, value in (("--address", args.address), ("--workers", args.workers)):
            if value is not None:
                raise ConfigError(
                    f"{flag} {value}: the local executor runs in this process and takes no "
                    f"{flag}; add --executor NAME (such as ray) for a cluster"
                )
    loop = config.loop
    deadline = batch.run_deadline_seconds
    if deadline is not None and (loop.deadline_seconds is None or deadline < loop.deadline_seconds):
        loop = attrs.evolve(loop, deadline_seconds=deadline)
    policy = config.policy
    if getattr(args, "unattended", False):
        policy = attrs.evolve(policy, unattended=True)
    config = attrs.evolve(config, batch=batch, loop=loop, policy=policy)
    if getattr(args, "approve_all", False):
        from .._defaults.policy import approved_in_advance

        config = approved_in_advance(config)
    return config


def run_batch_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``toolwire batch``: exit 0 when every run answered, 1 when some failed, were deferred or
    input lines were refused, 2 when the setup is unusable."""
    import asyncio
    import contextlib

    from ..batch import (
        BatchExecutorError,
        BatchInputError,
        BatchOutputError,
        BatchPlan,
        JobSettings,
        run_batch,
    )
    from ..batch._job import Approvals
    from ..config import load_config
    from ..host._host import Host
    from ._collector import collector_for_runs

    config = batch_config(load_config(args.config), args)
    host = Host.load(config, surface="batch")
    for info in host.plugins:
        if info.enabled and info.error:
            print(f"toolwire: plugin {info.describe()} failed: {info.error}", file=err)
    if host.offer_notice is not None:
        print(host.offer_notice, file=err)
    if not config.ledger.enabled:
        err.write(
            "toolwire: warning: the ledger is disabled ([ledger] enabled = false): a run the "
            "batch was killed in will start again from the beginning\n"
        )
    approvals: Approvals = "approve" if args.approve_all else "deny" if args.deny_all else "defer"
    settings = JobSettings(
        approvals=approvals, run_deadline_seconds=config.batch.run_deadline_seconds
    )
    plan = BatchPlan(
        concurrency=config.batch.concurrency,
        job=settings,
        address=args.address,
        workers=args.workers,
    )
    progress = ProgressLine(err)

    def bad_line(bad: BadLine) -> None:
        progress.clear()
        err.write(f"toolwire: {args.input}:{bad.line}: skipped: {bad.error}\n")

    def started(counts: BatchProgress) -> None:
        settle()  # the input read and the adapter made: start-up is over
        progress.show(counts)

    async def main() -> BatchSummary:
        try:
            return await run_batch(
                host,
                args.input,
                args.out,
                plan=plan,
                executor=config.batch.executor,
                on_bad_line=bad_line,
                on_start=started,
                on_record=lambda record, counts: progress.show(counts),
            )
        finally:
            await host.aclose()

    try:
        # stdout is the summary's alone: whatever a library prints meanwhile (Ray reports dead
        # workers on stdout) goes to stderr with the progress.
        with contextlib.redirect_stdout(err), collector_for_runs() as settle:
            summary = asyncio.run(main())
    except (BatchInputError, BatchOutputError, BatchExecutorError) as exc:
        progress.clear()
        err.write(f"toolwire: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        progress.clear()
        err.write("toolwire: interrupted; run the same command again to go on\n")
        return EXIT_FAILED
    progress.finish()
    if summary.dropped_partial:
        err.write(f"toolwire: {args.out}: dropped a half-written last line from an earlier run\n")
    if args.json:
        out.write(json.dumps(summary.to_json(), ensure_ascii=False, indent=2) + "\n")
    else:
        out.write(describe_summary(summary) + "\n")
    return EXIT_OK if summary.ok else EXIT_FAILED


def describe_summary(summary: BatchSummary) -> str:
    """The summary for people: counts, rate and where the records are."""
    rate = summary.total / summary.seconds if summary.seconds > 0 else 0.0
    parts = [
        f"{summary.total} run(s) in {summary.seconds:.1f} s ({rate:.2f}/s) on {summary.executor}:",
        f"{summary.done} done, {summary.failed} failed, {summary.deferred} deferred",
    ]
    extra = []
    if summary.skipped:
        extra.append(f"{summary.skipped} already in the output")
    if summary.resumed:
        extra.append(f"{summary.resumed} resumed from the ledger")
    if summary.bad_lines:
        extra.append(f"{len(summary.bad_lines)} bad input line(s) skipped")
    text = " ".join(parts)
    if extra:
        text += "; " + ", ".join(extra)
    spent = describe_usage(summary.usage, summary.cost)
    if spent:
        text += f". Spent: {spent}"
    return f"{text}. Records: {summary.output}"


class ProgressLine:
    """The progress of a batch on stderr: one line rewritten in place on a terminal (a bar,
    done, failed, deferred, rate, ETA), plain lines at most once a second otherwise."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        isatty = getattr(stream, "isatty", None)
        self._tty = bool(isatty and isatty())
        self._drawn = False
        self._last_plain = 0.0
        self._counts: BatchProgress | None = None

    def show(self, counts: BatchProgress) -> None:
        """Draw the counts (on a terminal every time; otherwise when a second has passed)."""
        self._counts = counts
        if self._tty:
            self._stream.write("\r\x1b[2K" + render_progress(counts, bar=True))
            self._stream.flush()
            self._drawn = True
            return
        now = time.monotonic()
        if now - self._last_plain >= PLAIN_PROGRESS_EVERY:
            self._last_plain = now
            self._stream.write(render_progress(counts, bar=False) + "\n")
            self._stream.flush()

    def clear(self) -> None:
        """Erase the line on a terminal (before other output)."""
        if self._tty and self._drawn:
            self._stream.write("\r\x1b[2K")
            self._stream.flush()
            self._drawn = False

    def finish(self) -> None:
        """Leave the final counts on their own line."""
        if self._counts is None:
            return
        if self._tty:
            self._stream.write("\r\x1b[2K" + render_progress(self._counts, bar=True) + "\n")
        else:
            self._stream.write(render_progress(self._counts, bar=False) + "\n")
        self._stream.flush()


def render_progress(counts: BatchProgress, *, bar: bool) -> str:
    """One progress line: ``[####----] 12/40 done 10 failed 1 deferred 1 3.2/s ETA 0:09``."""
    total, finished = counts.total, counts.finished
    eta = counts.eta
    eta_text = "--:--" if eta is None else _clock(eta)
    text = (
        f"{finished}/{total} done {counts.done} failed {counts.failed} "
        f"deferred {counts.deferred} {counts.rate:.1f}/s ETA {eta_text}"
    )
    if not bar:
        return f"batch: {text}"
    width = 20
    filled = width if total == 0 else int(width * finished / total)
    return f"[{'#' * filled}{'-' * (width - filled)}] {text}"


def _clock(value: float) -> str:
    seconds = round(value)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
