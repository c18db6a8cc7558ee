"""Joining the Ray cluster once per process, with an error that says how to start one."""

from __future__ import annotations

import logging
import socket
from typing import Any

DEFAULT_ADDRESS = "auto"


class RayUnavailable(RuntimeError):
    """The Ray cluster cannot be joined; the message names the address and how to start one."""


def connect(address: str | None, *, log_to_driver: bool = False) -> bool:
    """Join the cluster at ``address`` (default ``auto``) unless this process already has.

    Inside a Ray worker (a batch worker running a remote tool) Ray is joined already.

    :returns: True when this call joined (the caller then leaves with ``ray.shutdown()``).
    :raises RayUnavailable: when no cluster answers at the address.
    """
    import ray

    if ray.is_initialized():
        return False
    target = address or DEFAULT_ADDRESS
    _check_reachable(target)
    try:
        ray.init(
            address=target,
            log_to_driver=log_to_driver,
            logging_level=logging.WARNING,
            configure_logging=True,
            include_dashboard=False,
        )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RayUnavailable(
            f"cannot join the Ray cluster at {target!r} ([tools.ray] address or --address): "
            f"{exc}; start one with `ray start --head` or give the address of a running one"
        ) from None
    return True


def describe_ray_error(exc: BaseException) -> str:
    """A one-line account of a Ray failure (the remote traceback's last line)."""
    text = str(exc).strip().splitlines()
    last: Any = text[-1] if text else type(exc).__name__
    return f"{type(exc).__name__}: {last}"


REACH_TIMEOUT = 5.0


def _check_reachable(target: str) -> None:
    """A ``host:port`` that accepts no connection fails now, not after Ray's minute of retries."""
    if target == DEFAULT_ADDRESS or "://" in target:
        return
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise RayUnavailable(
            f"[tools.ray] address (or --address) = {target!r}: expected 'auto', 'host:port' or "
            "'ray://host:port'"
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_TIMEOUT):
            pass
    except OSError as exc:
        raise RayUnavailable(
            f"cannot join the Ray cluster at {target!r} ([tools.ray] address or --address): "
            f"nothing answers there ({exc}); start one with `ray start --head` or give the "
            "address of a running one"
        ) from None
