"""Default plugin: a JSONL trace of every event of a run, written to ``[trace] path``.

The loop opens a trace for each run whose config names a path (:func:`begin`) and closes it when
the run ends (:func:`end`); the trace is found through a context variable, so concurrent runs of
different hosts in one process each write their own file. Events emitted outside a run (plugin
failures while the host starts) are not traced. Block the plugin
``toolwire._defaults.trace`` to turn tracing off whatever the config says.
"""

from __future__ import annotations

import contextvars
import json
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING

from .._markers import hookimpl

if TYPE_CHECKING:
    from ..config import TraceConfig
    from ..events import Event


class TraceFile:
    """One run's trace: the file is opened (appending) at the first event, one JSON object per
    line with the event's ``kind`` and a ``time`` (seconds since the epoch)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._file: IO[str] | None = None

    def write(self, event: Event) -> None:
        """Append one event."""
        from ..loop._codec import event_to_json

        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        record = {"time": round(time.time(), 6), **event_to_json(event)}
        self._file.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")

    def close(self) -> None:
        """Flush and close the file (a later event reopens it)."""
        file, self._file = self._file, None
        if file is not None:
            file.close()


_current: contextvars.ContextVar[TraceFile | None] = contextvars.ContextVar(
    "toolwire_trace", default=None
)


def begin(config: TraceConfig) -> contextvars.Token[TraceFile | None] | None:
    """Start tracing the run in the current context when ``config.path`` is set."""
    if not config.path:
        return None
    return _current.set(TraceFile(config.path))


def end(token: contextvars.Token[TraceFile | None] | None) -> None:
    """Close the current run's trace and restore the previous one."""
    if token is None:
        return
    trace = _current.get()
    _current.reset(token)
    if trace is not None:
        trace.close()


@hookimpl(trylast=True)
def toolwire_event(event: Event) -> None:
    """Append the event to the current run's trace, if there is one."""
    trace = _current.get()
    if trace is not None:
        trace.write(event)
