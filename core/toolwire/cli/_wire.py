"""``toolwire run --show-wire``: every provider request body, printed to stderr as it is sent."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TextIO

import attrs

from .._markers import hookimpl
from ..events import RequestBody

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

    @hookimpl
    def toolwire_event(self, event: Event) -> None:
        """Print a request body; other events are not this observer's business."""
        if not isinstance(event, RequestBody):
            return
        where = f"round {event.round}" if event.round is not None else "outside a round"
        mode = ", streamed" if event.stream else ""
        self._stream.write(f"--> POST {event.url} ({event.api}, {where}{mode})\n")
        self._stream.write(json.dumps(event.body, ensure_ascii=False, indent=2, default=str))
        self._stream.write("\n")
        self._stream.flush()
