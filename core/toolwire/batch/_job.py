"""One job of a batch on one host: run it, or resume its run from the ledger, into a record."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Container, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import attrs

from ..loop import (
    Approve,
    Decision,
    DeferredRequest,
    Deny,
    Run,
    RunLoop,
    ToolCallingLoop,
    UnknownRun,
)

if TYPE_CHECKING:
    from ..host._host import Host
    from ._jobs import BatchJob

Approvals: TypeAlias = Literal["defer", "approve", "deny"]
"""What a batch does with a call that needs approval: end the run ``deferred`` (the default),
approve it, or deny it. Calls interrupted by a crash are never decided by this: they stay
deferred (``reason="interrupted"``) until someone decides them."""

Status: TypeAlias = Literal["done", "deferred", "failed"]

_RESUMABLE = frozenset({"interrupted", "cancelled"})
"""Stored runs that go on: killed mid-run, or cancelled when the batch was stopped (Ctrl-C)."""

DEADLINE_GRACE_SECONDS = 5.0
"""How long past its deadline a run may take to stop on its own before it is cancelled."""


@attrs.frozen(kw_only=True)
class JobSettings:
    """How each job of a batch runs: approvals and the per-run deadline (None = none)."""

    approvals: Approvals = "defer"
    run_deadline_seconds: float | None = None


def status_of(stop_reason: str) -> Status:
    """How a run's stop reason counts in a batch: answered is done, deferred waits, else failed."""
    if stop_reason == "answered":
        return "done"
    if stop_reason == "deferred":
        return "deferred"
    return "failed"


def _approve(request: DeferredRequest) -> Decision:
    return Approve()


def _deny(request: DeferredRequest) -> Decision:
    return Deny("denied: the batch runs with --deny-all")


def stored_runs(host: Host, jobs: Sequence[BatchJob]) -> Container[str] | None:
    """The run ids of ``jobs`` the host's ledger holds, asked in one query before the first
    job starts (a job whose run is not among them starts without reading the ledger); None
    when a plugin's loop runs the jobs, whose :meth:`~toolwire.loop.RunLoop.load` each job
    asks."""
    loop = host.new_loop()
    if not isinstance(loop, ToolCallingLoop) or type(loop).load is not ToolCallingLoop.load:
        return None
    if loop.ledger is None:
        return frozenset()
    return loop.ledger.stored_runs([job.run_id for job in jobs])


async def run_job(
    host: Host, job: BatchJob, settings: JobSettings, *, stored: bool = True
) -> dict[str, Any]:
    """Run ``job`` on ``host`` and return its output record; never raises for the job's sake.

    When the ledger holds the job's run (the batch was killed or stopped while it ran), that
    run is resumed rather than started again: calls the ledger shows settled are not repeated,
    and a call of a non-idempotent tool that started and never settled is deferred for a
    decision. A run the ledger shows finished otherwise is returned as it is. Any error
    becomes a record with ``stop_reason = "error"``; a run past its deadline (plus a grace
    period) is cancelled. ``stored=False`` says the ledger was found not to hold the run
    (:func:`stored_runs`): it is not read again.
    """
    started = time.monotonic()
    loop = host.new_loop()
    approval = {"approve": _approve, "deny": _deny}.get(settings.approvals)
    resumed = False
    try:
        found = _stored_run(loop, job.run_id) if stored else None
        deadline = settings.run_deadline_seconds
        if found is not None and found.stop_reason not in _RESUMABLE:
            run = found
            resumed = True
        elif found is not None:
            resumed = True
            run = await _within(loop.resume(found, approval=approval), deadline)
        else:
            run = await _within(
                loop.run(job.prompt, run_id=job.run_id, approval=approval, **job.options),
                deadline,
            )
    except TimeoutError:
        last = loop.last_run
        detail = (
            f"the run did not stop within {DEADLINE_GRACE_SECONDS:g} s of its deadline of "
            f"{settings.run_deadline_seconds:g} s and was cancelled"
        )
        if last is not None:
            return record_of(
                job,
                attrs.evolve(last, stop_reason="deadline", detail=detail),
                host,
                started,
                resumed=resumed,
            )
        return error_record(job, "deadline", detail, started)
    except Exception as exc:
        return error_record(job, "error", f"{type(exc).__name__}: {exc}", started)
    return record_of(job, run, host, started, resumed=resumed)


async def _within(awaitable: Any, deadline: float | None) -> Run:
    if deadline is None:
        result: Run = await awaitable
        return result
    async with asyncio.timeout(deadline + DEADLINE_GRACE_SECONDS):
        result = await awaitable
    return result


def _stored_run(loop: RunLoop, run_id: str) -> Run | None:
    try:
        return loop.load(run_id)
    except UnknownRun:
        return None


def record_of(
    job: BatchJob, run: Run, host: Host, started: float, *, resumed: bool
) -> dict[str, Any]:
    """The output line of a job whose run ended: the run's JSON (no events, sensitive arguments
    redacted) with ``id`` the input id, ``run_id`` the run's, and the batch's own fields."""

    data = run.to_json(redact=host.tools, events=False)
    return {
        "id": job.id,
        "run_id": data.pop("id"),
        "status": status_of(run.stop_reason),
        "line": job.line,
        "resumed": resumed,
        "seconds": round(time.monotonic() - started, 6),
        **data,
    }


def error_record(job: BatchJob, stop_reason: str, detail: str, started: float) -> dict[str, Any]:
    """The output line of a job that ended without a run to show (the error as a record)."""
    return {
        "id": job.id,
        "run_id": job.run_id,
        "status": "failed",
        "line": job.line,
        "resumed": False,
        "seconds": round(time.monotonic() - started, 6),
        "stop_reason": stop_reason,
        "detail": detail,
        "text": "",
    }
