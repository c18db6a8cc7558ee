"""``BatchWorker``: a Ray actor holding one ``Host`` loaded from the batch's config."""

from __future__ import annotations

import os
import socket
from typing import Any

from toolwire import Config, Host
from toolwire.batch import BatchJob, JobSettings, run_job


class BatchWorker:
    """One worker of a batch: the host is loaded once, from the config the driver shipped, and
    runs jobs as they come (several at a time, up to the actor's ``max_concurrency``).

    The plugins the config enables must be installed on the worker's node; the ledger the
    config names must be the one the driver and every other worker use, so that a run this
    worker started can be resumed on another after this one died.
    """

    def __init__(self, config: Config, settings: JobSettings) -> None:
        self._host = Host.load(config)
        self._host.tools  # noqa: B018 - collected now: a tool that fails to register fails here
        failed = [f"{p.describe()}: {p.error}" for p in self._host.plugins if p.enabled and p.error]
        if failed:
            raise RuntimeError(f"plugins failed on the worker: {', '.join(failed)}")
        self._settings = settings
        self._identity = {"pid": os.getpid(), "node": socket.gethostname()}

    def identity(self) -> dict[str, Any]:
        """The worker's process id and node (a running worker answers at once)."""
        return dict(self._identity)

    async def run(self, job: BatchJob) -> dict[str, Any]:
        """The record of one job, run (or resumed from the ledger) on this worker's host."""
        record = await run_job(self._host, job, self._settings)
        record["worker"] = dict(self._identity)
        return record

    async def close(self) -> None:
        """Close the host (its ledger, sessions and plugins)."""
        await self._host.aclose()
