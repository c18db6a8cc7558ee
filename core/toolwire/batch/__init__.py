"""``toolwire batch``: many conversations from a JSONL file, on this machine or an executor's.

:func:`run_batch` is the engine; :class:`BatchExecutor` the interface executors implement
(:class:`LocalExecutor` is the default; plugins add more through ``toolwire_batch_executors``);
:func:`run_job` runs one job on one host, resuming its run from the ledger after a crash.
"""

from ._engine import BatchInputError, BatchProgress, BatchSummary, run_batch
from ._executor import BatchExecutor, BatchExecutorError, BatchPlan, LocalExecutor
from ._job import JobSettings, error_record, run_job
from ._jobs import BadLine, BatchJob
from ._output import BatchOutputError

__all__ = [
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
    "LocalExecutor",
    "error_record",
    "run_batch",
    "run_job",
]
