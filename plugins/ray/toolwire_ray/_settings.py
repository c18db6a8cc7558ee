"""``[tools.ray]``: where the cluster is, how many workers, and which tools run as Ray tasks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


def _at_least(low: float) -> Any:
    def check(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and value < low:
            raise ValueError(f"{attribute.name} = {value!r}: expected a number of at least {low:g}")

    return check


@attrs.frozen(kw_only=True)
class RemoteResources:
    """What one call of a remote tool asks Ray for (``[tools.ray] remote.<tool>``).

    :ivar num_cpus: CPUs the task reserves (Ray's default, 1, when unset).
    :ivar num_gpus: GPUs the task reserves.
    :ivar memory: bytes of memory the task reserves.
    :ivar resources: custom resources by name (``{ "accelerator" = 1 }``).
    """

    num_cpus: float | None = attrs.field(default=None, validator=_at_least(0))
    num_gpus: float | None = attrs.field(default=None, validator=_at_least(0))
    memory: int | None = attrs.field(default=None, validator=_at_least(1))
    resources: Mapping[str, float] = attrs.field(factory=dict)

    def options(self) -> dict[str, Any]:
        """The keyword arguments of Ray's ``.options()`` for these resources."""
        out: dict[str, Any] = {}
        if self.num_cpus is not None:
            out["num_cpus"] = self.num_cpus
        if self.num_gpus is not None:
            out["num_gpus"] = self.num_gpus
        if self.memory is not None:
            out["memory"] = self.memory
        if self.resources:
            out["resources"] = dict(self.resources)
        return out


@attrs.frozen(kw_only=True)
class RaySettings:
    """``[tools.ray]`` of ``toolwire.toml``.

    :ivar address: the cluster to join: ``auto`` (the one ``ray start`` started on this
        machine), ``host:port``, or ``ray://host:10001`` (Ray Client). ``--address`` overrides.
    :ivar workers: worker actors of a batch (default: the cluster's CPUs, at least 1);
        ``--workers`` overrides.
    :ivar worker_num_cpus: CPUs each worker actor reserves. Workers mostly wait on model
        requests, so the default reserves none and leaves the CPUs to remote tools.
    :ivar max_attempts: how many workers a job may be started on before its death is
        recorded as the job's error (a worker that dies mid-run hands the run on).
    :ivar log_to_driver: show the workers' output on the driver's terminal.
    :ivar remote: tools that run as Ray tasks, with the resources each call reserves:
        ``remote = { heavy_tool = { num_cpus = 2 } }``.
    """

    address: str | None = None
    workers: int | None = attrs.field(default=None, validator=_at_least(1))
    worker_num_cpus: float = attrs.field(default=0.0, validator=_at_least(0))
    max_attempts: int = attrs.field(default=3, validator=_at_least(1))
    log_to_driver: bool = False
    remote: Mapping[str, RemoteResources] = attrs.field(factory=dict)
