"""``run_batch``: read the input, skip what the output holds, run the rest, write each record."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..host._ready import ready_for_runs
from ..loop._codec import usage_from_json, usage_to_json
from ..usage import Usage
from ._executor import LOCAL_EXECUTOR, BatchExecutorError, BatchPlan, create_executor
from ._jobs import BadLine, BatchJob, batch_key, read_jobs
from ._output import BatchOutputError, OutputState, OutputWriter, scan_output

if TYPE_CHECKING:
    from ..host._host import Host


class BatchInputError(Exception):
    """The input file cannot be read; the message names it."""


@attrs.define
class BatchProgress:
    """Counts of a batch as it goes (what the progress line and the summary show).

    ``total`` is the jobs to run this time (valid lines not already in the output); ``skipped``
    the ids the output already held; ``bad`` the input lines refused.
    """

    total: int
    skipped: int
    bad: int
    done: int = 0
    failed: int = 0
    deferred: int = 0
    resumed: int = 0
    started: float = attrs.field(factory=time.monotonic)
    usage: Usage = attrs.field(factory=Usage)
    cost: float | None = None
    unpriced: int = 0

    def spent(self, record: dict[str, Any]) -> None:
        """Add what the run of ``record`` spent (its ``usage`` and ``cost``)."""
        usage = usage_from_json(record.get("usage"))
        if usage is not None:
            self.usage = self.usage + usage
        cost = record.get("cost")
        if isinstance(cost, int | float):
            self.cost = (self.cost or 0.0) + cost
        elif usage is not None and usage.reported:
            self.unpriced += 1

    @property
    def finished(self) -> int:
        """Runs that ended this time, whatever their status."""
        return self.done + self.failed + self.deferred

    @property
    def elapsed(self) -> float:
        """Seconds since the batch started."""
        return time.monotonic() - self.started

    @property
    def rate(self) -> float:
        """Runs ended per second so far."""
        elapsed = self.elapsed
        return self.finished / elapsed if elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds until the last run ends at the current rate (None before the first ends)."""
        rate = self.rate
        return (self.total - self.finished) / rate if rate > 0 else None


@attrs.frozen(kw_only=True)
class BatchSummary:
    """How a batch ended: its counts, the refused input lines and where the output is."""

    input: str
    output: str
    executor: str
    total: int
    done: int
    failed: int
    deferred: int
    skipped: int
    resumed: int
    bad_lines: tuple[BadLine, ...]
    dropped_partial: bool
    seconds: float
    usage: Usage = attrs.field(factory=Usage)
    cost: float | None = None
    """What the runs of this batch cost at ``[prices]`` (None when one of them had a model
    without a price)."""

    @property
    def ok(self) -> bool:
        """True when every run of this batch answered and no input line was refused."""
        return self.failed == 0 and self.deferred == 0 and not self.bad_lines

    def to_json(self) -> dict[str, Any]:
        """The summary as JSON (``toolwire batch --json``)."""
        return {
            "input": self.input,
            "output": self.output,
            "executor": self.executor,
            "total": self.total,
            "done": self.done,
            "failed": self.failed,
            "deferred": self.deferred,
            "skipped": self.skipped,
            "resumed": self.resumed,
            "bad_lines": [{"line": b.line, "error": b.error} for b in self.bad_lines],
            "dropped_partial_line": self.dropped_partial,
            "seconds": round(self.seconds, 3),
            "runs_per_second": round(self.total / self.seconds, 3) if self.seconds > 0 else None,
            "usage": usage_to_json(self.usage),
            "cost": self.cost,
        }


async def run_batch(
    host: Host,
    input: str | Path,
    output: str | Path,
    *,
    plan: BatchPlan,
    executor: str = "local",
    on_bad_line: Callable[[BadLine], None] | None = None,
    on_record: Callable[[dict[str, Any], BatchProgress], None] | None = None,
    on_start: Callable[[BatchProgress], None] | None = None,
) -> BatchSummary:
    """Run every job of ``input`` not yet in ``output`` with the executor named ``executor``.

    Each record is appended to ``output`` as its run ends. Ids the output already holds are
    skipped; a job whose run the ledger holds (the batch was killed while it ran) is resumed
    from there. A half-written last line of ``output`` is cut off first.

    :param on_bad_line: told of every refused input line (number and reason), before any run.
    :param on_start: told the counts once the input is read, before the first run.
    :param on_record: told of every record with the counts after it.
    :raises BatchInputError: when ``input`` cannot be read.
    :raises BatchOutputError: when ``output`` is not a batch output.
    :raises BatchExecutorError: when no executor has that name or it cannot start.
    """
    input_path, output_path = Path(input), Path(output)
    jobs, bad, skipped, state = await asyncio.to_thread(_prepare, input_path, output_path)
    if on_bad_line is not None:
        for item in bad:
            on_bad_line(item)
    if jobs and executor == LOCAL_EXECUTOR:
        await ready_for_runs(host)
    progress = BatchProgress(total=len(jobs), skipped=skipped, bad=len(bad))
    if on_start is not None:
        on_start(progress)
    runner = create_executor(host, executor, plan) if jobs else None
    try:
        writer = OutputWriter(output_path)
    except OSError as exc:
        if runner is not None:
            await runner.aclose()
        raise BatchOutputError(
            f"the output file {str(output_path)!r} cannot be written: {exc}"
        ) from None
    try:
        if runner is not None:
            async for record in runner.results(jobs):
                writer.write(record)
                status = record.get("status")
                if status == "done":
                    progress.done += 1
                elif status == "deferred":
                    progress.deferred += 1
                else:
                    progress.failed += 1
                if record.get("resumed"):
                    progress.resumed += 1
                progress.spent(record)
                if on_record is not None:
                    on_record(record, progress)
    finally:
        writer.close()
        if runner is not None:
            await runner.aclose()
    if progress.finished != progress.total:
        raise BatchExecutorError(
            f"the {executor!r} executor returned {progress.finished} record(s) for "
            f"{progress.total} job(s)"
        )
    return BatchSummary(
        input=str(input_path),
        output=str(output_path),
        executor=executor,
        total=progress.total,
        done=progress.done,
        failed=progress.failed,
        deferred=progress.deferred,
        skipped=skipped,
        resumed=progress.resumed,
        bad_lines=tuple(bad),
        dropped_partial=state.dropped_partial,
        seconds=progress.elapsed,
        usage=progress.usage,
        cost=None if progress.unpriced else progress.cost,
    )


def _prepare(
    input_path: Path, output_path: Path
) -> tuple[list[BatchJob], list[BadLine], int, OutputState]:
    """The jobs still to run, the refused lines, how many ids the output holds, its state."""
    try:
        text = input_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BatchInputError(f"the input file {str(input_path)!r} cannot be read: {exc}") from None
    state = scan_output(output_path, input=input_path)
    jobs: list[BatchJob] = []
    bad: list[BadLine] = []
    skipped = 0
    for item in read_jobs(text.splitlines(), batch_key(output_path)):
        if isinstance(item, BadLine):
            bad.append(item)
        elif item.id in state.ids:
            skipped += 1
        else:
            jobs.append(item)
    return jobs, bad, skipped, state
