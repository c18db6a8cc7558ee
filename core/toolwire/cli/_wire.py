"""``toolwire run --show-wire``: every provider request body, printed to stderr as it is sent."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TextIO

import attrs

from .._markers import hookimpl
from ..events import RequestBody, RequestSent, RunFinished

if TYPE_CHECKING:
    from ..config import Config
    from ..events import Event


def with_request_bodies(config: Config) -> Config:
    """``config`` with request bodies captured (``[trace] request_bodies``), file or not."""
    return attrs.evolve(config, trace=attrs.evolve(config.trace, request_bodies=True))


class WirePrinter:
    """An observer printing each :class:`RequestBody` event: a header line, then the JSON.

    Registered as a plugin of the host the command runs, so it sees the bodies in the order the
    transport sends them; stdout stays the answer.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._requests: dict[str, str] = {}
        self._bodies: set[str] = set()

    @hookimpl
    def toolwire_event(self, event: Event) -> None:
        """Print a request body; say so at the end of a run whose adapter sent none over HTTP
        (the embedded model runs in-process)."""
        if isinstance(event, RequestSent):
            self._requests.setdefault(event.run_id, event.api)
            return
        if isinstance(event, RunFinished):
            api = self._requests.pop(event.run_id, None)
            if api is not None and event.run_id not in self._bodies:
                self._stream.write(
                    f"--> no request body to show: the {api} adapter sends no HTTP request "
                    "(it runs in this process)\n"
                )
            self._bodies.discard(event.run_id)
            return
        if not isinstance(event, RequestBody):
            return
        self._bodies.add(event.run_id)
        where = f"round {event.round}" if event.round is not None else "outside a round"
        mode = ", streamed" if event.stream else ""
        self._stream.write(f"--> POST {event.url} ({event.api}, {where}{mode})\n")
        self._stream.write(json.dumps(event.body, ensure_ascii=False, indent=2, default=str))
        self._stream.write("\n")
        self._stream.flush()
