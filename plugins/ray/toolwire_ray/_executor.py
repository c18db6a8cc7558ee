"""``RayExecutor``: a batch spread over worker actors, each run handed on when its worker dies."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import deque
from collections.abc import AsyncIterator, Iterable
from typing import Any, ClassVar

import attrs

from toolwire import Config
from toolwire.batch import BatchExecutor, BatchExecutorError, BatchJob, error_record
from toolwire.loop import ledger_path

from ._connect import RayUnavailable, connect, describe_ray_error
from ._settings import RaySettings

PLUGIN_NAME = "ray"
CLOSE_TIMEOUT = 10.0


def ray_settings(host: Any) -> RaySettings:
    """The host's ``[tools.ray]`` (defaults when the plugin was registered without them)."""
    settings = host.plugin_settings(PLUGIN_NAME)
    return settings if isinstance(settings, RaySettings) else RaySettings()


def shipped_config(config: Config) -> Config:
    """The config as workers get it: the ledger path made absolute as the driver sees it, so
    that every worker on this machine writes the one ledger the driver's batch resumes from (a
    PostgreSQL ``[ledger] url`` is shared as it is)."""
    ledger = config.ledger
    if ledger.enabled and not ledger.url:
        ledger = attrs.evolve(ledger, path=str(ledger_path(ledger).resolve()))
    return attrs.evolve(config, ledger=ledger)


@attrs.define
class _Worker:
    handle: Any
    identity: dict[str, Any]
    running: int = 0


class RayExecutor(BatchExecutor):
    """Runs a batch on worker actors of a Ray cluster (``--executor ray``).

    Each worker holds one :class:`toolwire.Host` loaded from the driver's config, shipped to
    it. At most ``plan.concurrency`` runs are in flight, spread evenly over the workers; each
    record comes back as its run ends. When a worker dies mid-run (its process killed, its node
    lost), the runs it held go to another worker (a new one takes the dead one's place), which
    resumes them from the shared ledger: calls that settled are not repeated, and a
    non-idempotent call that started and never settled waits for a decision. A job whose
    workers died ``max_attempts`` times is recorded as an error.
    """

    name: ClassVar[str] = "ray"

    def __init__(self, host: Any, plan: Any) -> None:
        super().__init__(host, plan)
        self.settings = ray_settings(host)
        self._joined = False
        self._workers: list[_Worker] = []
        self._actor_class: Any = None

    async def results(self, jobs: Iterable[BatchJob]) -> AsyncIterator[dict[str, Any]]:
        import ray

        try:
            self._joined = connect(
                self.plan.address or self.settings.address,
                log_to_driver=self.settings.log_to_driver,
            )
        except RayUnavailable as exc:
            raise BatchExecutorError(str(exc)) from None
        count = self.plan.workers or self.settings.workers or _cluster_cpus(ray)
        per_worker = max(1, math.ceil(self.plan.concurrency / count))
        config = shipped_config(self.host.config)
        self._workers = await asyncio.gather(
            *(self._start_worker(config, per_worker) for _ in range(count))
        )
        restarts_left = count * self.settings.max_attempts
        queue: deque[BatchJob] = deque(jobs)
        attempts: dict[str, int] = {}
        flight: dict[asyncio.Future[Any], tuple[_Worker, BatchJob]] = {}
        while queue or flight:
            if not self._workers and not flight:
                while queue:
                    job = queue.popleft()
                    yield error_record(
                        job, "error", "no Ray batch worker is left to run the job", 0.0
                    )
                break
            for worker in self._workers:
                while queue and worker.running < per_worker:
                    job = queue.popleft()
                    attempts[job.id] = attempts.get(job.id, 0) + 1
                    future = asyncio.wrap_future(worker.handle.run.remote(job).future())
                    flight[future] = (worker, job)
                    worker.running += 1
            done, _ = await asyncio.wait(flight, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                worker, job = flight.pop(future)
                worker.running -= 1
                try:
                    record: dict[str, Any] = future.result()
                except ray.exceptions.RayActorError as exc:
                    if worker in self._workers:
                        self._workers.remove(worker)
                        if restarts_left > 0:
                            restarts_left -= 1
                            await self._replace(config, per_worker)
                    if attempts[job.id] < self.settings.max_attempts and self._workers:
                        queue.appendleft(job)  # resumed from the ledger by the next worker
                        continue
                    record = error_record(
                        job,
                        "error",
                        f"the Ray worker running the job died {attempts[job.id]} time(s); "
                        f"last: {describe_ray_error(exc)}",
                        0.0,
                    )
                except ray.exceptions.RayError as exc:
                    record = error_record(job, "error", describe_ray_error(exc), 0.0)
                record["attempts"] = attempts[job.id]
                yield record

    async def _replace(self, config: Config, concurrency: int) -> None:
        """Start a worker in a dead one's place; when none starts, the others go on."""
        with contextlib.suppress(BatchExecutorError):
            self._workers.append(await self._start_worker(config, concurrency))

    async def _start_worker(self, config: Config, concurrency: int) -> _Worker:
        import ray

        from ._worker import BatchWorker

        if self._actor_class is None:
            self._actor_class = ray.remote(BatchWorker)
        handle = self._actor_class.options(
            num_cpus=self.settings.worker_num_cpus,
            max_concurrency=concurrency,
            max_restarts=0,
            scheduling_strategy="SPREAD",
        ).remote(config, self.plan.job)
        try:
            identity = await asyncio.wrap_future(handle.identity.remote().future())
        except ray.exceptions.RayError as exc:
            raise BatchExecutorError(
                f"a Ray batch worker could not start: {describe_ray_error(exc)} (the packages "
                "and plugins the config enables must be installed on every node)"
            ) from None
        return _Worker(handle=handle, identity=identity)

    async def aclose(self) -> None:
        import ray

        workers, self._workers = self._workers, []
        if workers:
            closing = [asyncio.wrap_future(w.handle.close.remote().future()) for w in workers]
            await asyncio.wait(closing, timeout=CLOSE_TIMEOUT)
            for future in closing:
                if future.done() and not future.cancelled():
                    future.exception()  # a worker that died on the way out is already gone
            for worker in workers:
                ray.kill(worker.handle, no_restart=True)
        if self._joined:
            self._joined = False
            ray.shutdown()


def _cluster_cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
