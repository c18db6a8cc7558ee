"""Batch executors: the interface, the in-process default, and finding one by name."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from ._job import JobSettings, run_job, stored_runs

if TYPE_CHECKING:
    from ..host._host import Host
    from ._jobs import BatchJob

LOCAL_EXECUTOR = "local"


class BatchExecutorError(Exception):
    """An executor cannot run the batch (unknown name, unreachable cluster …); says why."""


@attrs.frozen(kw_only=True)
class BatchPlan:
    """What an executor is asked to do besides the jobs.

    :param concurrency: runs at a time (the local executor's tasks; a distributed executor's
        runs in flight over all its workers).
    :param job: approvals and the per-run deadline.
    :param address: where the executor's cluster is (``--address``; None = its default).
    :param workers: how many workers a distributed executor starts (None = its default).
    """

    concurrency: int
    job: JobSettings = attrs.field(factory=JobSettings)
    address: str | None = None
    workers: int | None = None


class BatchExecutor:
    """Runs the jobs of a batch and yields each job's record as its run ends.

    A plugin adds one by returning its class from ``toolwire_batch_executors``; ``toolwire
    batch --executor NAME`` picks it by :attr:`name`. The class is built as
    ``cls(host, plan)``, with the host loaded from the batch's config (the driver's host: a
    distributed executor ships ``host.config`` to its workers and reads its own settings with
    ``host.plugin_settings``). :meth:`results` must yield exactly one record per job, in the
    order runs end; records come from :func:`toolwire.batch.run_job` (or
    :func:`toolwire.batch.error_record` when a job could not be run at all).
    """

    name: ClassVar[str] = ""

    def __init__(self, host: Host, plan: BatchPlan) -> None:
        self.host = host
        self.plan = plan

    def results(self, jobs: Iterable[BatchJob]) -> AsyncIterator[dict[str, Any]]:
        """The record of every job, each as soon as its run ends."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release what the executor holds (workers, connections); called once, at the end."""


class LocalExecutor(BatchExecutor):
    """The default executor: runs on the driver's host, ``plan.concurrency`` runs at a time as
    tasks of one event loop, sharing the host's HTTP session and ledger."""

    name: ClassVar[str] = LOCAL_EXECUTOR

    async def results(self, jobs: Iterable[BatchJob]) -> AsyncIterator[dict[str, Any]]:
        jobs = list(jobs)
        held = stored_runs(self.host, jobs)
        pending = iter(jobs)
        running: set[asyncio.Task[dict[str, Any]]] = set()

        def start_next() -> None:
            job = next(pending, None)
            if job is not None:
                stored = held is None or job.run_id in held
                running.add(
                    asyncio.ensure_future(run_job(self.host, job, self.plan.job, stored=stored))
                )

        for _ in range(self.plan.concurrency):
            start_next()
        try:
            while running:
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    running.discard(task)
                    start_next()
                for task in sorted(done, key=lambda t: t.result()["line"]):
                    yield task.result()
        finally:
            for task in running:
                task.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)


def executor_classes(host: Host) -> dict[str, type[BatchExecutor]]:
    """Every executor by name: ``local``, then those of ``toolwire_batch_executors``.

    A plugin whose hook raises, returns something that is not a :class:`BatchExecutor`
    subclass, or repeats a name is reported on stderr and costs only itself.
    """
    classes: dict[str, type[BatchExecutor]] = {LOCAL_EXECUTOR: LocalExecutor}
    for impl in host.hook.toolwire_batch_executors.get_hookimpls():
        try:
            answer: Any = impl.function()
            produced = list(answer or ())
        except Exception as exc:
            print(
                f"toolwire: plugin {impl.plugin_name!r}: toolwire_batch_executors: "
                f"{type(exc).__name__}: {exc}",
                file=sys.stderr,
            )
            continue
        for cls in produced:
            if not (isinstance(cls, type) and issubclass(cls, BatchExecutor)) or not cls.name:
                print(
                    f"toolwire: plugin {impl.plugin_name!r}: toolwire_batch_executors returned "
                    f"{cls!r}, which is not a named toolwire.batch.BatchExecutor subclass",
                    file=sys.stderr,
                )
            elif cls.name in classes:
                print(
                    f"toolwire: plugin {impl.plugin_name!r}: the batch executor {cls.name!r} is "
                    "already registered; the first is kept",
                    file=sys.stderr,
                )
            else:
                classes[cls.name] = cls
    return classes


def create_executor(host: Host, name: str, plan: BatchPlan) -> BatchExecutor:
    """The executor ``name`` built for ``plan``.

    :raises BatchExecutorError: when no executor has that name (the message lists them).
    """
    classes: Mapping[str, type[BatchExecutor]] = executor_classes(host)
    cls = classes.get(name)
    if cls is None:
        known = ", ".join(sorted(classes))
        raise BatchExecutorError(
            f"no batch executor named {name!r}; available executors: {known} (a plugin such "
            "as toolwire-ray adds more once it is enabled in [plugins] enable)"
        )
    return cls(host, plan)
