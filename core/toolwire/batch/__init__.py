"""``toolwire batch``: many conversations from a JSONL file, on this machine or an executor's.

:func:`run_batch` is the engine; :class:`BatchExecutor` the interface executors implement
(:class:`LocalExecutor` is the default; plugins add more through ``toolwire_batch_executors``);
:func:`run_job` runs one job on one host, resuming its run from the ledger after a crash.
"""

from ._engine import BatchInputError, BatchProgress, BatchSummary, run_batch
from ._executor import (
    LOCAL_EXECUTOR,
    BatchExecutor,
    BatchExecutorError,
    BatchPlan,
    LocalExecutor,
    create_executor,
    executor_classes,
)
from ._job import Approvals, JobSettings, error_record, run_job, status_of
from ._jobs import BadLine, BatchJob, batch_key, job_run_id, parse_job, read_jobs
from ._output import BatchOutputError, OutputState, OutputWriter, scan_output

__all__ = [
    "Approvals",
    "BadLine",
    "BatchExecutor",
    "BatchExecutorError",
    "BatchInputError",
    "BatchJob",
    "BatchOutputError",
    "BatchPlan",
    "BatchProgress",
    "BatchSummary",
    "JobSettings",
    "LOCAL_EXECUTOR",
    "LocalExecutor",
    "OutputState",
    "OutputWriter",
    "batch_key",
    "create_executor",
    "error_record",
    "executor_classes",
    "job_run_id",
    "parse_job",
    "read_jobs",
    "run_batch",
    "run_job",
    "scan_output",
    "status_of",
]
