"""Default plugin: a JSONL trace of every event of a run, written to ``[trace] path``.

Each host registers one :class:`Trace`, built from its ``[trace]`` section, under the name
``toolwire._defaults.trace``. The loop begins a trace for each run (:meth:`Trace.begin`) and ends
it when the run ends (:meth:`Trace.end`); events are written to the file of the run they name, so
concurrent runs, of one host or of several, each write their own. Events emitted outside a run
(plugin failures while the host starts) are not traced. Block the plugin
``toolwire._defaults.trace`` to turn tracing off whatever the config says.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING

from .._markers import hookimpl

if TYPE_CHECKING:
    from ..config import TraceConfig
    from ..events import Event

NAME = "toolwire._defaults.trace"
"""The name a host registers its :class:`Trace` under."""


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


class Trace:
    """The trace of one host's runs, per its ``[trace]`` section (no path: nothing is traced).

    :param config: the host's ``[trace]`` section.
    """

    def __init__(self, config: TraceConfig) -> None:
        self.path = config.path or None
        self._runs: dict[str, TraceFile] = {}

    def begin(self, run_id: str) -> str | None:
        """Start tracing the run ``run_id``; returns what :meth:`end` takes (None when there is
        no path, or the run is traced already)."""
        if self.path is None or run_id in self._runs:
            return None
        self._runs[run_id] = TraceFile(self.path)
        return run_id

    def end(self, token: str | None) -> None:
        """Close the trace :meth:`begin` started."""
        if token is None:
            return
        trace = self._runs.pop(token, None)
        if trace is not None:
            trace.close()

    @hookimpl(trylast=True)
    def toolwire_event(self, event: Event) -> None:
        """Append the event to its run's trace, if that run is traced."""
        if self._runs:
            trace = self._runs.get(event.run_id)
            if trace is not None:
                trace.write(event)
