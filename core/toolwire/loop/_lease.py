"""Who runs a call, and whether they still do: owners and leases of ``started`` ledger rows.

A process that commits a call's ``started`` row writes itself as the row's owner and a lease
(:data:`LEASE_SECONDS` from now), and keeps the lease alive while it holds the call: from that
commit until the call's ``settled`` (or ``deferred``) row is committed. One thread per process
(:class:`LeaseKeeper`) renews every held lease each :data:`HEARTBEAT_SECONDS`, on its own
schedule, so a tool that keeps the event loop busy does not let its lease lapse.

Whether the owner of a row still runs the call (:func:`owner_alive`):

- in this process, exactly: one of its ledgers holds the call or none does;
- on this machine (same boot and process namespace), by its process: a process that is gone
  (``kill -9``, a crash) has let its calls go at once, without waiting for the lease;
- elsewhere (another machine, another container), by the lease alone.

A call whose owner is alive is running; only one whose owner let it go, or whose lease lapsed,
is interrupted and may be taken over.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import weakref
from pathlib import Path
from typing import Final, Protocol

import attrs

LEASE_SECONDS: Final = 30.0
"""How long a ``started`` row's lease lasts without a heartbeat."""

HEARTBEAT_SECONDS: Final = 10.0
"""How often a process renews the leases it holds (a third of the lease: two renewals may fail
before another process may take a call over)."""

Key = tuple[str, int, str]
"""A held call: ``(run id, round, call id)`` (whichever ledger of this process holds it: at
worst a call of another ledger with the same key is taken for running)."""


@attrs.frozen
class Owner:
    """A process that can own calls: its host name (for people), its machine (boot and process
    namespace: where its pid means something), its pid and when it started (so a reused pid is
    not taken for it)."""

    host: str
    machine: str
    pid: int
    start: str

    def __str__(self) -> str:
        return f"{self.host}/{self.machine}/{self.pid}/{self.start}"

    def describe(self) -> str:
        """Where the owner runs, for people."""
        return f"pid {self.pid} on {self.host}"

    @classmethod
    def parse(cls, text: str | None) -> Owner | None:
        """The owner written in a row (None for a row without one, or one not understood)."""
        if not text:
            return None
        parts = text.rsplit("/", 3)
        if len(parts) != 4 or not parts[2].isdigit():
            return None
        return cls(parts[0], parts[1], int(parts[2]), parts[3])


_me: tuple[Owner, str] | None = None


def this_process() -> Owner:
    """This process as an owner (worked out again in a forked child)."""
    return (_me or _this())[0]


def this_owner() -> str:
    """This process as a row's owner is written (worked out once per process: it is asked for
    every call with side effects)."""
    return (_me or _this())[1]


def _this() -> tuple[Owner, str]:
    global _me
    pid = os.getpid()
    owner = Owner(socket.gethostname() or "localhost", _machine(), pid, _started(pid))
    _me = (owner, str(owner))
    return _me


def _forget_me() -> None:
    global _me
    _me = None


if hasattr(os, "register_at_fork"):  # a forked child is another owner (not on Windows)
    os.register_at_fork(after_in_child=_forget_me)


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


def _machine() -> str:
    """The boot and process namespace of this process ("" where unknown: no ``/proc``)."""
    boot = _read("/proc/sys/kernel/random/boot_id")
    if not boot:
        return ""
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return ""
    return f"{boot}.{namespace}"


def _started(pid: int) -> str:
    """When the process ``pid`` started, in clock ticks since boot ("" where unknown)."""
    stat = _read(f"/proc/{pid}/stat")
    fields = stat[stat.rfind(")") + 2 :].split() if stat else []
    return fields[19] if len(fields) > 19 else ""


def _process_alive(owner: Owner) -> bool:
    """Whether the process ``owner`` names still runs on this machine."""
    if owner.start:
        return _started(owner.pid) == owner.start
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, but belongs to someone else
        return True
    return True


def owner_alive(owner_text: str | None, lease: float | None, key: Key) -> bool:
    """Whether the owner of a ``started`` row still runs the call ``key`` (see the module)."""
    if lease is None or lease <= time.time():
        return False
    owner = Owner.parse(owner_text)
    if owner is None:
        return False
    me = this_process()
    if owner == me:
        return KEEPER.holds(key)
    if owner.machine and owner.machine == me.machine:
        return _process_alive(owner)
    return True


class Renewer(Protocol):
    """What the keeper renews: the leases one ledger holds, each ``heartbeat`` seconds."""

    heartbeat: float

    def renew(self) -> None: ...

    def holds(self, key: Key) -> bool: ...


class LeaseKeeper:
    """The thread that renews the leases this process holds, through each ledger that holds
    some (started on first use, one per process; it wakes as often as the most frequent
    heartbeat of the ledgers it watches)."""

    def __init__(self) -> None:
        self._renewers: weakref.WeakSet[Renewer] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()

    def watch(self, renewer: Renewer) -> None:
        """Renew ``renewer``'s leases from now on (until it is garbage-collected)."""
        with self._lock:
            if self._pid != os.getpid():  # a forked child: the thread stayed in the parent
                self._thread, self._pid = None, os.getpid()
                self._renewers = weakref.WeakSet()
            self._renewers.add(renewer)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="toolwire-lease-keeper", daemon=True
                )
                self._thread.start()

    def holds(self, key: Key) -> bool:
        """Whether a ledger of this process holds the call ``key``."""
        with self._lock:
            renewers = list(self._renewers) if self._pid == os.getpid() else []
        return any(renewer.holds(key) for renewer in renewers)

    def _run(self) -> None:
        while True:
            with self._lock:
                interval = min((r.heartbeat for r in self._renewers), default=HEARTBEAT_SECONDS)
            time.sleep(interval)
            with self._lock:
                renewers = list(self._renewers)
            for renewer in renewers:
                try:
                    renewer.renew()
                except Exception:  # a ledger that cannot renew now tries again next time
                    continue
            del renewers  # a ledger nobody uses any more may go while the thread sleeps


KEEPER = LeaseKeeper()
